r"""Exact moments of the staleness :math:`t-\tau_i(t)` under independent availability (seed 000 Lemma 2).

With :math:`a_i(t) = t-\tau_i(t)` (:math:`a_i(0) = 1`), :math:`a_i(t+1) = 1` if :math:`i\in\mathcal A^t` and
:math:`a_i(t)+1` otherwise, and :math:`\mathbb 1\{i\in\mathcal A^t\}` is independent of :math:`a_i(t)` (A1), so

.. math::
    \mathbb E[a(t+1)] = 1 + (1-p^t)\,\mathbb E[a(t)],\qquad
    \mathbb E[a(t+1)^2] = 1 + (1-p^t)\big(\mathbb E[a(t)^2] + 2\,\mathbb E[a(t)]\big).

Unrolled, this is the product formula of Lemma 2's proof,
:math:`\mathbb E[a(t)] = \sum_{n=1}^{t+1}\prod_{r=t-n+1}^{t-1}(1-p^r)` and
:math:`\mathbb E[a(t)^2] = \sum_{n=1}^{t+1}(2n-1)\prod_{r=t-n+1}^{t-1}(1-p^r)`; for stationary :math:`p` it gives
:math:`(1-(1-p)^{t+1})/p` and :math:`\to (2-p)/p^2` (digest 000 §3.2).  Lemma 2 bounds them by :math:`1/\delta`
and :math:`2/\delta^2` when every :math:`p_i^t \ge \delta`.
"""

from __future__ import annotations

import numpy as np


def staleness_moments(prob_table) -> tuple[np.ndarray, np.ndarray]:
    """``(E[a], E[a^2])``, each ``(T+1, m)``, for rounds ``t = 0..T`` from ``prob_table[t] = p^t`` (shape ``(T, m)``)."""
    p = np.asarray(prob_table, dtype=np.float64)
    if p.ndim != 2 or np.any((p < 0) | (p > 1)):
        raise ValueError(f"prob_table must be a (rounds, clients) array of probabilities; got shape {p.shape}")
    first, second = np.ones((len(p) + 1, p.shape[1])), np.ones((len(p) + 1, p.shape[1]))
    for t, pt in enumerate(p):
        first[t + 1] = 1.0 + (1.0 - pt) * first[t]
        second[t + 1] = 1.0 + (1.0 - pt) * (second[t] + 2.0 * first[t])
    return first, second


def staleness_product_formula(prob_column, t: int) -> tuple[float, float]:
    """Lemma 2's product formula for one client at round ``t`` (``prob_column[r] = p^r``), as a cross-check."""
    q = 1.0 - np.asarray(prob_column, dtype=np.float64)[:t]
    survival = np.array([np.prod(q[t - n + 1:t]) for n in range(1, t + 2)])  # P(a(t) >= n)
    n = np.arange(1, t + 2)
    return float(survival.sum()), float(((2 * n - 1) * survival).sum())


def stationary_staleness(p: float, t: int) -> tuple[float, float]:
    """Closed forms for constant :math:`p`: :math:`((1-(1-p)^{t+1})/p,\\ \\sum_{n=1}^{t+1}(2n-1)(1-p)^{n-1})`."""
    if not 0 < p <= 1:
        raise ValueError(f"p must lie in (0, 1]; got {p}")
    n = np.arange(1, t + 2)
    return (1 - (1 - p) ** (t + 1)) / p, float(((2 * n - 1) * (1 - p) ** (n - 1)).sum())


def lemma2_bounds(delta: float) -> tuple[float, float]:
    """Lemma 2: :math:`\\mathbb E[t-\\tau_i(t)] \\le 1/\\delta`, :math:`\\mathbb E[(t-\\tau_i(t))^2] \\le 2/\\delta^2`."""
    if not 0 < delta <= 1:
        raise ValueError(f"delta must lie in (0, 1] (Assumption A1); got {delta}")
    return 1.0 / delta, 2.0 / delta ** 2
