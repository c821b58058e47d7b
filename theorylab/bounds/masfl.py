r"""MasFL / AdaMasFL theory: the parameter choices, the feasibility condition and the bounds of Theorems 3.1 and 4.1,
and Table 1's rate formulas (seed 004 §3–5, App. C–D; digest 004 §3.2–3.5, §5.3).

Notation: :math:`S` clients per server step, :math:`K` local steps, :math:`T` server steps, :math:`N` clients,
:math:`L` smoothness (Asm. 2.1), :math:`\sigma^2` noise (Asm. 2.2), :math:`\tau_{\max},\bar\tau` delays (Asm. 2.3),
:math:`\Delta = f(\theta^0)-f^\star`, :math:`e` Euler's number.

=====================  ==========================================================================================
Theorem 3.1 steps      :math:`\beta = \sqrt{SK/T}`, :math:`\gamma = \beta/(4L)`, :math:`\eta\le\eta_{\max}`
:math:`a`, :math:`\kappa`  :math:`a = \tau_{\max}^2\beta^2 + 20e^2\eta^2K^2L^2`,
                       :math:`\kappa = (3-4a)/(1-4a-\sqrt{SK/T})` (Table 1 footnote 3)
Condition              :math:`1-4a-\sqrt{SK/T}\ge0`, i.e.
                       :math:`\eta\le\eta_{\max} = \sqrt{T-\sqrt{SKT}-4SK\tau_{\max}^2}/(4\sqrt5\,eKL\sqrt T)`
App. C bound           :math:`\frac1T\sum\mathbb E\|\nabla f\|^2\lesssim\kappa\big(\frac{4L\Delta+26\sigma^2}{\sqrt{SKT}}
                       + \frac{200e^2S\sigma^2}{T} + \frac{8L^2\sigma^2}{NKT}\big)` (order-level: "≲")
Theorem 4.1 steps      :math:`\gamma = (SK)^{1/4}/T^{3/4}`, :math:`\eta = 1/(K\sqrt T)`, :math:`\beta = \sqrt{SK/T}`
Theorem 4.1 terms      of :math:`\frac1T\sum\mathbb E\|\nabla f\|`, constants dropped (:func:`thm41_terms`), plus
                       App. D.3's :math:`\bar\tau\tau_{\max}L(SK)^{3/4}/T^{5/4}` that the statement omits (§5.3)
Table 1                the rate of :math:`\frac1T\sum\mathbb E\|\nabla f\|` of FedBuff, CA²FL, DeFedAvg-nIID, FADAS,
                       MasFL, AdaMasFL, constants dropped (:data:`TABLE1`)
=====================  ==========================================================================================

Errata carried here (digest §5.3): Theorem 3.1's statement has :math:`\sigma^2/T` where App. C has
:math:`200e^2S\sigma^2/T` (the appendix's is used); Theorem 4.1 omits one App. D.3 term (kept, flagged).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from theorylab.validation import integer, real

E = math.e


def _positive(name: str, value) -> float:
    return real(name, value, 0.0, open_low=True)


def _count(name: str, value) -> int:
    return integer(name, value, 1)


def _delay(name: str, value) -> float:
    return real(name, value, 0.0)


def _sizes(S, K, T) -> tuple[int, int, int]:
    S, K, T = _count("S", S), _count("K", K), _count("T", T)
    if S * K > T:
        raise ValueError(f"beta = sqrt(SK/T) <= 1 needs T >= S*K; got S={S}, K={K}, T={T}")
    return S, K, T


class Steps(NamedTuple):
    beta: float
    gamma: float
    eta: float


def eta_max_thm31(S, K, T, L, tau_max) -> float:
    r""":math:`\eta_{\max}` of Theorem 3.1, or a ValueError naming the parameters when
    :math:`T-\sqrt{SKT}-4SK\tau_{\max}^2<0` (no :math:`\eta>0` satisfies the condition)."""
    S, K, T = _sizes(S, K, T)
    L, tau_max = _positive("L", L), _delay("tau_max", tau_max)
    slack = T - math.sqrt(S * K * T) - 4 * S * K * tau_max ** 2
    if slack <= 0:
        raise ValueError(f"Theorem 3.1's condition 1 - 4a - sqrt(SK/T) >= 0 is infeasible for every eta > 0: "
                         f"T - sqrt(SKT) - 4 S K tau_max^2 = {slack:.4g} <= 0 at S={S}, K={K}, T={T}, "
                         f"tau_max={tau_max:g}")
    return math.sqrt(slack) / (4 * math.sqrt(5) * E * K * L * math.sqrt(T))


def feasibility_slack(S, K, T, tau_max) -> float:
    r""":math:`T-\sqrt{SKT}-4SK\tau_{\max}^2`: Theorem 3.1's condition admits some :math:`\eta>0` iff it is > 0."""
    S, K, T = _count("S", S), _count("K", K), _count("T", T)
    return T - math.sqrt(S * K * T) - 4 * S * K * _delay("tau_max", tau_max) ** 2


