r"""The request-rate model of a cooperative inference system (CIS): who serves which requests, and at which exit.

Source: seed 001 Ch. 5 §5.2, eqs. (5.2), (5.3), (5.5) and the footnote to (5.5); digest 001_thesis_ch4-6 §3.1, §3.6.

**Topology.** Nodes :math:`0..N-1`; ``parents[i]`` is ``None`` for a root, a node index for a tree, or a mapping
``{parent: share}`` (shares summing to one) for a DAG in which node :math:`i` splits what it forwards among several
parents.  Node :math:`i` holds exits :math:`1..E_i` (``exits[i]``) and serves at exit :math:`E_i`; a parent has
more exits than each of its children (:math:`E_i>E_j` for :math:`j\in\mathcal N_i^-`).

**Rates.** Local arrivals :math:`\lambda_i^l\ge0`; the inflow of node :math:`i` is
:math:`\lambda_i^l+\sum_{j\in\mathcal N_i^-}s_{j\to i}\lambda_j^t` (:math:`s_{j\to i}=1` on a tree).  With the
offload-first policy (footnote to (5.5)) node :math:`i` forwards
:math:`\lambda_i^t=\min\{\mu_i^{\max},\ \text{inflow}_i\}` and serves :math:`\lambda_i^s=\text{inflow}_i-\lambda_i^t`
((5.2)-(5.3) with :math:`r_i=\lambda_i^s/\text{inflow}_i`).  A root serves all it receives
(:math:`\mu_{\rm root}^{\max}=0`, digest §3.1 [DERIVED]).  The serving rate of exit :math:`e` is

.. math:: \Lambda_e=\sum_{i:E_i=e}\lambda_i^s \qquad (5.5),

and traffic is conserved: :math:`\sum_e\Lambda_e=\sum_i\lambda_i^l` (digest §3.1 [DERIVED]).

**x-y-z.** The thesis names a serving split by the percentages of requests served at exits 1, 2, 3 (§5.4.1);
:func:`split_rates` gives :math:`\Lambda=(x,y,z)/100` and :func:`mu_for_split` the transfer limits
:math:`\mu^{\max}` that realise it on a layered topology (every node of exit :math:`e` serves the same fraction
:math:`\Lambda_e/(1-\sum_{e'<e}\Lambda_{e'})` of its inflow).

>>> from theorylab.cis.rates import SEVEN_NODE, mu_for_split, exit_rates
>>> parents, exits = SEVEN_NODE
>>> local = [0.25, 0.25, 0.25, 0.25, 0, 0, 0]
>>> exit_rates(parents, exits, local, mu_for_split(parents, exits, local, (80, 15, 5))).round(3).tolist()
[0.8, 0.15, 0.05]
"""

from __future__ import annotations

import math
from typing import Mapping, NamedTuple, Sequence

import numpy as np

