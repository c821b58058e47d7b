r"""Fed-CIS's server aggregation (Algorithm 6, line 12) and its sampling variance (Lemmas D.2-D.3).

Source: seed 001 Ch. 5 Algorithm 6; App. D Lemma D.2 (unbiasedness), Lemma D.3, (D.41)-(D.43), (D.48);
digest 001_thesis_ch4-6 §3.2, §3.3.

With weights :math:`\alpha_{i,e}=\eta_s\tilde\Lambda_e|D_i|/|D_{e,p}|` for :math:`i\in\mathcal C_e` (0 otherwise)
and the drawn exits :math:`\xi_{i,e}\in\{0,1\}`,

.. math:: w^{(t+1)}=\mathrm{Proj}_{\mathcal W}\Big(w^{(t)}+\sum_{(i,e)}\frac{\xi_{i,e}}{p_{i,e}}\alpha_{i,e}
          \Delta_{i,e}\Big),\qquad \Delta_{i,e}=w_{i,e}^{(t,K)}-w^{(t)}.

Lemma D.2: :math:`\mathbb E_\xi[\cdot]` of the sum is :math:`\sum_{(i,e)}\alpha_{i,e}\Delta_{i,e}`
(:func:`expected_update`).  Its variance is a sum over nodes (draws are independent across nodes) of the exact
per-node term [DERIVED, digest §3.3]

.. math:: V_i=\sum_e\frac{\alpha_{i,e}^2}{p_{i,e}}\|U_{i,e}\|^2-\Big\|\sum_e\alpha_{i,e}U_{i,e}\Big\|^2
          =\underbrace{\sum_e\alpha_{i,e}^2\frac{1-p_{i,e}}{p_{i,e}}\|U_{i,e}\|^2}_{\text{(D.43) bound}}
          -\sum_{e\ne e'}\alpha_{i,e}\alpha_{i,e'}\langle U_{i,e},U_{i,e'}\rangle,

so (D.43) bounds :math:`V_i` exactly when the cross inner products are not negative in sum ((D.41) drops them).
Replacing (D.43)'s factor :math:`\frac{1-p}{p}` by :math:`\frac1p` (reading ``"fixed"`` of
:func:`sampling_factor`) gives a bound that holds for any updates, since the subtracted square is non-negative.
"""

from __future__ import annotations

import numpy as np

from theorylab.cis.sampling import exit_data_sizes


def aggregation_weights(p, sizes, target, server_lr: float = 1.0) -> np.ndarray:
    r""":math:`\alpha_{i,e}=\eta_s\tilde\Lambda_e|D_i|/|D_{e,p}|` on :math:`\mathcal C_e`, 0 elsewhere, ``(N, E)``.
    An exit with :math:`\tilde\Lambda_e>0` but no node training it (:math:`\mathcal C_e=\emptyset`) is refused."""
    p, target = np.asarray(p, dtype=np.float64), np.asarray(target, dtype=np.float64)
    if target.shape != (p.shape[1],) or (target < 0).any() or not np.all(np.isfinite(target)):
        raise ValueError(f"target must hold {p.shape[1]} finite exit weights >= 0; got {target.tolist()}")
    if not server_lr > 0:
        raise ValueError(f"server_lr must be > 0; got {server_lr}")
    d_ep = exit_data_sizes(p, sizes)
    orphan = np.flatnonzero((target > 0) & (d_ep == 0))
    if orphan.size:
        raise ValueError(f"target: exit {orphan[0] + 1} has weight {target[orphan[0]]:g} but no node trains it "
                         "(C_e is empty under p)")
    share = np.where(p > 0, np.asarray(sizes, dtype=np.float64)[:, None] / np.where(d_ep > 0, d_ep, 1.0), 0.0)
    return server_lr * target * share


def aggregate(w: np.ndarray, deltas: np.ndarray, chosen: np.ndarray, p, alpha) -> np.ndarray:
    r"""One server step without projection: ``w`` ``(R, d)``, ``deltas`` ``(R, N, d)`` the update of each node for
    the exit it drew, ``chosen`` ``(R, N)`` that exit's index (-1: skipped).  Returns
    :math:`w+\sum_i\alpha_{i,e_i}/p_{i,e_i}\,\Delta_{i,e_i}`."""
    p, alpha = np.asarray(p), np.asarray(alpha)
    nodes = np.arange(p.shape[0])
    safe = np.where(chosen >= 0, chosen, 0)
    scale = np.where(chosen >= 0, alpha[nodes, safe] / np.where(chosen >= 0, p[nodes, safe], 1.0), 0.0)
    return w + np.einsum("rn,rnd->rd", scale, deltas)


def project_ball(w: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    r""":math:`\mathrm{Proj}_{\mathcal W}` onto the ball :math:`\{w:\|w-c\|\le\rho\}` (rows of ``w``)."""
    if not radius > 0:
        raise ValueError(f"radius must be > 0; got {radius}")
    gap = w - center
    norm = np.linalg.norm(gap, axis=-1, keepdims=True)
    return center + gap * np.minimum(1.0, radius / np.maximum(norm, 1e-300))


def expected_update(alpha, deltas) -> np.ndarray:
    r"""Lemma D.2: :math:`\sum_{(i,e)}\alpha_{i,e}\Delta_{i,e}` from ``deltas`` ``(N, E, d)``."""
    return np.einsum("ne,ned->d", np.asarray(alpha), np.asarray(deltas))


def node_variance(alpha, p, updates) -> np.ndarray:
    r"""Exact per-node sampling variance :math:`V_i` (module docstring) from ``updates`` :math:`U` ``(N, E, d)``."""
    alpha, p, updates = np.asarray(alpha), np.asarray(p), np.asarray(updates)
    pos = p > 0
    first = np.where(pos, alpha ** 2 / np.where(pos, p, 1.0), 0.0) * np.sum(updates ** 2, axis=-1)
    mean = np.einsum("ne,ned->nd", np.where(pos, alpha, 0.0), updates)
    return first.sum(1) - np.sum(mean ** 2, axis=-1)


SAMPLING_READINGS = ("printed", "fixed")


def sampling_factor(p, reading: str = "printed") -> np.ndarray:
    r"""(D.43)'s factor per pair :math:`(i,e)`: :math:`\frac{1-p_{i,e}}{p_{i,e}}` as printed, :math:`\frac1{p_{i,e}}`
    for ``"fixed"`` (module docstring); 0 where :math:`p_{i,e}=0`."""
    if reading not in SAMPLING_READINGS:
        raise ValueError(f"reading must be one of {SAMPLING_READINGS}; got {reading!r}")
    p = np.asarray(p, dtype=np.float64)
    pos = p > 0
    return np.where(pos, ((1 - p) if reading == "printed" else 1.0) / np.where(pos, p, 1.0), 0.0)


def node_variance_bound(alpha, p, updates, reading: str = "printed") -> np.ndarray:
    r"""(D.43) per node: :math:`\sum_e\alpha_{i,e}^2\frac{1-p_{i,e}}{p_{i,e}}\|U_{i,e}\|^2` (factor
    :math:`\frac1{p_{i,e}}` for ``reading="fixed"``)."""
    alpha, updates = np.asarray(alpha), np.asarray(updates)
    return np.sum(alpha ** 2 * sampling_factor(p, reading) * np.sum(updates ** 2, -1), 1)
