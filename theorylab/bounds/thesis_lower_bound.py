r"""Thesis ch. 3 lower bound: Theorem 3.4.4 / B.4 and Lemmas B.1-B.2 on the Nesterov zero chain.

Source: seed 001 Ch. 3, Theorem 3.4.4 (3.13); App. B "FedStale, Lower bound", (B.130)-(B.143); digest 001 §4.10,
§6 errata 17-18, §8 V24-V25.

On :math:`F(w)=\frac L8(w^\top A_{2n+1}w-2w_1)` (B.130) started at :math:`w^{(1)}=0`,
:math:`F(0)-F^*=\frac{L(2n+1)}{16(n+1)}` (:func:`chain_gap`).  Over :math:`{\rm span}(e_1,\dots,e_m)`, :math:`m\le2n`,
the smallest squared gradient norm is exactly :math:`g(m)=\frac{3L^2}{8(m+1)(m+2)(2m+3)}`, whatever the horizon
:math:`n` (digest §4.10 audit (i)); Lemma B.2's (B.140) :math:`\frac{6L(F(0)-F^*)}{t(2t+1)^2}` equals :math:`g(t-1)`
when the horizon is :math:`n=t`, and (B.142), which substitutes the support :math:`k` into (B.140) while keeping
the gap of a longer horizon, over-states :math:`g(k)` by a factor up to :math:`(2k+4)/(2k+3)` (erratum 17).

The support :math:`k^{(t)}` (largest non-zero coordinate) grows by at most one per round, and with client
:math:`i_1` active with probability :math:`p_{\min}`, :math:`\mathbb E[k^{(t)}]\le3(1-p_{\min})+2p_{\min}t` (B.143).
Since :math:`g` is convex and decreasing (:math:`1/g` is a product of positive affine factors, so :math:`g` is
log-convex), Jensen gives the corrected bound :math:`\min_{s\le t}\mathbb E\|\nabla F(w^{(s)})\|^2\ge g(3+2p_{\min}t)
=\frac{3L^2}{8(2p_{\min}t+4)(2p_{\min}t+5)(4p_{\min}t+9)}` (:func:`lower_bound_corrected`), against the printed
(B.141) :math:`\frac{3L(F(w^{(1)})-F^*)}{(p_{\min}t+2)(4p_{\min}t+9)^2}` (:func:`lower_bound_b141`).

**The Omega-form (3.13).** With :math:`x=p_{\min}t\ge0` and :math:`h(x)=\frac{(x+2)(4x+9)^2}{x^3+1}` (continuous,
:math:`h(0)=162`, :math:`h(x)\to16`), (B.141) equals :math:`\frac{3L\,{\rm gap}}{h(x)(x^3+1)}\ge
\frac{3L\,{\rm gap}}{h^*(p_{\min}^3t^3+1)}` with :math:`h^*=\max_{x\ge0}h` (:func:`omega_constant`, at a real root
of :math:`N'D-ND'`), which is (3.13) with an explicit constant (:func:`lower_bound_omega`); and (3.13) is tight up to
the factor :math:`h^*/16`.

**Rounds.** The support advances only through :math:`i_0` (always active) at even :math:`k` and through :math:`i_1`
(active with probability :math:`p_{\min}`) at odd :math:`k`, one coordinate per round at most, and it does advance
when that client is active (its gradient has a non-zero entry at :math:`k+1` as soon as :math:`w_k\ne0`).  So the
first round at which the support reaches :math:`k` is a sum of :math:`\lceil k/2\rceil` single rounds and
:math:`\lfloor k/2\rfloor` independent Geometric(:math:`p_{\min}`) waits, with mean
:math:`\lceil k/2\rceil+\lfloor k/2\rfloor/p_{\min}` (:func:`support_passage_mean`).  Since
:math:`\|\nabla F\|^2\ge g(k)`, no fresh-and-stale procedure reaches :math:`\|\nabla F\|^2\le\varepsilon` before its
support reaches :math:`k_\varepsilon=\min\{k:g(k)\le\varepsilon\}`: rounds to :math:`\varepsilon` are
:math:`\Omega(1/p_{\min})`, the conclusion Theorem 3.4.4 draws.
"""

from __future__ import annotations

import numpy as np


def _check_L(L: float) -> float:
    if not L > 0:
        raise ValueError(f"L must be > 0; got {L}")
    return float(L)


def _check_p(p_min: float) -> float:
    if not 0 < p_min <= 1:
        raise ValueError(f"p_min must lie in (0, 1]; got {p_min}")
    return float(p_min)


