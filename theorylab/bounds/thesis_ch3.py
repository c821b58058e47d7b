r"""Thesis ch. 3 upper bound: Theorem 3.4.1 / A.12 (FedStale), its step-size conditions and the optimal beta.

Source: seed 001 Ch. 3, Theorem 3.4.1 (3.10), Corollaries 3.4.2-3.4.3 (3.11)-(3.12), eq. (3.14); App. B,
Theorem A.12 (B.89), (B.106)-(B.107), (B.113)-(B.115), (B.124)/(B.129); digest 001 §3.4, §4.8, §4.9,
§6 errata 16, 21.

Participation summaries (Theorem 3.4.1): :math:`1/p_{\rm var}=\frac1N\sum_i(1-p_i)/p_i`,
:math:`p_{\rm avg}=\frac1N\sum_ip_i`, :math:`p_{\min}=\min_ip_i`.  Effective step :math:`\eta=\eta_s\eta_cK`;
:math:`\kappa_K = \eta_c^2L^2K(K-1)`.  The exact right side (B.124), with :math:`F(w^{(1)})-F^*` in place of
:math:`F(w^{(1)})-\mathbb E\psi^{(T)}` (an upper bound since :math:`\psi\ge F\ge F^*`), is

.. math::
    \frac{4\Delta_1}{\eta T}+\beta^2\frac{48\eta L}{Tp_{\rm var}}\frac{1-p_{\min}}{p_{\min}}H^{(1)}
    +\frac{4\eta L}{N}\Big(1+\frac1{p_{\rm var}}\Big)\frac{\sigma^2}K+4\kappa_K\frac{\sigma^2}K
    +\frac{48\eta L\kappa_K}{Np_{\rm var}}\frac{\sigma^2}K
    +\beta^2\frac{48\eta Lp_{\rm avg}}{p_{\rm var}p_{\min}}(1+2\kappa_K)\frac{\sigma^2}K
    +16\kappa_K\sigma_g^2+\frac{192\eta L\kappa_K}{Np_{\rm var}}\sigma_g^2
    +(1-\beta)^2\frac{24\eta L}{Np_{\rm var}}\sigma_g^2
    +\beta^2\frac{384\eta Lp_{\rm avg}}{p_{\rm var}p_{\min}}\kappa_K\sigma_g^2
    +\frac{12\eta L}{NTp_{\rm var}}\sigma_g^2 .

The stochastic term's factor is :math:`\frac1N\sum_i\frac1{p_i}=1+\frac1{p_{\rm var}}` as in (B.124); the main
text's (3.10) writes :math:`1/p_{\rm var}` (digest §6 erratum 21), which :func:`rhs_b124` does not follow.
Minimising its :math:`\beta`-dependent part :math:`\beta^2a+(1-\beta)^2b` gives :math:`\beta^*=b/(a+b)`
(:func:`beta_star_exact`), the form of (3.14) with :math:`a_1=2`, :math:`a_2=16` plus the memory-initialisation
and :math:`\kappa_K\sigma^2` corrections (digest §4.9).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np


def participation_summaries(p) -> dict[str, float]:
    """``p_var``, ``p_avg``, ``p_min`` and ``mean_inv_p`` :math:`=\\frac1N\\sum_i1/p_i=1+1/p_{\\rm var}` (Thm 3.4.1);
    ``p_var`` is ``inf`` under full participation."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or len(p) < 1 or np.any(p <= 0) or np.any(p > 1):
        raise ValueError(f"p must be a non-empty vector of participation probabilities in (0, 1]; got {p}")
    inv_var = float(np.mean((1 - p) / p))
    return {"p_var": math.inf if inv_var == 0 else 1 / inv_var, "inv_p_var": inv_var, "p_avg": float(p.mean()),
            "p_min": float(p.min()), "mean_inv_p": float(np.mean(1 / p))}


