r"""Seeded random topologies: Erdős–Rényi graphs with Metropolis–Hastings weights, and Sinkhorn-balanced dense
matrices (seed 002 §6 "random" and "unbalanced fully-connected" topologies, footnote 6; digest 002 §1.8).

The paper gives no generator for either; these are the digest's reconstructions (labelled [UNCLEAR] there).

* Erdős–Rényi :math:`G(n,p)`, redrawn until connected (a :math:`p` so small that even :math:`n-1` edges are
  unlikely in :data:`MAX_REDRAWS` draws is refused at once, by the binomial tail), with Metropolis–Hastings weights
  :math:`W_{ij} = 1/(1+\max(d_i,d_j))` on edges and :math:`W_{ii} = 1-\sum_{j\ne i}W_{ij}`.  :math:`W` is symmetric,
  hence doubly stochastic, and :math:`W_{ii}\ge 1/(1+d_i) > 0`, so a connected graph gives :math:`\rho<1`.
* Sinkhorn: a matrix of i.i.d. Uniform(0, 1) entries, rows and columns normalised alternately until every row and
  column sum is within 1e-13 of 1.  All entries stay positive, so :math:`\rho<1`; :math:`W` is not symmetric, and
  :math:`\rho` is its largest singular value on :math:`\mathbf 1^\perp`.

``seed`` is an int or a tuple of ints (``numpy.random.default_rng``), so a cluster can derive its own stream.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import connected_components
from scipy.stats import binom

from theorylab.registry import register
from theorylab.topology.matrix import MAX_CLIENTS, STOCHASTIC_ATOL, Topology, make_topology
from theorylab.validation import integer, real

MAX_REDRAWS = 1000
SINKHORN_TOL = 1e-13
SINKHORN_MAX_ITER = 100_000


def _generator(seed) -> np.random.Generator:
    parts = seed if isinstance(seed, (tuple, list)) else (seed,)
    if not parts or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0 for s in parts):
        raise ValueError(f"seed must be a non-negative integer or a tuple of them; got {seed!r}")
    return np.random.default_rng([int(s) for s in parts])


def metropolis_hastings(adjacency: np.ndarray) -> np.ndarray:
    """Metropolis–Hastings weights of a symmetric 0/1 adjacency matrix without self-loops."""
    A = np.asarray(adjacency, dtype=bool)
    degree = A.sum(1)
    W = np.where(A, 1.0 / (1.0 + np.maximum(degree[:, None], degree[None, :])), 0.0)
    np.fill_diagonal(W, 1.0 - W.sum(1))
    return W


@register("topology", "erdos_renyi")
def erdos_renyi(n: int, p: float, seed: int | tuple = 0) -> Topology:
    """Erdos-Renyi G(n, p) redrawn until connected, Metropolis-Hastings weights (a stand-in for the paper's "random")."""
    n = integer("n", n, 2, MAX_CLIENTS)
    p = real("p", p, 0.0, 1.0, open_low=True)
    rng = _generator(seed)
    enough = binom.sf(n - 2, n * (n - 1) // 2, p)  # P(a draw has the n - 1 edges any connected graph needs)
    if MAX_REDRAWS * enough < 1e-6:
        raise ValueError(f"p = {p:g} is too small for a connected graph on n = {n} clients: a draw has the n - 1 = "
                         f"{n - 1} edges a connected graph needs with probability {enough:.2g}; G(n, p) is connected "
                         f"with high probability for p above ln(n)/n = {np.log(n) / n:.3g}")
    for _ in range(MAX_REDRAWS):
        upper = np.triu(rng.random((n, n)) < p, k=1)
        A = upper | upper.T
        if connected_components(A, directed=False)[0] == 1:
            return make_topology(f"erdos_renyi({n}, p={p:.3g}, seed={seed})", metropolis_hastings(A))
    raise ValueError(f"p = {p} gave no connected graph on n = {n} clients in {MAX_REDRAWS} draws; raise p")


def sinkhorn(A: np.ndarray, tol: float = SINKHORN_TOL) -> np.ndarray:
    """Alternate row and column normalisation of a positive matrix until all sums are within ``tol`` of 1."""
    W = np.asarray(A, dtype=np.float64).copy()
    if not (W > 0).all():
        raise ValueError("Sinkhorn needs a matrix with positive entries")
    if not 0.0 < tol <= STOCHASTIC_ATOL:
        raise ValueError(f"tol must lie in (0, {STOCHASTIC_ATOL:g}]; got {tol!r}")
    for _ in range(SINKHORN_MAX_ITER):
        W /= W.sum(1, keepdims=True)
        W /= W.sum(0, keepdims=True)
        if np.abs(W.sum(1) - 1.0).max() <= tol:
            return W
    raise ValueError(f"Sinkhorn did not reach tol = {tol:g} in {SINKHORN_MAX_ITER} iterations")


@register("topology", "random_doubly_stochastic")
def random_doubly_stochastic(n: int, seed: int | tuple = 0) -> Topology:
    """Sinkhorn-balanced Uniform(0, 1) matrix: a stand-in for the paper's "unbalanced fully-connected" clusters."""
    n = integer("n", n, 1, MAX_CLIENTS)
    return make_topology(f"random_doubly_stochastic({n}, seed={seed})", sinkhorn(_generator(seed).random((n, n))))