def chain_gap(L: float, horizon: int) -> float:
    """:math:`F(0)-F^*=\\frac{L(2n+1)}{16(n+1)}` for the chain :math:`A_{2n+1}` (B.140's proof)."""
    if int(horizon) != horizon or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1; got {horizon}")
    return _check_L(L) * (2 * horizon + 1) / (16 * (horizon + 1))


def span_min_grad_sq(L: float, m) -> np.ndarray:
    """:math:`g(m)=\\min_{w\\in{\\rm span}(e_1..e_m)}\\|\\nabla F(w)\\|^2=\\frac{3L^2}{8(m+1)(m+2)(2m+3)}`, for real
    ``m >= 0`` (the Jensen step evaluates it between integers)."""
    m = np.asarray(m, dtype=np.float64)
    if np.any(m < 0):
        raise ValueError(f"m must be >= 0; got {m}")
    return 3 * _check_L(L) ** 2 / (8 * (m + 1) * (m + 2) * (2 * m + 3))


def lemma_b2_printed(L: float, gap: float, t) -> np.ndarray:
    """(B.140) :math:`\\frac{6L\\,{\\rm gap}}{t(2t+1)^2}`; (B.142) is this at :math:`t=k+1`."""
    t = np.asarray(t, dtype=np.float64)
    if np.any(t < 1):
        raise ValueError(f"t must be >= 1; got {t}")
    return 6 * _check_L(L) * gap / (t * (2 * t + 1) ** 2)


def lower_bound_b141(L: float, gap: float, p_min: float, t) -> np.ndarray:
    """Printed (B.141): :math:`\\frac{3L\\,{\\rm gap}}{(p_{\\min}t+2)(4p_{\\min}t+9)^2}`."""
    x = _check_p(p_min) * np.asarray(t, dtype=np.float64)
    return 3 * _check_L(L) * gap / ((x + 2) * (4 * x + 9) ** 2)


def lower_bound_corrected(L: float, p_min: float, t) -> np.ndarray:
    """:math:`g(3+2p_{\\min}t)` (module docstring)."""
    return span_min_grad_sq(L, 3 + 2 * _check_p(p_min) * np.asarray(t, dtype=np.float64))


def expected_support_bound(p_min: float, t) -> np.ndarray:
    """(B.143): :math:`3(1-p_{\\min})+2p_{\\min}t`."""
    p = _check_p(p_min)
    return 3 * (1 - p) + 2 * p * np.asarray(t, dtype=np.float64)


def periodic_support_bound(t, tau: int) -> np.ndarray:
    """Lemma B.1 (B.136), period-tau participation:
    :math:`k^{(t)}\\le1+\\lfloor\\frac{t+\\tau-2}\\tau\\rfloor+\\lfloor\\frac{t+\\tau-1}\\tau\\rfloor`."""
    if int(tau) != tau or tau < 1:
        raise ValueError(f"tau must be an integer >= 1; got {tau}")
    t = np.asarray(t, dtype=np.int64)
    return 1 + (t + tau - 2) // tau + (t + tau - 1) // tau


def omega_ratio(x) -> np.ndarray:
    """:math:`h(x)=(x+2)(4x+9)^2/(x^3+1)` (module docstring)."""
    x = np.asarray(x, dtype=np.float64)
    return (x + 2) * (4 * x + 9) ** 2 / (x ** 3 + 1)


def omega_constant() -> float:
    r""":math:`h^*=\max_{x\ge0}h(x)`, over :math:`x=0` and the non-negative real roots of :math:`N'D-ND'`."""
    P = np.polynomial.Polynomial
    num, den = P([2, 1]) * P([9, 4]) ** 2, P([1, 0, 0, 1])
    roots = (num.deriv() * den - num * den.deriv()).roots()
    critical = [r.real for r in roots if abs(r.imag) < 1e-9 and r.real >= 0]
    return float(np.max(omega_ratio([0.0] + critical)))


def lower_bound_omega(L: float, gap: float, p_min: float, t) -> np.ndarray:
    r"""(3.13) with the constant (B.141) gives: :math:`\frac{3L\,{\rm gap}}{h^*(p_{\min}^3t^3+1)}`."""
    x = _check_p(p_min) * np.asarray(t, dtype=np.float64)
    return 3 * _check_L(L) * gap / (omega_constant() * (x ** 3 + 1))


def support_passage_mean(k: int, p_min: float) -> float:
    r"""Mean first round at which the support reaches ``k`` from :math:`w^{(1)}=0` (rounds counted from 0):
    :math:`\lceil k/2\rceil+\lfloor k/2\rfloor/p_{\min}` (module docstring)."""
    if int(k) != k or k < 0:
        raise ValueError(f"k must be an integer >= 0; got {k}")
    return (k + 1) // 2 + (k // 2) / _check_p(p_min)
