r"""Rings, sub-rings and tori (seed 002 §6 "ring" default topology, footnote 4's sub-ring; digest 002 §1.6, §1.8).

A ring of :math:`n` clients with self-weight :math:`s` gives each of the two neighbours :math:`(1-s)/2`, so
:math:`W` is the symmetric circulant with eigenvalues

.. math::
    \lambda_k = s + (1-s)\cos\frac{2\pi k}{n},\qquad k = 0,\dots,n-1,

and :math:`\rho = \max_{k\ne0}|\lambda_k|`.  With :math:`s = 1/3` this is :math:`\frac13+\frac23\cos\frac{2\pi}n`
(0.99474 at :math:`n=50`, 0.87268 at :math:`n=10`: the paper's printed 0.995 and 0.873; the self-weight is the
digest's reconstruction, the paper gives no weights).  For :math:`n = 2` the two neighbours coincide, so
:math:`W = \begin{pmatrix}s&1-s\\1-s&s\end{pmatrix}` (the "ring of 2" of the (a) variants, digest §1.6).
The torus is the Kronecker product of two rings, :math:`W = W_a\otimes W_b`, whose spectrum is
:math:`\{\lambda_i\mu_j\}` (so :math:`\rho = \max(\rho_a,\rho_b)`); the paper does not use it.
"""

from __future__ import annotations

import numpy as np

from theorylab.registry import register
from theorylab.topology.matrix import MAX_CLIENTS, Topology, make_topology
from theorylab.validation import integer, real


def ring_matrix(n: int, self_weight: float = 1 / 3) -> np.ndarray:
    """The circulant ring matrix (unvalidated, so a self-weight of 0 can be inspected); ``n >= 1``."""
    n = integer("n", n, 1, MAX_CLIENTS)
    self_weight = real("self_weight", self_weight, 0.0, 1.0)
    W = self_weight * np.eye(n)
    if n > 1:
        idx = np.arange(n)
        side = (1.0 - self_weight) / 2.0
        np.add.at(W, (idx, (idx + 1) % n), side)
        np.add.at(W, (idx, (idx - 1) % n), side)
    else:
        W[0, 0] = 1.0
    return W


def ring_spectrum(n: int, self_weight: float = 1 / 3) -> np.ndarray:
    r"""Closed-form eigenvalues :math:`s + (1-s)\cos(2\pi k/n)`, :math:`k = 0..n-1`."""
    n, self_weight = integer("n", n, 1, MAX_CLIENTS), real("self_weight", self_weight, 0.0, 1.0)
    return self_weight + (1.0 - self_weight) * np.cos(2.0 * np.pi * np.arange(n) / n)


def _contracting_ring(n: int, self_weight: float) -> np.ndarray:
    """:func:`ring_matrix` for a factory: refuses, naming ``self_weight``, the rings Assumption 4.5 excludes."""
    W = ring_matrix(n, self_weight)
    if n > 1 and self_weight == 1.0:
        raise ValueError("self_weight must be < 1: with 1 the ring is the identity, its clients disconnected")
    if n % 2 == 0 and self_weight == 0.0:
        raise ValueError(f"self_weight must be > 0 for a ring of an even number ({n}) of clients: without self-loops "
                         "it is bipartite and rho = 1")
    return W


@register("topology", "ring")
def ring(n: int, self_weight: float = 1 / 3) -> Topology:
    """Ring of n clients, self-weight 1/3 by default: rho = 1/3 + 2/3 cos(2 pi/n) (0.99474 at n=50, 0.87268 at n=10)."""
    return make_topology(f"ring({n}, self_weight={self_weight:.4g})", _contracting_ring(n, self_weight))


@register("topology", "subring")
def subring(members, n: int, self_weight: float = 1 / 3) -> Topology:
    """Ring over the listed members (in that order), identity elsewhere: the per-round ring of the "(a)" variants."""
    n = integer("n", n, 1, MAX_CLIENTS)
    if not isinstance(members, (list, tuple, range, np.ndarray)):
        raise ValueError(f"members must be a list of client indices; got {members!r}")
    members = [integer("members[i]", i, 0) for i in members]
    if not members or len(set(members)) != len(members) or min(members) < 0 or max(members) >= n:
        raise ValueError(f"members must be distinct client indices in 0..{n - 1}; got {members}")
    W = np.eye(n)
    W[np.ix_(members, members)] = _contracting_ring(len(members), self_weight)
    inside = set(members)
    others = [(i,) for i in range(n) if i not in inside]
    return make_topology(f"subring({len(members)} of {n})", W, [tuple(members)] + others)


@register("topology", "torus")
def torus(a: int, b: int, self_weight: float = 1 / 3) -> Topology:
    """Torus a x b as the Kronecker product of two rings: spectrum {lambda_i mu_j}, rho = max(rho_a, rho_b)."""
    a, b = integer("a", a, 1, MAX_CLIENTS), integer("b", b, 1, MAX_CLIENTS // a)
    W = np.kron(_contracting_ring(a, self_weight), _contracting_ring(b, self_weight))
    return make_topology(f"torus({a}x{b})", W)