SEVEN_NODE = ((4, 4, 5, 5, 6, 6, None), (1, 1, 1, 1, 2, 2, 3))  # §5.4.1: 4 / 2 / 1 nodes, E_i = layer index
SEVENTEEN_NODE = (tuple(12 + i // 3 for i in range(12)) + (16,) * 4 + (None,), (1,) * 12 + (2,) * 4 + (3,))  # App. D
THESIS_SPLITS = ((80, 15, 5), (60, 30, 10), (45, 35, 20), (33, 33, 33), (20, 35, 45), (10, 30, 60), (5, 15, 80))


class Rates(NamedTuple):
    transfer: np.ndarray  # (N,) lambda_i^t
    served: np.ndarray  # (N,) lambda_i^s
    exit_rates: np.ndarray  # (E,) Lambda_e


def parent_shares(parents: Sequence) -> list[dict[int, float]]:
    """``parents`` as one ``{parent: share}`` mapping per node (empty for a root), validated."""
    n, out = len(parents), []
    for i, entry in enumerate(parents):
        if entry is None:
            shares = {}
        elif isinstance(entry, Mapping):
            shares = {int(k): float(v) for k, v in entry.items()}
        else:
            shares = {int(entry): 1.0}
        for j, share in shares.items():
            if not 0 <= j < n or j == i:
                raise ValueError(f"parents[{i}] must name other nodes in [0, {n - 1}]; got {entry!r}")
            if not share > 0:
                raise ValueError(f"parents[{i}]: each share must be > 0; got {share} for parent {j}")
        if shares and not math.isclose(sum(shares.values()), 1.0, abs_tol=1e-12):
            raise ValueError(f"parents[{i}]: shares must sum to 1; got {sum(shares.values())}")
        out.append(shares)
    return out


def topological_order(parents: Sequence) -> list[int]:
    """Nodes ordered children before parents; a cycle is refused with the nodes on it named."""
    shares = parent_shares(parents)
    pending = [len([j for j in range(len(shares)) if i in shares[j]]) for i in range(len(shares))]  # children left
    ready, order = [i for i, c in enumerate(pending) if c == 0], []
    while ready:
        i = ready.pop(0)
        order.append(i)
        for j in shares[i]:
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)
    if len(order) < len(shares):
        cyclic = sorted(set(range(len(shares))) - set(order))
        raise ValueError(f"parents: the topology must be a tree or a DAG; nodes {cyclic} lie on or above a cycle")
    return order


def check_exits(parents: Sequence, exits: Sequence[int]) -> np.ndarray:
    """``exits`` as an int array, refused unless every exit is >= 1 and every parent has more exits than its child."""
    exits = np.asarray(exits)
    if exits.shape != (len(parents),) or not np.issubdtype(exits.dtype, np.integer) or (exits < 1).any():
        raise ValueError(f"exits must hold one integer >= 1 per node ({len(parents)}); got {exits.tolist()}")
    for i, shares in enumerate(parent_shares(parents)):
        for j in shares:
            if exits[j] <= exits[i]:
                raise ValueError(f"exits: parent {j} must hold more exits than its child {i}; got E_{j} = {exits[j]}"
                                 f" <= E_{i} = {exits[i]}")
    return exits


def _nonnegative(name: str, values, n: int) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (n,) or not np.all(np.isfinite(values)) or (values < 0).any():
        raise ValueError(f"{name} must hold {n} finite values >= 0; got {values.tolist()}")
    return values


def inflows(parents: Sequence, local, transfer) -> np.ndarray:
    r"""Inflow :math:`\lambda_i^l+\sum_{j\in\mathcal N_i^-}s_{j\to i}\lambda_j^t` of every node."""
    out = np.array(local, dtype=np.float64)
    for j, shares in enumerate(parent_shares(parents)):
        for i, share in shares.items():
            out[i] += share * transfer[j]
    return out


def rates(parents: Sequence, exits: Sequence[int], local, mu_max) -> Rates:
    r"""Transfer, serving and per-exit rates under offload-first: :math:`\lambda_i^t=\min\{\mu_i^{\max},
    \text{inflow}_i\}` (0 at a root), :math:`\lambda_i^s=\text{inflow}_i-\lambda_i^t`, :math:`\Lambda_e` (5.5)."""
    n, order = len(parents), topological_order(parents)
    exits = check_exits(parents, exits)
    local, mu_max = _nonnegative("local", local, n), _nonnegative("mu_max", mu_max, n)
    shares = parent_shares(parents)
    transfer, inflow = np.zeros(n), local.copy()
    for i in order:
        transfer[i] = min(mu_max[i], inflow[i]) if shares[i] else 0.0
        for j, share in shares[i].items():
            inflow[j] += share * transfer[i]
    served = inflow - transfer
    per_exit = np.zeros(int(exits.max()))
    np.add.at(per_exit, exits - 1, served)
    return Rates(transfer, served, per_exit)


def exit_rates(parents: Sequence, exits: Sequence[int], local, mu_max) -> np.ndarray:
    r""":math:`\Lambda_e` of (5.5), indexed from exit 1 at position 0."""
    return rates(parents, exits, local, mu_max).exit_rates


def check_conservation(parents: Sequence, local, transfer, served, atol: float = 1e-9) -> None:
    r"""Refuse serving and transfer rates that do not conserve traffic at some node:
    :math:`\lambda_i^l+\sum_js_{j\to i}\lambda_j^t=\lambda_i^s+\lambda_i^t` for every :math:`i`, and a root forwards
    nothing.  The error names the first node that fails."""
    n = len(parents)
    local, transfer, served = (_nonnegative(name, v, n) for name, v in
                               (("local", local), ("transfer", transfer), ("served", served)))
    topological_order(parents)
    inflow, shares = inflows(parents, local, transfer), parent_shares(parents)
    for i in range(n):
        if not shares[i] and transfer[i] > atol:
            raise ValueError(f"transfer: root node {i} has no parent to forward {transfer[i]:g} requests to")
        if abs(inflow[i] - served[i] - transfer[i]) > atol:
            raise ValueError(f"served: node {i} does not conserve traffic: inflow {inflow[i]:g} != served "
                             f"{served[i]:g} + transferred {transfer[i]:g}")


def split_rates(split: Sequence[float], total: float = 1.0) -> np.ndarray:
    r""":math:`\Lambda` of an x-y-z split (percentages of requests served at each exit): ``total * split / 100``.
    The thesis' 33-33-33 sums to 99; any split within one point of 100 is renormalised to sum to ``total``."""
    split = _nonnegative("split", split, len(split))
    if len(split) == 0 or abs(split.sum() - 100) > 1.0 + 1e-9:
        raise ValueError(f"split must be percentages summing to 100 (within 1); got {split.tolist()}")
    return total * split / split.sum()


def mu_for_split(parents: Sequence, exits: Sequence[int], local, split: Sequence[float]) -> np.ndarray:
    r"""Transfer limits :math:`\mu^{\max}` realising the x-y-z ``split``: each node of exit :math:`e` forwards the
    fraction :math:`1-\Lambda_e/(1-\sum_{e'<e}\Lambda_{e'})` of its inflow (so nodes of the same exit serve the same
    fraction).  The deepest exit's nodes forward nothing."""
    order = topological_order(parents)
    exits = check_exits(parents, exits)
    local = _nonnegative("local", local, len(parents))
    target = split_rates(split)
    if len(target) != exits.max():
        raise ValueError(f"split must give one percentage per exit ({exits.max()}); got {len(target)}")
    reaching = 1 - np.concatenate([[0.0], np.cumsum(target)[:-1]])  # fraction of requests reaching exit e
    keep = np.divide(target, reaching, out=np.ones_like(target), where=reaching > 1e-15)
    shares, transfer, inflow = parent_shares(parents), np.zeros(len(parents)), local.copy()
    for i in order:
        transfer[i] = inflow[i] * (1 - keep[exits[i] - 1]) if shares[i] else 0.0
        for j, share in shares[i].items():
            inflow[j] += share * transfer[i]
    return transfer


def leaf_arrivals(parents: Sequence) -> np.ndarray:
    r""":math:`\lambda^l` with one unit of requests spread evenly over the leaves (§5.4.1: requests arrive at the
    leaves only)."""
    shares = parent_shares(parents)
    has_child = {j for s in shares for j in s}
    leaves = np.array([i not in has_child for i in range(len(parents))], dtype=np.float64)
    return leaves / leaves.sum()


def split_topology_rates(split: Sequence[float], topology=SEVEN_NODE) -> Rates:
    """The rates of ``topology = (parents, exits)`` when one unit of requests arrives evenly at the leaves and the
    transfer limits realise the x-y-z ``split`` (:func:`mu_for_split`)."""
    parents, exits = topology
    local = leaf_arrivals(parents)
    return rates(parents, exits, local, mu_for_split(parents, exits, local, split))
