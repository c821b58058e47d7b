r"""Two-state Markov availability per client, parametrised by :math:`(\pi_i, \lambda_i)`.

Seed 001 (thesis) App. F.C, eq. (A.216)–(A.218); digest 001 §3.1–3.3.  States 0 (inactive)
and 1 (active); client :math:`i`'s transition matrix is

.. math::
    P_i = \begin{pmatrix} 1-(1-\lambda_i)\pi_i & (1-\lambda_i)\pi_i \\
                          (1-\lambda_i)(1-\pi_i) & \lambda_i + (1-\lambda_i)\pi_i \end{pmatrix},

with stationary law :math:`(1-\pi_i, \pi_i)` and eigenvalues :math:`\{1, \lambda_i\}`.  It is a
stochastic matrix iff :math:`\max\{1-1/\pi_i,\,1-1/(1-\pi_i)\} \le \lambda_i < 1`.  Clients are
independent; the joint chain is :math:`\bigotimes_i P_i` on :math:`2^m` states, whose second
largest eigenvalue modulus is :math:`\bar\lambda_2 = \max_i|\lambda_i|` (A.214), and the
thesis' mixing parameter is :math:`\lambda(P) = (\bar\lambda_2+1)/2` (A.209).

Exact two-state facts: :math:`P(i\in\mathcal A^t) = \pi_i + \lambda_i^t(p_i^0-\pi_i)`;
the worst-start total-variation distance is :math:`d_i(t)=|\lambda_i|^t\max(\pi_i,1-\pi_i)`,
so :math:`t_{\rm mix}(\varepsilon) = \lceil \ln(\varepsilon/\max(\pi_i,1-\pi_i)) / \ln|\lambda_i| \rceil`.
:math:`\lambda_i = 0` gives Bernoulli(:math:`\pi_i`) rounds.  By default the chain starts in its
stationary law (the thesis' Assumption 1).  The analytics live in
:mod:`theorylab.participation.markov_analytics`.

``clustered_markov`` is the thesis' spatially correlated setting (Ch. 2 §2.5.2, L885 and L899; digest 001 §3.3): the
clients of a cluster share one two-state chain (all active or all inactive together) and clusters are independent,
so the joint chain is the product over clusters and :math:`\bar\lambda_2 = \max_c|\lambda_c|`.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.participation.base import bernoulli_mask, check_probabilities
from theorylab.participation.markov_analytics import (check_two_state, mixing_time, product_chain, two_state_matrix,
                                                      two_state_mixing_time)
from theorylab.registry import register
from theorylab.validation import floats

MAX_PRODUCT_CLIENTS = 12


class TwoStateMarkov:
    memoryless = False

    def __init__(self, pi, lam, start=None):
        self.pi = check_probabilities("pi", pi, open_low=True, open_high=True)
        self.lam = floats("lam", lam)
        self.n_clients = len(self.pi)
        if self.lam.shape != self.pi.shape:
            raise ValueError(f"lam must have one entry per client, as pi ({self.n_clients}); got {self.lam.shape}")
        check_two_state(self.pi, self.lam)
        self.start = self.pi.copy() if start is None else check_probabilities("start", start)
        if self.start.shape != self.pi.shape:
            raise ValueError(f"start must have one entry per client ({self.n_clients})")

    # ----- law -------------------------------------------------------------------------------
    def transition_matrices(self) -> np.ndarray:
        """``(m, 2, 2)`` matrices :math:`P_i` of (A.216)."""
        return two_state_matrix(self.pi, self.lam)

    def probabilities(self, t: int) -> np.ndarray:
        """:math:`\\pi_i + \\lambda_i^t(p^0_i - \\pi_i)`."""
        return self.pi + self.lam ** t * (self.start - self.pi)

    @property
    def stationary(self) -> np.ndarray:
        """Per-client stationary activity :math:`\\pi_i` (the joint law is the product)."""
        return self.pi

    @property
    def lambda_bar(self) -> float:
        """:math:`\\bar\\lambda_2(\\bigotimes_i P_i) = \\max_i |\\lambda_i|` (A.214)."""
        return float(np.abs(self.lam).max())

    @property
    def lambda_thesis(self) -> float:
        """The thesis' :math:`\\lambda(P) = (\\bar\\lambda_2 + 1)/2` (A.209)."""
        return (self.lambda_bar + 1) / 2

    def relaxation_times(self) -> np.ndarray:
        """:math:`t_{\\rm rel} = 1/(1-|\\lambda_i|)` per client."""
        with np.errstate(divide="ignore"):
            return 1.0 / (1.0 - np.abs(self.lam))

    def mixing_times(self, eps: float = 0.25) -> np.ndarray:
        """Exact :math:`t_{\\rm mix}(\\varepsilon)` of each client's chain (``inf`` for a periodic chain)."""
        return two_state_mixing_time(self.pi, self.lam, eps)

    def product_chain(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint transition matrix :math:`\\bigotimes_i P_i` and its stationary law (``m <= 12``)."""
        if self.n_clients > MAX_PRODUCT_CLIENTS:
            raise ValueError(f"the joint chain has 2^m states; limited to m <= {MAX_PRODUCT_CLIENTS} "
                             f"(got m = {self.n_clients})")
        return product_chain(self.transition_matrices(), [[1 - p, p] for p in self.pi])

    def product_mixing_time(self, eps: float = 0.25, max_rounds: int = 100_000) -> int:
        """Exact worst-start :math:`t_{\\rm mix}(\\varepsilon)` of the joint chain, by powering its matrix."""
        P, rho = self.product_chain()
        return mixing_time(P, eps, rho, max_rounds)

    # ----- sampling --------------------------------------------------------------------------
    def init(self, replicas, streams):
        return None

    def draw(self, state, t, streams):
        if state is None:
            mask = bernoulli_mask(self.start, streams)
        else:
            u = streams.uniform("participation", (self.n_clients,))
            lam = torch.as_tensor(self.lam, device=u.device, dtype=u.dtype)
            pi = torch.as_tensor(self.pi, device=u.device, dtype=u.dtype)
            mask = u < (1 - lam) * pi + lam * state.to(u.dtype)
        return mask, mask


@register("participation", "markov")
def markov(pi, lam, start=None) -> TwoStateMarkov:
    """Independent two-state Markov chains with stationary availability pi_i and eigenvalue lam_i."""
    return TwoStateMarkov(pi, lam, start)


class ClusteredMarkov:
    """Clients in clusters sharing one two-state chain per cluster (``clusters[i]``: client i's cluster)."""

    memoryless = False

    def __init__(self, clusters, pi, lam, start=None):
        self.chain = TwoStateMarkov(pi, lam, start)
        members = np.atleast_1d(np.asarray(clusters))
        n = self.chain.n_clients
        if members.ndim != 1 or members.size == 0 or not np.issubdtype(members.dtype, np.integer):
            raise ValueError(f"clusters must be a non-empty 1-d sequence of integer cluster indices; got {clusters!r}")
        if members.min() < 0 or members.max() >= n or len(np.unique(members)) != n:
            raise ValueError(f"clusters must use every cluster index in [0, {n - 1}] (one per entry of pi and lam); "
                             f"got indices {sorted(set(members.tolist()))}")
        self.members = members
        self.n_clients = len(members)

    def probabilities(self, t: int) -> np.ndarray:
        return self.chain.probabilities(t)[self.members]

    @property
    def stationary(self) -> np.ndarray:
        return self.chain.pi[self.members]

    @property
    def lambda_bar(self) -> float:
        """:math:`\\bar\\lambda_2` of the joint chain over clusters: :math:`\\max_c|\\lambda_c|` (A.214)."""
        return self.chain.lambda_bar

    @property
    def lambda_thesis(self) -> float:
        return self.chain.lambda_thesis

    def product_chain(self) -> tuple[np.ndarray, np.ndarray]:
        """The joint chain of the clusters (the clients' states are a function of it)."""
        return self.chain.product_chain()

    def init(self, replicas, streams):
        return self.chain.init(replicas, streams)

    def draw(self, state, t, streams):
        state, mask = self.chain.draw(state, t, streams)
        return state, mask[:, torch.as_tensor(self.members, device=mask.device)]


@register("participation", "clustered_markov")
def clustered_markov(clusters, pi, lam, start=None) -> ClusteredMarkov:
    """Spatially correlated two-state chains: one chain (pi_c, lam_c) per cluster, shared by its clients."""
    return ClusteredMarkov(clusters, pi, lam, start)


def thesis_spatial_setting(clients_per_cluster: int = 10) -> dict:
    """The thesis' spatial-correlation experiment (Ch. 2 §2.5.2, L885 and L899): 10 clusters, clusters 0-4 with
    pi_c = 0.9, lam_c = 0 and clusters 5-9 with pi_c = 0.1, lam_c = c/10; parameters of ``clustered_markov``."""
    clusters = np.repeat(np.arange(10), clients_per_cluster)
    return {"clusters": clusters.tolist(), "pi": [0.9] * 5 + [0.1] * 5,
            "lam": [0.0] * 5 + [c / 10 for c in range(5, 10)]}
