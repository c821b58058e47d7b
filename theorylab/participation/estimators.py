r"""Availability estimators a server runs from the activity it observes (seed 001 Ch. 2 §2.4.2, L830-851; digest 001
§2.6, §2.8, §6 item 10).

**API.**  Pure functions over torch tensors of shape ``(replicas, clients)`` (the layout of a kernel's state, so a
kernel merges the dicts below into its own state and ``hold_empty`` treats them like any other entry):

=================================================  ==========================================================
``init_counts(replicas, clients, dtype, device)``  counters ``avail_*`` (all zero)
``update_counts(counts, active)``                  one round; ``active``: ``(R, m)`` bool
``pi_hat(counts, prior)``                          Beta-posterior mean of the activity :math:`\pi_i`
``transition_hat(counts, prior, variant)``         :math:`(\hat P_{00}, \hat P_{11})`
``lambda_hat(counts, prior, variant)``             :math:`\hat\lambda_i = \hat P_{00} + \hat P_{11} - 1`
``pi_hat_stationary(counts, prior)``               :math:`\hat\pi_i` as the stationary law of :math:`\hat{\mathbf P}_i`
``init_fedau(...)``                                FedAU's state (gap counters and completed intervals)
``update_fedau(state, active, cutoff)``            one round of FedAU's interval bookkeeping
``fedau_weights(state)``                           FedAU's weights :math:`\omega_i`
``observe(process, rounds, streams)``              the masks a server observes, round by round
=================================================  ==========================================================

**Beta-Bayesian activity (L846).**  After :math:`t` observations with :math:`c_i` of them active,
:math:`\hat\pi_i = (c_i + n_i)/(t + n_i + m_i)` for a Beta(:math:`n_i, m_i`) prior.

**Transitions (L848-851, digest §2.6).**  With :math:`n_{ab}` the observed :math:`a\to b` transitions and Beta
priors :math:`(a_0, b_0)`, :math:`(a_1, b_1)` on the probabilities of staying,

.. math::
    \hat P_{11} = \frac{n_{11}+a_1}{n_{10}+n_{11}+a_1+b_1},\qquad
    \hat P_{00} = \frac{n_{00}+a_0}{n_{00}+n_{01}+a_0+b_0},\qquad \hat\lambda = \hat P_{00}+\hat P_{11}-1,

the eigenvalue (A.218) of :math:`\hat{\mathbf P}`; it is consistent.  ``variant="repository"`` reproduces the
author's code (``arodio/CA-Fed``, ``BayesianActivityEstimator``): the same pseudo-counts but divided by the number of
observations :math:`t` instead of the visits to the source state, i.e. joint instead of conditional frequencies.
It converges to :math:`\pi P_{11} + (1-\pi)P_{00} - 1 = -2(1-\lambda)\pi(1-\pi)`, not to :math:`\lambda`
(digest §6 item 10; :func:`repository_lambda_limit`).  The repository draws its prior from the *true*
:math:`(\pi, \lambda)` with a horizon of 100 rounds (:func:`prior_from_parameters`) and counts a pseudo-transition
from "inactive" at the first round; we drop that one transition (an :math:`O(1/t)` difference).

**FedAU (Wang & Ji 2024; digest §2.8).**  Per client a gap counter and the completed intervals (their sum and
number); in round :math:`t` the weight :math:`\omega_i^t` is the mean completed interval (1 while there is none),
*then* an active client closes an interval of length gap + 1, and an inactive one whose gap reaches the cutoff
:math:`K` closes an interval of length :math:`K`.  Under Bernoulli(:math:`p`) activity the intervals are i.i.d.
:math:`\min(G, K)` with :math:`G\sim` Geometric(:math:`p`), so :math:`\omega_i \to E\min(G, K) = (1-(1-p)^K)/p`
(:func:`fedau_limit`): :math:`1/p` when :math:`K \gg 1/p`, biased low when :math:`1/p` is comparable to
:math:`K`.  This is the rule of ``theorylab.kernels.fedau`` (official code ``IBM/fedau``), written once here.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np
import torch

from theorylab.validation import integer

Counts = dict[str, torch.Tensor]
VARIANTS = ("conditional", "repository")
_COUNT_KEYS = ("avail_rounds", "avail_active", "avail_prev", "avail_n00", "avail_n01", "avail_n10", "avail_n11")


class BetaPrior(NamedTuple):
    """Pseudo-counts of a Beta prior: ``hits`` (active / stay) and ``misses``."""

    hits: float = 1.0
    misses: float = 1.0


class TransitionPrior(NamedTuple):
    """Beta priors on staying inactive (``stay0``) and staying active (``stay1``)."""

    stay0: BetaPrior = BetaPrior()
    stay1: BetaPrior = BetaPrior()


def _check_prior(prior: BetaPrior, name: str) -> BetaPrior:
    hits, misses = np.asarray(prior.hits, dtype=np.float64), np.asarray(prior.misses, dtype=np.float64)
    if not (np.all(hits >= 0) and np.all(misses >= 0) and np.all(hits + misses > 0)):
        raise ValueError(f"{name} pseudo-counts (hits, misses) must be >= 0 with a positive sum; got {tuple(prior)}")
    return prior


def prior_from_parameters(pi, lam, horizon: float = 100.0) -> tuple[BetaPrior, TransitionPrior]:
    """The repository's priors: ``horizon`` pseudo-rounds at the given ``(pi, lam)`` (arrays per client), i.e.
    activity ``(H pi, H (1-pi))`` and staying ``(H P_00, H (1-P_00))``, ``(H P_11, H (1-P_11))`` of (A.216)."""
    pi, lam = np.asarray(pi, dtype=np.float64), np.asarray(lam, dtype=np.float64)
    p00, p11 = 1 - (1 - lam) * pi, lam + (1 - lam) * pi
    h = float(horizon)
    return (BetaPrior(h * pi, h * (1 - pi)),
            TransitionPrior(BetaPrior(h * p00, h * (1 - p00)), BetaPrior(h * p11, h * (1 - p11))))


def observe(process, rounds: int, streams) -> Iterator[tuple[int, torch.Tensor]]:
    """``(t, mask)`` for ``rounds`` consecutive rounds of a participation ``process`` (``(R, m)`` bool masks drawn
    from ``streams``): the history the estimators are fed."""
    state = process.init(streams.replicas, streams)
    for t in range(rounds):
        state, mask = process.draw(state, t, streams)
        yield t, mask


def init_counts(replicas: int, clients: int, dtype=torch.float64, device="cpu") -> Counts:
    """Zero counters: observations, active rounds, previous state and the four transition counts ``n_ab``."""
    zeros = torch.zeros(replicas, clients, dtype=dtype, device=device)
    return {key: zeros.clone() for key in _COUNT_KEYS}


def update_counts(counts: Counts, active: torch.Tensor) -> Counts:
    """Counters after observing one more round ``active`` (``(R, m)`` bool); transitions count from round two."""
    a = active.to(counts["avail_rounds"].dtype)
    seen = (counts["avail_rounds"] > 0).to(a.dtype)
    prev = counts["avail_prev"]
    return {
        "avail_rounds": counts["avail_rounds"] + 1,
        "avail_active": counts["avail_active"] + a,
        "avail_prev": a,
        "avail_n00": counts["avail_n00"] + seen * (1 - prev) * (1 - a),
        "avail_n01": counts["avail_n01"] + seen * (1 - prev) * a,
        "avail_n10": counts["avail_n10"] + seen * prev * (1 - a),
        "avail_n11": counts["avail_n11"] + seen * prev * a,
    }


def pi_hat(counts: Counts, prior: BetaPrior = BetaPrior()) -> torch.Tensor:
    """:math:`\\hat\\pi_i = (c_i + n_i)/(t + n_i + m_i)` (L846)."""
    hits, misses = _check_prior(prior, "prior")
    return (counts["avail_active"] + _as(hits, counts)) / (counts["avail_rounds"] + _as(hits, counts)
                                                           + _as(misses, counts))


def transition_hat(counts: Counts, prior: TransitionPrior = TransitionPrior(),
                   variant: str = "conditional") -> tuple[torch.Tensor, torch.Tensor]:
    """:math:`(\\hat P_{00}, \\hat P_{11})`: conditional frequencies, or the repository's joint frequencies."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}")
    out = []
    for stay, leave, belief, name in (("avail_n00", "avail_n01", prior.stay0, "prior.stay0"),
                                      ("avail_n11", "avail_n10", prior.stay1, "prior.stay1")):
        hits, misses = (_as(v, counts) for v in _check_prior(belief, name))
        visits = counts[stay] + counts[leave] if variant == "conditional" else counts["avail_rounds"]
        out.append((counts[stay] + hits) / (visits + hits + misses))
    return out[0], out[1]


