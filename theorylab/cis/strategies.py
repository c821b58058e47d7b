r"""Exit-weight strategies :math:`\tilde\Lambda` for Fed-CIS, normalised to sum to one.

Source: seed 001 Ch. 5 §5.3.4 and §5.4.2 (Tables 5.1-5.4); digest 001_thesis_ch4-6 §3.1, §3.4.

* **Equal Weight** (Teerapittayanon 2017 and others): :math:`\tilde\Lambda_e=1/E`.
* **FLOPS Prop** (Kaya 2019): :math:`\tilde\Lambda_e\propto` the FLOPs of the network truncated at exit :math:`e`
  (the thesis gives no numbers; the caller supplies them).
* **Serving Rate** (the thesis' proposal, bias-dominant regime): :math:`\tilde\Lambda=\Lambda`.
* **Balanced Adj** — *not the thesis' formula*: the thesis names it a heuristic balancing bias and optimisation
  error and gives no formula (digest §3.4, §7 item 7).  Here, a toolkit proposal [DERIVED]:
  :math:`\tilde\Lambda_e\propto\Lambda_ev_e^{-\beta}` with per-exit gradient variances :math:`v_e` and
  :math:`\beta\in[0,1]` (:math:`\beta=0` is Serving Rate; larger :math:`\beta` moves weight to low-variance exits).

Normalising to one matches the theory mode :math:`\eta_s\sum_e\tilde\Lambda_e=1` with :math:`\eta_s=1` (digest §3.3);
whether the thesis normalised is [UNCLEAR] (§3.4).
"""

from __future__ import annotations

import numpy as np

THESIS_STRATEGIES = ("equal_weight", "flops_prop", "serving_rate")
NOT_IN_THESIS = ("balanced_adj",)  # named in the thesis, formula not given: ours is a labelled proposal


def _normalised(name: str, values) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or len(values) == 0 or not np.all(np.isfinite(values)) or (values < 0).any() \
            or values.sum() <= 0:
        raise ValueError(f"{name} must be finite values >= 0, not all zero, one per exit; got {values.tolist()}")
    return values / values.sum()


def equal_weight(n_exits: int) -> np.ndarray:
    r""":math:`\tilde\Lambda_e=1/E`."""
    if int(n_exits) != n_exits or n_exits < 1:
        raise ValueError(f"n_exits must be an integer >= 1; got {n_exits}")
    return np.full(int(n_exits), 1.0 / n_exits)


def flops_prop(flops) -> np.ndarray:
    r""":math:`\tilde\Lambda_e\propto\mathrm{FLOPs}_e`."""
    return _normalised("flops", flops)


def serving_rate(exit_rates) -> np.ndarray:
    r""":math:`\tilde\Lambda=\Lambda/\sum_e\Lambda_e`."""
    return _normalised("exit_rates", exit_rates)


def balanced_adj(exit_rates, variances, beta: float = 0.5) -> np.ndarray:
    r"""NOT the thesis' formula (none is given): :math:`\tilde\Lambda_e\propto\Lambda_ev_e^{-\beta}`."""
    if not 0 <= beta <= 1:
        raise ValueError(f"beta must be in [0, 1]; got {beta}")
    variances = np.asarray(variances, dtype=np.float64)
    if variances.shape != np.shape(exit_rates) or not (variances > 0).all():
        raise ValueError(f"variances must hold one value > 0 per exit; got {variances.tolist()}")
    return _normalised("exit_rates", np.asarray(exit_rates, dtype=np.float64) * variances ** (-beta))
