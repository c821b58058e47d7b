r"""Clustered topologies: :math:`W = \operatorname{blockdiag}(W_1,\dots,W_K)` over contiguous clusters (CAFGA,
seed 002 Alg. 2 and App. D; digest 002 §1.4).

Each block :math:`W_k` is built from a topology spec with ``n`` set to the cluster's size; a spec with a ``seed``
gives cluster :math:`k` the seed ``(seed, k)``, so clusters draw different random matrices.  :math:`W` violates
Assumption 4.5 across clusters by design (its global :math:`\rho` is 1 for :math:`K>1`); Assumption D.2 asks each
block to satisfy it, and :math:`\rho_{\max} = \max_k\rho_k` is :attr:`~theorylab.topology.matrix.Topology.rho_max`.
With :math:`K = 1` it is the inner topology itself.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from theorylab.registry import build, register
from theorylab.topology.matrix import MAX_CLIENTS, Topology, make_topology
from theorylab.validation import integer


@register("topology", "block_diagonal")
def block_diagonal(sizes, inner=None) -> Topology:
    """CAFGA clusters: one inner topology (default: ring) per contiguous cluster of the given sizes; reports rho_max."""
    sizes = [integer("sizes[k]", s, 1, MAX_CLIENTS) for s in sizes] if isinstance(sizes, (list, tuple)) else None
    if not sizes or sum(sizes) > MAX_CLIENTS:
        raise ValueError(f"sizes must be a non-empty list of cluster sizes >= 1 totalling <= {MAX_CLIENTS}; "
                         f"got {sizes}")
    specs = inner if isinstance(inner, (list, tuple)) else [inner or {"name": "ring"}] * len(sizes)
    if len(specs) != len(sizes) or not all(isinstance(s, dict) and "name" in s and "n" not in s for s in specs):
        raise ValueError(f"inner must be one topology spec without 'n', or one per cluster ({len(sizes)}); "
                         f"got {inner!r}")
    blocks = []
    for k, (size, spec) in enumerate(zip(sizes, specs)):
        params = {**spec, "n": size} | ({"seed": (spec["seed"], k)} if "seed" in spec else {})
        blocks.append(build("topology", params).W)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    clusters = [tuple(range(starts[k], starts[k + 1])) for k in range(len(sizes))]
    names = sorted({s["name"] for s in specs})
    return make_topology(f"block_diagonal({sizes}, {'/'.join(names)})", scipy.linalg.block_diag(*blocks), clusters)
