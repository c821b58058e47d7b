r"""Fed-CIS's node/exit sampling: the matrix :math:`p`, the one-exit-per-node draw, :math:`\mathcal C_e` and
:math:`|D_{e,p}|`.

Source: seed 001 Ch. 5 Algorithm 6 (lines 1-4) and §5.4.3; digest 001_thesis_ch4-6 §3.2.

:math:`p\in[0,1]^{N\times E}` with :math:`p_{i,e}=0` for :math:`e>E_i` and :math:`\sum_ep_{i,e}\le1`.  Each round every
node draws **at most one** exit, :math:`\mathbb P(e_i=e)=p_{i,e}`, and skips the round with probability
:math:`1-\sum_ep_{i,e}`; nodes draw independently (the digest's reading of line 4, which gives
:math:`\xi_{i,e}\xi_{i,e'}=0` for :math:`e\ne e'` and :math:`\mathbb E\xi_{i,e}=p_{i,e}`, as Lemmas D.2-D.3 use).

* :math:`\mathcal C_e=\{i:p_{i,e}>0\}` (:func:`participants`), :math:`|D_{e,p}|=\sum_{i\in\mathcal C_e}|D_i|`
  (:func:`exit_data_sizes`).
* The thesis' preset (§5.4.3): :math:`p_{i,e}=p` for :math:`e<E_i` and :math:`p_{i,E_i}=1-(E_i-1)p`
  (:func:`preset`); :math:`p=0` trains each node's own exit only, so :math:`\mathcal C_e=\mathcal N_e`.
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np


def check_sampling(p, exits: Sequence[int]) -> np.ndarray:
    """``p`` as an (N, E) float array, refused unless it is a valid one-exit-per-node law for ``exits``."""
    p, exits = np.asarray(p, dtype=np.float64), np.asarray(exits)
    if p.ndim != 2 or p.shape[0] != len(exits) or p.shape[1] < exits.max():
        raise ValueError(f"p must have shape (N, E) = ({len(exits)}, >= {exits.max()}); got {p.shape}")
    if not np.all(np.isfinite(p)) or (p < 0).any() or (p > 1).any():
        raise ValueError("p must hold probabilities in [0, 1]")
    for i, e_max in enumerate(exits):
        if (p[i, e_max:] > 0).any():
            raise ValueError(f"p[{i}]: node {i} holds exits 1..{e_max}, so p[{i}, e] must be 0 for e > {e_max}")
        if p[i].sum() > 1 + 1e-12:
            raise ValueError(f"p[{i}] must sum to at most 1 (one exit per node); got {p[i].sum():.6g}")
    return p


def preset(exits: Sequence[int], p: float, n_exits: int | None = None) -> np.ndarray:
    r"""§5.4.3: :math:`p_{i,e}=p` for :math:`e<E_i`, :math:`p_{i,E_i}=1-(E_i-1)p`; needs :math:`(E_i-1)p\le1`."""
    exits = np.asarray(exits)
    n_exits = int(n_exits or exits.max())
    if not 0 <= p <= 1 / max(int(exits.max()) - 1, 1):
        raise ValueError(f"p must be in [0, 1/(max E_i - 1)] = [0, {1 / max(int(exits.max()) - 1, 1):g}]; got {p}")
    out = np.zeros((len(exits), n_exits))
    for i, e_max in enumerate(exits):
        out[i, :e_max - 1] = p
        out[i, e_max - 1] = 1 - (e_max - 1) * p
    return check_sampling(out, exits)


def participants(p) -> list[np.ndarray]:
    r""":math:`\mathcal C_e=\{i: p_{i,e}>0\}` for every exit (0-based list position = exit - 1)."""
    p = np.asarray(p)
    return [np.flatnonzero(p[:, e] > 0) for e in range(p.shape[1])]


def exit_data_sizes(p, sizes) -> np.ndarray:
    r""":math:`|D_{e,p}|=\sum_{i\in\mathcal C_e}|D_i|` for every exit."""
    sizes = np.asarray(sizes, dtype=np.float64)
    if sizes.shape != (np.shape(p)[0],) or (sizes <= 0).any():
        raise ValueError(f"sizes must hold one dataset size > 0 per node ({np.shape(p)[0]}); got {sizes.tolist()}")
    return (np.asarray(p) > 0).T.astype(np.float64) @ sizes


def draw(p, uniforms):
    r"""Exits drawn from uniforms ``(..., N)``: node :math:`i` takes exit index :math:`e` (0-based) when
    :math:`\sum_{e'<e}p_{i,e'}\le u_i<\sum_{e'\le e}p_{i,e'}`, and -1 (skips the round) past :math:`\sum_ep_{i,e}`.
    ``uniforms`` is a numpy array or a torch tensor (the draw then stays on its device, in its dtype)."""
    cumulative = np.cumsum(np.asarray(p, dtype=np.float64), axis=1)  # (N, E)
    if not isinstance(uniforms, np.ndarray):  # a torch tensor: the law moves to its device
        cumulative = uniforms.new_tensor(cumulative)
    chosen = (uniforms[..., None] >= cumulative).sum(-1)  # first exit whose cumulative exceeds u
    n_exits = cumulative.shape[1]
    return chosen - (chosen >= n_exits) * (n_exits + 1)  # past the last exit: -1


def outcomes(p) -> tuple[np.ndarray, np.ndarray]:
    """Every joint draw of all nodes with its probability: ``(choices (M, N) with -1 for none, probs (M,))``,
    enumerated over each node's outcomes of positive probability (exact, for small N)."""
    p = np.asarray(p)
    per_node = []
    for row in p:
        options = [(e, row[e]) for e in range(len(row)) if row[e] > 0]
        if 1 - row.sum() > 1e-15:
            options.append((-1, 1 - row.sum()))
        per_node.append(options)
    combos = list(itertools.product(*per_node))
    choices = np.array([[e for e, _ in combo] for combo in combos])
    probs = np.array([np.prod([q for _, q in combo]) for combo in combos])
    return choices, probs
