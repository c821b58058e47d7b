r"""The constants of P-FedAvg's convergence theorems 3.1–3.3, computed exactly, with their preconditions.

Seed 003 §3 (L195–263); digest 003 §3.1–§3.3.  Given :math:`\mu, L`, the :math:`W_1` sensitivities
:math:`\epsilon_i\ge0`, weights :math:`p`, the A2.5/A2.6 constants :math:`\sigma^2,\varsigma^2`,
:math:`\Delta_0=\mathbb E\|\bar\theta^0-\theta^{PS}\|^2`, :math:`E`, :math:`K`, :math:`N` and a free :math:`\delta>0`:

.. math::
    \bar\epsilon=\textstyle\sum_ip_i\epsilon_i,\quad \tilde\mu=\mu-(1+\delta)\bar\epsilon L,\quad
    c_1=\frac{L(1+\epsilon_{\max})^2}{2\delta\bar\epsilon},\quad c_2=4[\sigma^2+L^2(1+\epsilon_{\max})^2],\quad
    c_3=12\sigma^2+18L^2(1+\epsilon_{\max})^2,

    c_4=16\sigma^2+12\varsigma^2+\frac{8\sigma^2+12\varsigma^2}{\Delta_0},\quad
    c_5=(48\sigma^2+36\varsigma^2)\Delta_0+24\sigma^2+36\varsigma^2,\quad c_6=(2E^2+3E+1)\log(E+1),

    \hat\eta_0=\frac{\tilde\mu}{2\sigma^2/\Delta_0+(c_1c_3+c_2/6)c_4(2E^2-E)\log E},\quad
    \tilde\eta_0=\frac{\tilde\mu}{2\sigma^2/\Delta_0+(c_1c_3+c_2/6)c_4c_6}

(the lemma form of B.2/C.3 and inequality (15); ``eta0_form="main"`` drops the :math:`1/\Delta_0` as the
main text does), :math:`B=2\sigma^2+(4c_1\hat\eta_0+4c_2\hat\eta_0^2)c_5(2E^2-E)\log E`,
:math:`B_{1,2}=2\sigma^2+(4c_1\tilde\eta_0+4c_2\tilde\eta_0^2+\beta_{1,2})c_5c_6` with :math:`\beta_1=1/K` and
:math:`\beta_2=\frac{N-K}{K(N-1)}` (``b2_form="appendix"``: the A L566 typo :math:`\frac{N-K}{KN(N-1)}`).
Theorem 3.x: :math:`\eta_t=2/(\tilde\mu(t+\gamma))` and :math:`\mathbb E\|\bar\theta^t-\theta^{PS}\|^2\le v/(\gamma+t)` with

.. math::
    \gamma_{3.1}=\max\Big\{\frac{2}{\tilde\mu\hat\eta_0},E,\frac2{\tilde\mu}\sqrt{(4E^2+2E)c_3}\Big\},\quad
    \gamma_{3.2/3.3}=\max\Big\{\frac{2}{\tilde\mu\tilde\eta_0},E,\frac2{\tilde\mu}\sqrt{(4E^2+10E+6)c}\Big\},\quad
    v=\max\Big\{\frac{4B_i}{\tilde\mu^2},\gamma\Delta_0\Big\},

with :math:`c=c_3` (Thm C.5's proof; ``thm33_root="c5"`` for the main text's :math:`c_5` in Thm 3.3).
Hidden preconditions checked here: :math:`\eta_0\le\tilde\mu/c_2` (Lemma B.1's last step) and
:math:`\eta_0^2\le1/(6c_3)` (Lemma B.2 at :math:`t=t_0`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

THEOREMS = {"3.1": "full participation", "3.2": "Scheme I", "3.3": "Scheme II"}


@dataclass
class TheoremConstants:
    """All constants of §3.1 for one instance and one :math:`\\delta`; ``applicable`` is False with ``reasons``
    when the theorems cannot be instantiated (then the numeric fields are ``nan``)."""

    applicable: bool
    reasons: list[str]
    delta: float
    eps_bar: float
    eps_max: float
    mu_tilde: float
    c: dict[str, float] = field(default_factory=dict)  # c1..c6
    eta_hat0: float = math.nan
    eta_tilde0: float = math.nan
    B: dict[str, float] = field(default_factory=dict)  # theorem -> B, B1, B2
    gamma: dict[str, float] = field(default_factory=dict)
    v: dict[str, float] = field(default_factory=dict)
    delta0: float = math.nan

    def bound(self, theorem: str, t) -> np.ndarray:
        """:math:`v/(\\gamma+t)` of Theorem ``theorem``."""
        return self.v[theorem] / (self.gamma[theorem] + np.asarray(t, dtype=np.float64))

    def eta0(self, theorem: str) -> float:
        return 2.0 / (self.mu_tilde * self.gamma[theorem])

    def schedule(self, theorem: str) -> dict:
        """The theorem's step size :math:`2/(\\tilde\\mu(t+\\gamma))` as a schedule spec."""
        return {"name": "inverse", "lr0": self.eta0(theorem), "t0": self.gamma[theorem]}

    def hidden_conditions(self, theorem: str) -> dict[str, bool]:
        """The unstated preconditions at the theorem's own :math:`\\eta_0` (digest §3.1–§3.2)."""
        eta0 = self.eta0(theorem)
        cap = self.eta_hat0 if theorem == "3.1" else self.eta_tilde0
        return {"eta0 <= eta0_hat (or eta0_tilde)": eta0 <= cap * (1 + 1e-12),
                "eta0 <= mu_tilde / c2": eta0 <= self.mu_tilde / self.c["c2"],
                "eta0^2 <= 1 / (6 c3)": eta0 ** 2 <= 1.0 / (6.0 * self.c["c3"]),
                "gamma >= E (eta_t <= 2 eta_{t+E})": self.gamma[theorem] >= self.c["E"]}