def lambda_hat(counts: Counts, prior: TransitionPrior = TransitionPrior(),
               variant: str = "conditional") -> torch.Tensor:
    """:math:`\\hat\\lambda_i = \\hat P_{00} + \\hat P_{11} - 1`, the second eigenvalue of
    :math:`\\hat{\\mathbf P}_i`."""
    p00, p11 = transition_hat(counts, prior, variant)
    return p00 + p11 - 1


def pi_hat_stationary(counts: Counts, prior: TransitionPrior = TransitionPrior()) -> torch.Tensor:
    """:math:`\\hat\\pi_i = (1-\\hat P_{00})/(2-\\hat P_{00}-\\hat P_{11})`, the stationary law of
    :math:`\\hat{\\mathbf P}_i` (A.217)."""
    p00, p11 = transition_hat(counts, prior)
    return (1 - p00) / (2 - p00 - p11)


def repository_lambda_limit(pi, lam) -> np.ndarray:
    """Limit of the repository's :math:`\\hat\\lambda`: :math:`\\pi P_{11} + (1-\\pi)P_{00} - 1 =
    -2(1-\\lambda)\\pi(1-\\pi)`."""
    pi, lam = np.asarray(pi, dtype=np.float64), np.asarray(lam, dtype=np.float64)
    return -2 * (1 - lam) * pi * (1 - pi)