def staleness_threshold(s: int, k: int, T: int, share: float = 0.0) -> float:
    r""":math:`\tau^\star(f)=\frac12\sqrt{(1-f^2)(T-\sqrt{sKT})/(sk)}`: Theorem 3.1's condition holds at
    :math:`\eta=f\,\eta_{\max}(0)` iff :math:`\tau_{\max}\le\tau^\star(f)` ; ``share`` is :math:`f`.
    With :math:`\beta=\sqrt{SK/T}` and :math:`\gamma L=\beta/4`, the condition :math:`1-4a-\beta\ge0` at
    :math:`\eta=f\eta_{\max}(0)` reads :math:`\tau_{\max}^2SK/T\le\frac{1-f^2}4(1-\sqrt{SK/T})` (:func:`staleness_limit`);
    beyond :math:`\tau^\star(0)` no :math:`\eta>0` meets it (:func:`eta_max_thm31` refuses)."""
    if not 0 <= share <= 1:
        raise ValueError(f"share must lie in [0, 1]; got {share}")
    if s * k > T:
        raise ValueError(f"beta = sqrt(SK/T) <= 1 needs T >= S*K; got S={s}, K={k}, T={T}")
    return 0.5 * math.sqrt((1 - share ** 2) * (T - math.sqrt(s * k * T)) / (s * k))


def staleness_limit(s: int, k: int, T: int, share: float = 0.0) -> float:
    r"""The condition's bound on :math:`x=\tau_{\max}^2SK/T`: :math:`\frac{1-f^2}4(1-\sqrt{SK/T})`."""
    return (1 - share ** 2) * (1 - math.sqrt(s * k / T)) / 4


def steps_thm31(S, K, T, L, tau_max, eta_fraction: float = 1.0) -> Steps:
    r""":math:`(\beta,\gamma,\eta)` of Theorem 3.1 with :math:`\eta = ` ``eta_fraction`` :math:`\cdot\,\eta_{\max}`."""
    if not 0 < eta_fraction <= 1:
        raise ValueError(f"eta_fraction must lie in (0, 1]; got {eta_fraction}")
    eta = eta_fraction * eta_max_thm31(S, K, T, L, tau_max)
    beta = math.sqrt(S * K / T)
    return Steps(beta, beta / (4 * float(L)), eta)


def a_and_kappa(S, K, T, L, tau_max, eta) -> tuple[float, float]:
    r""":math:`a = \tau_{\max}^2\beta^2 + 20e^2\eta^2K^2L^2` and :math:`\kappa = (3-4a)/(1-4a-\sqrt{SK/T})`;
    a ValueError naming them when the condition :math:`1-4a-\sqrt{SK/T} > 0` fails."""
    S, K, T = _sizes(S, K, T)
    L, tau_max, eta = _positive("L", L), _delay("tau_max", tau_max), _positive("eta", eta)
    beta2 = S * K / T
    a = tau_max ** 2 * beta2 + 20 * E ** 2 * eta ** 2 * K ** 2 * L ** 2
    denom = 1 - 4 * a - math.sqrt(beta2)
    if denom <= 0:
        raise ValueError(f"Theorem 3.1's condition 1 - 4a - sqrt(SK/T) > 0 fails: a = {a:.4g}, "
                         f"1 - 4a - sqrt(SK/T) = {denom:.4g} (S={S}, K={K}, T={T}, L={L:g}, tau_max={tau_max:g}, "
                         f"eta={eta:g})")
    return a, (3 - 4 * a) / denom