def _nan_constants(reasons, delta, eps_bar, eps_max, mu_tilde) -> TheoremConstants:
    return TheoremConstants(False, reasons, delta, eps_bar, eps_max, mu_tilde)


def theorem_constants(mu: float, L: float, sensitivities, weights, sigma2: float, varsigma2: float, delta0: float,
                      E: int, K: int, delta: float | str = "midpoint", eta0_form: str = "lemma",
                      b2_form: str = "main", thm33_root: str = "c3") -> TheoremConstants:
    """Constants of Theorems 3.1–3.3 (see the module docstring).

    ``delta``: a number in :math:`(0, \\mu/(\\bar\\epsilon L)-1)`, ``"midpoint"`` (half that range, so
    :math:`\\tilde\\mu=(\\mu-\\bar\\epsilon L)/2`; the digest's §4.1.4 choice) or ``"optimal"`` (minimises the
    Theorem 3.1 :math:`v` over :math:`\\delta`).
    """
    if eta0_form not in ("lemma", "main") or b2_form not in ("main", "appendix") or thm33_root not in ("c3", "c5"):
        raise ValueError("eta0_form must be 'lemma'|'main', b2_form 'main'|'appendix', thm33_root 'c3'|'c5'")
    eps = np.asarray(sensitivities, dtype=np.float64)
    p = np.asarray(weights, dtype=np.float64)
    if np.any(eps < 0):
        raise ValueError("sensitivities are W1 constants and must be >= 0 (pass |eps_i|)")
    if int(E) != E or E < 1 or int(K) != K or K < 1:
        raise ValueError(f"E and K must be integers >= 1; got E={E}, K={K}")
    N = len(p)
    eps_bar, eps_max = float(p @ eps), float(eps.max())
    reasons = []
    if eps_bar * L >= mu:
        reasons.append(f"sum_i p_i |eps_i| * L = {eps_bar * L:.4g} >= mu = {mu:g}: mu_tilde <= 0 for every delta > 0, "
                       "so Prop. 2.8's contraction and Theorems 3.1-3.3 give nothing")
    if delta0 <= 0:
        reasons.append("Delta_0 = 0 (start at theta_PS): c4 is infinite, eta0_hat = eta0_tilde = 0, so the theorems "
                       "cannot be instantiated")
    if eps_bar == 0:
        reasons.append("eps_bar = 0: c1 = L(1+eps_max)^2/(2 delta eps_bar) is infinite (no performative effect)")
    delta_max = mu / (eps_bar * L) - 1.0 if eps_bar > 0 else math.inf
    if reasons:
        return _nan_constants(reasons, math.nan, eps_bar, eps_max, math.nan)

    def build(d: float) -> TheoremConstants:
        mu_t = mu - (1.0 + d) * eps_bar * L
        a = (1.0 + eps_max) ** 2
        c1 = L * a / (2.0 * d * eps_bar)
        c2 = 4.0 * (sigma2 + L * L * a)
        c3 = 12.0 * sigma2 + 18.0 * L * L * a
        c4 = 16.0 * sigma2 + 12.0 * varsigma2 + (8.0 * sigma2 + 12.0 * varsigma2) / delta0
        c5 = (48.0 * sigma2 + 36.0 * varsigma2) * delta0 + 24.0 * sigma2 + 36.0 * varsigma2
        c6 = (2 * E * E + 3 * E + 1) * math.log(E + 1)
        h = (2 * E * E - E) * math.log(E)
        lead = 2.0 * sigma2 / (delta0 if eta0_form == "lemma" else 1.0)
        eta_hat = mu_t / (lead + (c1 * c3 + c2 / 6.0) * c4 * h) if lead + h > 0 else math.inf
        eta_tilde = mu_t / (lead + (c1 * c3 + c2 / 6.0) * c4 * c6)
        beta2 = (N - K) / (K * (N - 1)) if b2_form == "main" else (N - K) / (K * N * (N - 1))
        B = {"3.1": 2 * sigma2 + (4 * c1 * eta_hat + 4 * c2 * eta_hat ** 2) * c5 * h if math.isfinite(eta_hat) else math.inf,
             "3.2": 2 * sigma2 + (4 * c1 * eta_tilde + 4 * c2 * eta_tilde ** 2 + 1.0 / K) * c5 * c6,
             "3.3": 2 * sigma2 + (4 * c1 * eta_tilde + 4 * c2 * eta_tilde ** 2 + beta2) * c5 * c6}
        root33 = c3 if thm33_root == "c3" else c5
        gamma = {"3.1": max(2.0 / (mu_t * eta_hat), E, 2.0 / mu_t * math.sqrt((4 * E * E + 2 * E) * c3)),
                 "3.2": max(2.0 / (mu_t * eta_tilde), E, 2.0 / mu_t * math.sqrt((4 * E * E + 10 * E + 6) * c3)),
                 "3.3": max(2.0 / (mu_t * eta_tilde), E, 2.0 / mu_t * math.sqrt((4 * E * E + 10 * E + 6) * root33))}
        v = {th: max(4.0 * B[th] / mu_t ** 2, gamma[th] * delta0) for th in THEOREMS}
        notes = []
        if E == 1:
            notes.append("E = 1: log E = 0, so eta0_hat = mu_tilde/(2 sigma^2 / Delta_0) and B = 2 sigma^2; Lemma B.1's "
                         "hidden condition eta_t <= mu_tilde/c2 is then not implied by gamma")
        return TheoremConstants(True, notes, d, eps_bar, eps_max, mu_t,
                                {"c1": c1, "c2": c2, "c3": c3, "c4": c4, "c5": c5, "c6": c6, "E": E},
                                eta_hat, eta_tilde, B, gamma, v, delta0)

    if delta == "midpoint":
        return build(0.5 * delta_max)
    if delta == "optimal":
        from scipy.optimize import minimize_scalar

        res = minimize_scalar(lambda z: math.log(build(delta_max / (1.0 + math.exp(-z))).v["3.1"]),
                              bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-10})
        return build(delta_max / (1.0 + math.exp(-res.x)))
    if not 0 < float(delta) < delta_max:
        raise ValueError(f"delta must lie in (0, mu/(eps_bar L) - 1 = {delta_max:.4g}); got {delta}")
    return build(float(delta))


def for_gaussian(problem, E: int, K: int, **kwargs) -> TheoremConstants:
    """:func:`theorem_constants` with the exact constants of the Gaussian-mean testbed (digest §4.1.4)."""
    gap = problem.theta0 - problem.theta_ps
    delta0 = 0.0 if abs(gap) <= 1e-9 * max(1.0, abs(problem.theta_ps)) else gap ** 2  # theta0 = theta_PS up to rounding
    return theorem_constants(problem.mu, problem.L, problem.sensitivities_w1, problem.p, problem.sigma2,
                             problem.varsigma2, delta0, E, K, **kwargs)