def _as(value, counts: Counts) -> torch.Tensor:
    ref = counts["avail_rounds"]
    return torch.as_tensor(value, dtype=ref.dtype, device=ref.device)


# ----- FedAU -------------------------------------------------------------------------------------------------------
def init_fedau(replicas: int, clients: int, dtype=torch.float64, device="cpu") -> Counts:
    """FedAU's counters: current gap, sum and number of completed intervals."""
    zeros = torch.zeros(replicas, clients, dtype=dtype, device=device)
    return {"fedau_gap": zeros, "fedau_sum": zeros.clone(), "fedau_num": zeros.clone()}


def check_cutoff(cutoff) -> int:
    """FedAU's cutoff :math:`K` as an ``int`` in [1, 2^62] (a counter of int64 rounds)."""
    return integer("cutoff K", cutoff, 1, 2**62)


def fedau_weights(state: Counts) -> torch.Tensor:
    """:math:`\\omega_i^t`: the mean completed interval, 1 while none is complete (read before :func:`update_fedau`)."""
    num = state["fedau_num"]
    return torch.where(num > 0, state["fedau_sum"] / num.clamp(min=1.0), torch.ones_like(num))


def update_fedau(state: Counts, active: torch.Tensor, cutoff: int) -> Counts:
    """Counters after round ``active``: an active client closes gap + 1, an inactive one reaching ``cutoff``
    closes K."""
    K = check_cutoff(cutoff)
    gap, total, num = state["fedau_gap"], state["fedau_sum"], state["fedau_num"]
    grown = gap + 1
    closed = active | (~active & (grown >= K))
    return {"fedau_gap": torch.where(closed, torch.zeros_like(gap), grown),
            "fedau_sum": total + torch.where(closed, grown, torch.zeros_like(gap)),
            "fedau_num": num + closed.to(gap.dtype)}


def fedau_limit(p, cutoff: int) -> np.ndarray:
    """:math:`E\\min(G, K) = (1-(1-p)^K)/p`: FedAU's limit under Bernoulli(:math:`p`) activity."""
    p = np.asarray(p, dtype=np.float64)
    if np.any((p <= 0) | (p > 1)):
        raise ValueError(f"p must lie in (0, 1]; got {p}")
    return (1 - (1 - p) ** check_cutoff(cutoff)) / p