def appc_bound(S, K, T, N, L, sigma2, Delta, tau_max, eta) -> float:
    r"""App. C's explicit right side for :math:`\frac1T\sum_t\mathbb E\|\nabla f(\theta^t)\|^2` (order-level "≲")."""
    _, kappa = a_and_kappa(S, K, T, L, tau_max, eta)
    N, sigma2, Delta = _count("N", N), _delay("sigma2", sigma2), _delay("Delta", Delta)
    return kappa * ((4 * L * Delta + 26 * sigma2) / math.sqrt(S * K * T) + 200 * E ** 2 * S * sigma2 / T
                    + 8 * L ** 2 * sigma2 / (N * K * T))


def steps_thm41(S, K, T) -> Steps:
    r""":math:`\beta = \sqrt{SK/T}`, :math:`\gamma = (SK)^{1/4}/T^{3/4}`, :math:`\eta = 1/(K\sqrt T)`."""
    S, K, T = _sizes(S, K, T)
    return Steps(math.sqrt(S * K / T), (S * K) ** 0.25 / T ** 0.75, 1 / (K * math.sqrt(T)))


def thm41_terms(S, K, T, L, sigma, Delta, tau_max, tau_bar) -> dict[str, float]:
    r"""Theorem 4.1's right side term by term (constants dropped), plus ``"omitted (App. D.3)"``:
    :math:`\bar\tau\tau_{\max}L(SK)^{3/4}/T^{5/4}`, which the statement leaves out (digest §5.3)."""
    S, K, T = _sizes(S, K, T)
    L, sigma, Delta = _positive("L", L), _delay("sigma", sigma), _delay("Delta", Delta)
    tm, tb, sk = _delay("tau_max", tau_max), _delay("tau_bar", tau_bar), S * K
    return {"leading": (Delta + L + sigma + math.sqrt(L * sigma)) / (sk * T) ** 0.25,
            "noise": sigma * math.sqrt(sk / T),
            "delay": math.sqrt(L * sigma * tm) / (T ** 0.375 * sk ** 0.125),
            "mean delay": tb * sigma * math.sqrt(S / T),
            "max delay": tm * L * sk ** 0.25 / T ** 0.75,
            "mixed delay": tb * math.sqrt(L * sigma * tm) * sk ** 0.375 / T ** 0.875,
            "omitted (App. D.3)": tb * tm * L * sk ** 0.75 / T ** 1.25}


def table1_rates(S, K, T, tau_max, tau_bar, *, sigma_g: float = 1.0, kappa: float = 1.0) -> dict[str, float]:
    r"""Table 1's rates of :math:`\frac1T\sum\mathbb E\|\nabla f\|` with constants dropped: FedBuff
    :math:`K^{1/4}\sigma_g/(ST)^{1/4}+\sqrt{\tau_{\max}\bar\tau/T}`; CA²FL :math:`(SKT)^{-1/4}+\sqrt{\tau_{\max}/T}`
    (Table 1; §3.2's text implies :math:`\sqrt{\tau_{\max}\bar\tau/T}` instead, digest §3.5); DeFedAvg-nIID
    :math:`(SKT)^{-1/4}+(KT)^{-1/2}`; FADAS :math:`(ST)^{-1/4}+\sqrt{\tau_{\max}\bar\tau/T}`; MasFL
    :math:`\sqrt\kappa/(SKT)^{1/4}+\sqrt{\kappa/T}`; AdaMasFL :math:`(SKT)^{-1/4}+\sqrt{\tau_{\max}}/T^{3/8}`."""
    S, K, T = _count("S", S), _count("K", K), _count("T", T)
    tm, tb = _delay("tau_max", tau_max), _delay("tau_bar", tau_bar)
    sg, kappa = _delay("sigma_g", sigma_g), _positive("kappa", kappa)
    skt = (S * K * T) ** 0.25
    return {"FedBuff": K ** 0.25 * sg / (S * T) ** 0.25 + math.sqrt(tm * tb / T),
            "CA2FL": 1 / skt + math.sqrt(tm / T),
            "DeFedAvg-nIID": 1 / skt + 1 / math.sqrt(K * T),
            "FADAS": 1 / (S * T) ** 0.25 + math.sqrt(tm * tb / T),
            "MasFL": math.sqrt(kappa) / skt + math.sqrt(kappa / T),
            "AdaMasFL": 1 / skt + math.sqrt(tm) / T ** 0.375}