@dataclass(frozen=True)
class Ch3Setting:
    r"""Constants of Theorem 3.4.1: clients' :math:`p_i`, :math:`L`, :math:`\sigma^2` (A7), uniform
    :math:`\sigma_g^2` (A8), :math:`K`, :math:`\Delta_1=F(w^{(1)})-F^*`, :math:`H^{(1)}`, steps
    :math:`\eta_c,\eta_s`, :math:`\beta` and horizon :math:`T`."""

    p: tuple
    L: float
    sigma2: float
    sigma_g2: float
    K: int
    gap: float
    H1: float
    eta_c: float
    eta_s: float
    beta: float
    T: int

    def __post_init__(self):
        participation_summaries(self.p)
        for name in ("L", "eta_c", "eta_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0; got {getattr(self, name)}")
        for name in ("sigma2", "sigma_g2", "gap", "H1"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0; got {getattr(self, name)}")
        if not 0 <= self.beta <= 1:
            raise ValueError(f"beta must lie in [0, 1]; got {self.beta}")
        for name in ("K", "T"):
            if int(getattr(self, name)) != getattr(self, name) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {getattr(self, name)}")

    @property
    def N(self) -> int:
        return len(self.p)

    @property
    def eta(self) -> float:
        """:math:`\\eta=\\eta_s\\eta_cK`."""
        return self.eta_s * self.eta_c * self.K

    @property
    def drift(self) -> float:
        """:math:`\\kappa_K=\\eta_c^2L^2K(K-1)`."""
        return self.eta_c ** 2 * self.L ** 2 * self.K * (self.K - 1)

    def replace(self, **changes) -> "Ch3Setting":
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)


def step_conditions(s: Ch3Setting) -> list[dict]:
    """Every step-size condition the proof of Theorem A.12 uses (digest §4.8): ``name``, ``value``, ``limit``,
    ``holds`` and ``stated`` (whether (B.89) states it; the main text also drops (B.89)'s middle term)."""
    ps = participation_summaries(s.p)
    inv_var, p_avg, p_min, N, L, b2 = ps["inv_p_var"], ps["p_avg"], ps["p_min"], s.N, s.L, s.beta ** 2
    eta = s.eta

    def cap(num: float, den: float) -> float:
        return math.inf if den == 0 else num / den

    rows = [
        ("eta_c <= 1/(8LK)", s.eta_c, 1 / (8 * L * s.K), True),
        ("eta_s <= N p_var / (12 (1-beta)^2)", s.eta_s, cap(N, 12 * (1 - s.beta) ** 2 * inv_var), True),
        ("eta_s <= 2 N p_var / 3", s.eta_s, cap(2 * N, 3 * inv_var), True),
        ("eta_s <= p_var p_min / (3 beta^2 p_avg)", s.eta_s, cap(p_min, 3 * b2 * p_avg * inv_var), True),
        ("(B.106) eta^2 <= N p_var / (24 beta^2 L^2)", eta ** 2, cap(N, 24 * b2 * L ** 2 * inv_var), False),
        ("(B.107) eta^2 <= p_min^2 p_var / (48 beta^2 L^2 (1-p_avg)(2-p_min))", eta ** 2,
         cap(p_min ** 2, 48 * b2 * L ** 2 * (1 - p_avg) * (2 - p_min) * inv_var), False),
        ("(B.113) eta <= N p_var / (96 (1-beta)^2 L)", eta, cap(N, 96 * (1 - s.beta) ** 2 * L * inv_var), False),
        ("(B.114) eta <= N p_var / (12 L)", eta, cap(N, 12 * L * inv_var), False),
        ("(B.115) eta <= p_var p_min / (24 beta^2 L p_avg)", eta, cap(p_min, 24 * b2 * L * p_avg * inv_var), False),
        ("eta L <= 1/2 (delta = eta^2 L <= eta/2)", eta * L, 0.5, False),
    ]
    return [{"name": n, "value": v, "limit": lim, "holds": bool(v <= lim), "stated": st} for n, v, lim, st in rows]


def admissible(s: Ch3Setting) -> bool:
    """Whether every condition of :func:`step_conditions` holds."""
    return all(row["holds"] for row in step_conditions(s))


