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

Preconditions.  At the theorem's own :math:`\eta_0=2/(\tilde\mu\gamma)` three hold by the choice of :math:`\gamma`,
each being one term of its max (:data:`BY_CONSTRUCTION`): :math:`\eta_0\le\hat\eta_0` (:math:`\tilde\eta_0`),
:math:`\gamma\ge E` (so :math:`\eta_t\le2\eta_{t+E}`) and Lemma B.2/C.3's
:math:`\eta_t^2\le1/(2c_3s(1+2s))`, :math:`s=t+1-t_0`.  The fourth, :math:`\eta_t\le\tilde\mu/c_2` (used unstated in
Lemma B.1's last step), is not implied by :math:`\gamma`.  For a general :math:`\eta_t=\beta/(t+\gamma)` (Theorems
B.4/C.5) all of them plus :math:`\beta>1/\tilde\mu` are evaluated; :math:`s` runs up to :math:`E` (Lemma B.2) or
:math:`E+1` (Lemma C.3: the :math:`4E^2+10E+6=2(E+1)(2E+3)` term of Theorems 3.2/3.3's :math:`\gamma` is exactly
that condition at :math:`s=E+1`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

THEOREMS = {"3.1": "full participation", "3.2": "Scheme I", "3.3": "Scheme II"}
BY_CONSTRUCTION = ("eta_0 <= eta0_hat (eta0_tilde for 3.2/3.3)", "gamma >= E, so eta_t <= 2 eta_{t+E}",
                   "Lemma B.2/C.3's eta_t^2 <= 1/(2 c3 s(1+2s))")


@dataclass(frozen=True)
class Condition:
    """A precondition ``value <= limit``."""

    name: str
    value: float
    limit: float

    @property
    def met(self) -> bool:
        return self.value <= self.limit


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
    mu: float = math.nan
    L: float = math.nan

    def bound(self, theorem: str, t) -> np.ndarray:
        """:math:`v/(\\gamma+t)` of Theorem ``theorem``."""
        return self.v[theorem] / (self.gamma[theorem] + np.asarray(t, dtype=np.float64))

    def eta0(self, theorem: str) -> float:
        return 2.0 / (self.mu_tilde * self.gamma[theorem])

    def schedule(self, theorem: str) -> dict:
        """The theorem's step size :math:`2/(\\tilde\\mu(t+\\gamma))` as a schedule spec."""
        return {"name": "inverse", "lr0": self.eta0(theorem), "t0": self.gamma[theorem]}

    def hidden_condition(self, theorem: str) -> Condition:
        """Lemma B.1's unstated :math:`\\eta_t\\le\\tilde\\mu/c_2` at the theorem's own :math:`\\eta_0`: the choice of
        :math:`\\gamma` does not imply it (digest §3.1, e.g. for :math:`E=1`)."""
        return Condition("eta_0 <= mu_tilde / c2", self.eta0(theorem), self.mu_tilde / self.c["c2"])

    def schedule_conditions(self, theorem: str, beta: float, gamma: float) -> list[Condition]:
        """Preconditions of Theorem B.4 (for 3.1) or C.5 (for 3.2/3.3) for :math:`\\eta_t=\\beta/(t+\\gamma)`.

        Limits that depend on :math:`\\delta` are their suprema over :math:`\\delta>0`:
        :math:`\\tilde\\mu<\\mu-\\bar\\epsilon L` and :math:`\\hat\\eta_0<(\\mu-\\bar\\epsilon L)/((c_2/6)c_4(2E^2-E)\\log E)`
        (dropping :math:`2\\sigma^2/\\Delta_0` and :math:`c_1c_3>0` from its denominator; :math:`c_6` in place of
        :math:`(2E^2-E)\\log E` for :math:`\\tilde\\eta_0`).  So a condition that fails here fails for every
        :math:`\\delta`; all met is necessary, not sufficient, for one :math:`\\delta` to meet them together.  The
        step-size condition is worst in the first round (:math:`\\eta` decreases):
        :math:`\\max_{1\\le s\\le S}2c_3s(1+2s)\\eta_{s-1}^2\\le1` with :math:`S=E` (3.1) or :math:`E+1` (3.2/3.3).
        """
        E, c = self.c["E"], self.c
        mu_best = self.mu - self.eps_bar * self.L

        def eta(t):
            return beta / (t + gamma)

        harmonic = (2 * E * E - E) * math.log(E) if theorem == "3.1" else c["c6"]
        cap = mu_best / (c["c2"] / 6.0 * c["c4"] * harmonic) if harmonic > 0 else math.inf
        span = E if theorem == "3.1" else E + 1
        worst = max(2.0 * c["c3"] * s * (1 + 2 * s) * eta(s - 1) ** 2 for s in range(1, span + 1))
        return [Condition("1/beta < mu_tilde", 1.0 / beta, mu_best),
                Condition("eta_0 <= " + ("eta0_hat" if theorem == "3.1" else "eta0_tilde"), eta(0), cap),
                Condition("E <= gamma (so eta_t <= 2 eta_{t+E})", float(E), float(gamma)),
                Condition(f"max over s <= {span} of 2 c3 s (1 + 2s) eta_(s-1)^2 <= 1", worst, 1.0),
                Condition("eta_0 <= mu_tilde / c2 (Lemma B.1, unstated)", eta(0), mu_best / c["c2"])]


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
                                eta_hat, eta_tilde, B, gamma, v, delta0, mu, L)

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
