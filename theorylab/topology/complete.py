r"""The balanced fully-connected topology and its interpolation with the identity (seed 002 §6, Fig. 1; digest
002 §1.8 and §5 V19).

:math:`J = \frac1n\mathbf 1\mathbf 1^\top` ("balanced fully-connected", :math:`\rho = 0`: the only topology of the
paper's experiments that satisfies :math:`\rho\le M/(M+N)`).  :math:`W_\lambda = \lambda I + (1-\lambda)J` has
:math:`W_\lambda - J = \lambda(I-J)`, a scaled projection, so :math:`\rho = \lambda` exactly: a one-parameter sweep of
:math:`\rho` across the threshold of Theorem 4.6 (digest V19, a toolkit design, not the paper's).
"""

from __future__ import annotations

import numpy as np

from theorylab.registry import register
from theorylab.topology.matrix import MAX_CLIENTS, Topology, make_topology
from theorylab.validation import integer, real


@register("topology", "complete")
def complete(n: int) -> Topology:
    """Balanced fully-connected W = J = 11^T/n: rho = 0."""
    n = integer("n", n, 1, MAX_CLIENTS)
    return make_topology(f"complete({n})", np.full((n, n), 1.0 / n))


@register("topology", "interpolated")
def interpolated(n: int, lam: float) -> Topology:
    """W = lam I + (1 - lam) J: rho = lam exactly, for sweeping rho across M/(M+N)."""
    n = integer("n", n, 2, MAX_CLIENTS)
    lam = real("lam", lam, 0.0, 1.0)
    if lam == 1.0:
        raise ValueError("lam must lie in [0, 1): lam = 1 is the identity, disconnected")
    return make_topology(f"interpolated({n}, lam={lam:.4g})", lam * np.eye(n) + (1.0 - lam) * np.full((n, n), 1.0 / n))