def rhs_b124(s: Ch3Setting) -> dict[str, float]:
    """The terms of (B.124) (module docstring) and their ``total``."""
    ps = participation_summaries(s.p)
    inv_var, ratio = ps["inv_p_var"], ps["p_avg"] / ps["p_min"]
    eta, L, N, T, K, kd, b2 = s.eta, s.L, s.N, s.T, s.K, s.drift, s.beta ** 2
    noise, het = s.sigma2 / K, s.sigma_g2
    terms = {
        "iterate init": 4 * s.gap / (eta * T),
        "memory init": b2 * 48 * eta * L / T * inv_var * (1 - ps["p_min"]) / ps["p_min"] * s.H1,
        "stochastic": 4 * eta * L / N * ps["mean_inv_p"] * noise,
        "stochastic drift": 4 * kd * noise + 48 * eta * L * kd / N * inv_var * noise,
        "stochastic stale": b2 * 48 * eta * L * inv_var * ratio * (1 + 2 * kd) * noise,
        "heterogeneity drift": 16 * kd * het + 192 * eta * L * kd / N * inv_var * het,
        "heterogeneity fresh": (1 - s.beta) ** 2 * 24 * eta * L / N * inv_var * het,
        "heterogeneity stale": b2 * 384 * eta * L * inv_var * ratio * kd * het,
        "heterogeneity last": 12 * eta * L / (N * T) * inv_var * het,
    }
    terms["total"] = sum(terms.values())
    return terms


def corollary_fedavg(s: Ch3Setting) -> dict[str, float]:
    """Corollary 3.4.2 (3.11): (B.124) at :math:`\\beta=0` (U-FedAvg)."""
    return rhs_b124(s.replace(beta=0.0))


def corollary_fedvarp(s: Ch3Setting) -> dict[str, float]:
    """Corollary 3.4.3 (3.12): (B.124) at :math:`\\beta=1` (U-FedVARP)."""
    return rhs_b124(s.replace(beta=1.0))


def beta_star(s: Ch3Setting, a1: float, a2: float) -> float:
    """(3.14) with the user's constants :math:`a_1,a_2>0`."""
    if not (a1 > 0 and a2 > 0):
        raise ValueError(f"a1 and a2 must be > 0; got {a1}, {a2}")
    ps = participation_summaries(s.p)
    ratio, N = ps["p_avg"] / ps["p_min"], s.N
    den = a1 * ratio * s.sigma2 / s.K + (1 / N + a2 * ratio * s.drift) * s.sigma_g2
    return 0.0 if s.sigma_g2 == 0 else s.sigma_g2 / N / den


def beta_star_exact(s: Ch3Setting) -> float:
    r"""Minimiser over :math:`\beta\in[0,1]` of (B.124) at fixed steps: :math:`b/(a+b)` with
    :math:`b=\sigma_g^2/N` and
    :math:`a=\frac{p_{\rm avg}}{p_{\min}}[2\frac{\sigma^2}K(1+2\kappa_K)+16\kappa_K\sigma_g^2]
    +\frac{2(1-p_{\min})}{p_{\min}T}H^{(1)}` (both divided by the common factor :math:`24\eta L/p_{\rm var}`)."""
    ps = participation_summaries(s.p)
    ratio, p_min = ps["p_avg"] / ps["p_min"], ps["p_min"]
    b = s.sigma_g2 / s.N
    a = (ratio * (2 * s.sigma2 / s.K * (1 + 2 * s.drift) + 16 * s.drift * s.sigma_g2)
         + 2 * (1 - p_min) / (p_min * s.T) * s.H1)
    return 0.0 if b == 0 else b / (a + b)


def largest_admissible_eta_s(s: Ch3Setting) -> float:
    """The largest :math:`\\eta_s` (other constants fixed) meeting every condition of :func:`step_conditions`,
    by bisection (each condition is increasing in :math:`\\eta_s`); 0 if :math:`\\eta_c` alone already fails."""
    if not step_conditions(s.replace(eta_s=1e-300))[0]["holds"]:
        return 0.0
    lo, hi = 0.0, 1.0
    while admissible(s.replace(eta_s=hi)):
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if admissible(s.replace(eta_s=mid)) else (lo, mid)
    return lo
