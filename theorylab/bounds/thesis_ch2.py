r"""Thesis ch. 2 theory calculators: Theorem 2.3.3 (reconciled) and the q-optimisation (2.19)/(A.192).

Source: seed 001 Ch. 2, Theorem 2.3.3, eqs. (2.12)-(2.18), proof App. B.C (A.95)-(A.167), App. E (A.187)-(A.207);
digest 001 §4.3, §4.5, §6 errata 1, 2 and 19, §7.4.

**Reconciled Theorem 2.3.3** (digest §6 erratum 1: the main text omits :math:`1/\sum_t\eta_t`, the appendix the
:math:`1/\pi^\top q` on the first term).  With decreasing steps satisfying (2.12) and :math:`T\ge T_P`,

.. math::
    \Big(\sum_{t=1}^T\eta_t\Big)\,\mathbb E[F_B(\bar w^{(T)})-F_B^*] \le \bar\epsilon_{\rm opt}(q)
    = \frac{\tfrac12 q^\top\Sigma q+v}{\pi^\top q}+\psi+\frac{\phi}{\ln(1/\lambda(P))},

:math:`\Sigma={\rm diag}(2(K+1)\pi_i\sigma_i^2S_2)` (2.14), :math:`S_2=\sum_{t\ge1}\eta_t^2`,
:math:`v=\frac2K{\rm diam}(W)^2+\frac14MQ(S_2+\pi^2/6)` (2.15; the thesis' :math:`\pi/6` is a typo, erratum 19),
:math:`\psi=(4L(1+KQ)\Gamma+2K^2G^2)S_2+H\sum_{t<T_P}\eta_t` (2.16),
:math:`\phi=2KDGQ\sum_{t\ge1}\ln(2C_PHt)\,\eta_{t-\mathcal J^{(t)}}^2` (2.18), with
:math:`\mathcal J^{(t)}=\min\{\max\{\lceil\ln(2C_PHt)/\ln(1/\lambda)\rceil,T_P\},t\}` (2.17) and :math:`\eta_0:=\eta_1`.

**Step schedule.** :class:`PowerSchedule` is :math:`\eta_t=\eta_1t^{-a}`, which satisfies (2.12) iff
:math:`1/2<a\le1`.  :math:`S_2=\eta_1^2\zeta(2a)` exactly (Hurwitz zeta); :math:`\phi`'s series is summed to
``terms`` and its tail bounded by an integral (:func:`phi_series`), so every right side is reported as a truncated
value (a lower end) and a certified upper end.

**q-optimisation** (A.188)-(A.192): minimise :math:`J(q)=\frac{\frac12q^\top Aq+B}{\pi^\top q}+C` over
:math:`q\ge0`, :math:`\|q\|_1=Q`, :math:`A={\rm diag}(A_{ii})\succ0`.  :func:`optimal_q_cvx` solves its perspective
form (A.194) (:math:`s=1/\pi^\top q`, :math:`y=sq`: minimise :math:`\frac12\sum_iA_{ii}y_i^2/s+Bs` s.t.
:math:`\pi^\top y=1`, :math:`1^\top y=Qs`, :math:`y\ge0`) with cvxpy; :func:`optimal_q_kkt` solves the KKT system
in closed form: for :math:`q_i>0`, :math:`q_i=(\iota\pi_i-\theta)/A_{ii}` (A.204), where stationarity of
:math:`J` gives :math:`\iota=J(q)-C` and, on a support :math:`S` with :math:`a_k=\sum_S\pi_i^k/A_{ii}`,
:math:`\iota a_1-\theta a_0=Q` (A.206) and :math:`\iota^2a_2-\theta^2a_0=2B`, i.e.
:math:`\iota=\big(-a_1Q+\sqrt{a_1^2Q^2+\Delta(Q^2+2Ba_0)}\big)/\Delta`, :math:`\Delta=a_0a_2-a_1^2`.  The support
is a set of the largest :math:`\pi_i` (the sign of :math:`\iota\pi_i-\theta`), found by enumerating thresholds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import zeta


def _positive(name: str, value: float, allow_zero: bool = False) -> float:
    value = float(value)
    if not (value >= 0 if allow_zero else value > 0) or not math.isfinite(value):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite; got {value}")
    return value


@dataclass(frozen=True)
class PowerSchedule:
    r"""Client steps :math:`\eta_t=\eta_1t^{-a}`, :math:`t\ge1`; (2.12) needs :math:`1/2<a\le1`."""

    eta1: float
    power: float = 1.0

    def __post_init__(self):
        _positive("eta1", self.eta1)
        if not 0.5 < self.power <= 1.0:
            raise ValueError(f"power must lie in (1/2, 1] for (2.12) (sum eta = inf, sum ln t eta^2 < inf); "
                             f"got {self.power}")

    def steps(self, t) -> np.ndarray:
        """:math:`\\eta_t` for integer ``t >= 1``; ``t = 0`` gives :math:`\\eta_0 := \\eta_1` (digest §4.3)."""
        t = np.maximum(np.asarray(t, dtype=np.float64), 1.0)
        return self.eta1 * t ** -self.power

    @property
    def sum_sq(self) -> float:
        """:math:`S_2=\\sum_{t\\ge1}\\eta_t^2=\\eta_1^2\\zeta(2a)`, exact."""
        return float(self.eta1 ** 2 * zeta(2 * self.power))

    def partial_sum(self, horizon: int) -> float:
        """:math:`\\sum_{t=1}^{T}\\eta_t`."""
        return float(self.steps(np.arange(1, horizon + 1)).sum())


@dataclass(frozen=True)
class ChainMixing:
    r"""Mixing constants of the availability chain (2.5): :math:`C_P`, :math:`T_P`, :math:`\lambda(P)` and its
    number of states :math:`M` (all from the caller, e.g. the Markov analytics)."""

    C_P: float
    T_P: int
    lam: float
    M: int

    def __post_init__(self):
        _positive("C_P", self.C_P)
        if int(self.T_P) != self.T_P or self.T_P < 0:
            raise ValueError(f"T_P must be an integer >= 0; got {self.T_P}")
        if not 0 < self.lam < 1:
            raise ValueError(f"lam = lambda(P) = (lambda_2bar + 1)/2 must lie in (0, 1); got {self.lam}")
        if int(self.M) != self.M or self.M < 1:
            raise ValueError(f"M (number of chain states) must be an integer >= 1; got {self.M}")


@dataclass(frozen=True)
class Ch2Constants:
    r"""Problem constants of Theorem 2.3.3: :math:`L`, :math:`K`, :math:`{\rm diam}(W)`, :math:`D`, :math:`G`,
    :math:`H`, :math:`\Gamma` (2.9), per-client :math:`\pi_i` and :math:`\sigma_i^2`.  :math:`H` bounds
    :math:`|F_i(w)-F_i(w_B^*)|` on :math:`W` as in (2.8), which the proofs use (digest §6 erratum 2: App. Lemma B.1
    states it with :math:`w_i^*`)."""

    L: float
    K: int
    diam: float
    D: float
    G: float
    H: float
    Gamma: float
    pi: tuple
    sigma2: tuple

    def __post_init__(self):
        for name in ("L", "diam", "D", "G", "H"):
            _positive(name, getattr(self, name))
        _positive("Gamma", self.Gamma, allow_zero=True)
        if int(self.K) != self.K or self.K < 1:
            raise ValueError(f"K (local steps) must be an integer >= 1; got {self.K}")
        pi, s2 = np.asarray(self.pi, float), np.asarray(self.sigma2, float)
        if pi.ndim != 1 or pi.shape != s2.shape or np.any(pi <= 0) or np.any(pi > 1):
            raise ValueError(f"pi must be a vector in (0, 1] with the shape of sigma2; got {pi}, {s2}")
        if np.any(s2 < 0):
            raise ValueError(f"sigma2 must be >= 0; got {s2}")


def mixing_rounds(t, chain: ChainMixing, H: float) -> np.ndarray:
    """:math:`\\mathcal J^{(t)}` of Definition B.1 / (2.17) for integer ``t >= 1``."""
    t = np.asarray(t, dtype=np.int64)
    need = np.ceil(np.log(2 * chain.C_P * H * t) / math.log(1 / chain.lam)).astype(np.int64)
    return np.minimum(np.maximum(need, chain.T_P), t)


def phi_series(schedule: PowerSchedule, chain: ChainMixing, H: float, terms: int = 100_000) -> tuple[float, float]:
    r""":math:`\sum_{t\ge1}\ln(2C_PHt)\eta_{t-\mathcal J^{(t)}}^2` as (sum of the first ``terms``, certified upper end).

    Tail: for :math:`t>n` with :math:`\mathcal J^{(t)}\le t/2` (checked at :math:`n`; :math:`\mathcal J` grows like
    :math:`\ln t`) the term is at most :math:`f(t)=\ln(ct)\,\eta_1^2(t/2)^{-b}`, :math:`c=2C_PH`, :math:`b=2a>1`,
    decreasing for :math:`t\ge n` once :math:`b\ln(cn)\ge1`, so the tail is at most
    :math:`\int_n^\infty f=\eta_1^2 2^b n^{1-b}\big(\frac{\ln(cn)}{b-1}+\frac1{(b-1)^2}\big)`.
    """
    if int(terms) != terms or terms < 10:
        raise ValueError(f"terms must be an integer >= 10; got {terms}")
    t = np.arange(1, terms + 1)
    c = 2 * chain.C_P * H
    lag = t - mixing_rounds(t, chain, H)
    head = float(np.sum(np.log(c * t) * schedule.steps(lag) ** 2))
    b, n = 2 * schedule.power, float(terms)
    if mixing_rounds(np.array([terms]), chain, H)[0] > n / 2 or b * math.log(c * n) < 1 or c * n <= 1:
        raise ValueError(f"terms = {terms} is too small for the tail bound (need J(n) <= n/2 and ln(2 C_P H n) >= "
                         "1/(2a)); increase terms")
    tail = schedule.eta1 ** 2 * 2 ** b * n ** (1 - b) * (math.log(c * n) / (b - 1) + 1 / (b - 1) ** 2)
    return head, head + tail


def step_conditions(schedule: PowerSchedule, L: float, K: int, Q: float) -> dict[str, tuple[float, float, bool]]:
    """(2.12): ``{name: (value, limit, holds)}``; decrease and the two series conditions hold by construction of
    :class:`PowerSchedule` (1/2 < a <= 1), the first-step cap is checked here."""
    cap = 1.0 / (2 * L * (1 + 2 * K * Q))
    return {"eta_1 <= 1/(2L(1+2KQ))": (schedule.eta1, cap, schedule.eta1 <= cap)}


@dataclass(frozen=True)
class EpsOpt:
    """The pieces of the reconciled :math:`\\bar\\epsilon_{\\rm opt}(q)` (digest §4.3); ``*_upper`` use the
    certified upper end of :math:`\\phi`'s series."""

    sigma_diag: np.ndarray
    v: float
    psi: float
    phi: float
    phi_upper: float
    log_inv_lambda: float
    value: float
    value_upper: float

    def per_round(self, total_steps: float) -> tuple[float, float]:
        """Bound on :math:`\\mathbb E[F_B(\\bar w^{(T)})-F_B^*]`: the value over :math:`\\sum_{t\\le T}\\eta_t`."""
        return self.value / total_steps, self.value_upper / total_steps


def eps_opt_bound(q, consts: Ch2Constants, chain: ChainMixing, schedule: PowerSchedule,
                  terms: int = 100_000) -> EpsOpt:
    """Reconciled right side (2.13) of Theorem 2.3.3 for aggregation weights ``q`` (not normalised)."""
    q = np.asarray(q, dtype=np.float64)
    pi, sigma2 = np.asarray(consts.pi, float), np.asarray(consts.sigma2, float)
    if q.shape != pi.shape or np.any(q < 0) or pi @ q <= 0:
        raise ValueError(f"q must be a non-negative vector of length {len(pi)} with pi^T q > 0; got {q}")
    K, Q, S2 = consts.K, float(q.sum()), schedule.sum_sq
    sigma_diag = 2 * (K + 1) * pi * sigma2 * S2
    v = 2 / K * consts.diam ** 2 + 0.25 * chain.M * Q * (S2 + math.pi ** 2 / 6)
    psi = ((4 * consts.L * (1 + K * Q) * consts.Gamma + 2 * K ** 2 * consts.G ** 2) * S2
           + consts.H * schedule.partial_sum(chain.T_P - 1))
    head, upper = phi_series(schedule, chain, consts.H, terms)
    scale = 2 * K * consts.D * consts.G * Q
    log_inv = math.log(1 / chain.lam)
    first = (0.5 * q @ (sigma_diag * q) + v) / (pi @ q)
    return EpsOpt(sigma_diag, v, psi, scale * head, scale * upper, log_inv,
                  first + psi + scale * head / log_inv, first + psi + scale * upper / log_inv)


def biased_weights(pi, q) -> np.ndarray:
    """:math:`p = \\pi\\tilde\\odot q`, :math:`p_i = \\pi_iq_i/\\sum_h\\pi_hq_h` (2.4)."""
    pi, q = np.asarray(pi, float), np.asarray(q, float)
    if pi.shape != q.shape or np.any(pi < 0) or np.any(q < 0) or pi @ q <= 0:
        raise ValueError("pi and q must be non-negative vectors of one length with pi^T q > 0")
    return pi * q / (pi @ q)


def bias_bounds(chi2: float, tv: float, kappa2: float, Gamma: float, Gamma_prime: float) -> dict[str, float]:
    """Right sides of (2.11) :math:`\\kappa^2\\bar\\epsilon_{\\rm bias}\\Gamma` with
    :math:`\\bar\\epsilon_{\\rm bias}=\\chi^2_{\\alpha\\|p}`, and (2.20)
    :math:`4\\kappa^2\\bar\\epsilon'_{\\rm bias}\\Gamma'`
    with :math:`\\bar\\epsilon'_{\\rm bias}=d_{TV}^2(\\alpha,p)`."""
    for name, value in (("chi2", chi2), ("tv", tv), ("kappa2", kappa2), ("Gamma", Gamma),
                        ("Gamma_prime", Gamma_prime)):
        _positive(name, value, allow_zero=True)
    return {"eps_bias_bar": chi2, "eps_bias_prime_bar": tv ** 2,
            "(2.11)": kappa2 * chi2 * Gamma, "(2.20)": 4 * kappa2 * tv ** 2 * Gamma_prime}


# ----- the q-optimisation (A.192) -------------------------------------------------------------------------------
def _q_problem(A_diag, pi, B: float, Q: float):
    A, pi = np.asarray(A_diag, float), np.asarray(pi, float)
    if A.ndim != 1 or A.shape != pi.shape or np.any(A <= 0):
        raise ValueError(f"A_diag must be a positive vector with the shape of pi; got {A}")
    if np.any(pi <= 0) or np.any(pi > 1):
        raise ValueError(f"pi must lie in (0, 1]; got {pi}")
    return A, pi, _positive("B", B, allow_zero=True), _positive("Q", Q)


def q_objective(q, A_diag, pi, B: float, C: float = 0.0) -> float:
    """:math:`J(q)=(\\frac12q^\\top{\\rm diag}(A)q+B)/\\pi^\\top q+C` (A.188)."""
    q, A, pi = (np.asarray(x, float) for x in (q, A_diag, pi))
    return float((0.5 * q @ (A * q) + B) / (pi @ q) + C)


@dataclass(frozen=True)
class QSolution:
    q: np.ndarray
    iota: float
    theta: float
    value: float  # J(q) - C


def optimal_q_kkt(A_diag, pi, B: float, Q: float) -> QSolution:
    """Closed-form KKT solution of (A.192) (module docstring); the support is the threshold set that satisfies
    every KKT condition with the smallest objective."""
    A, pi, B, Q = _q_problem(A_diag, pi, B, Q)
    best = None
    for threshold in np.unique(pi):
        S = pi >= threshold
        a0, a1, a2 = (np.sum(pi[S] ** k / A[S]) for k in range(3))
        delta = a0 * a2 - a1 ** 2
        if delta <= 1e-14 * a0 * a2:  # equal pi on S: the quadratic in iota degenerates to a linear equation
            iota, mean = (Q ** 2 + 2 * B * a0) / (2 * a1 * Q), float(pi[S].mean())
        else:
            iota, mean = (-a1 * Q + math.sqrt(a1 ** 2 * Q ** 2 + delta * (Q ** 2 + 2 * B * a0))) / delta, a1 / a0
        theta = iota * mean - Q / a0  # = (iota a1 - Q) / a0
        # iota pi_i - theta as iota (pi_i - mean) + Q/a0: iota grows like sqrt(B), and the difference of two such
        # terms would lose q_i to rounding when B >> A Q^2
        slack = iota * (pi - mean) + Q / a0  # KKT: > 0 on the support, <= 0 off it
        q = np.where(S, slack / A, 0.0)
        tol = 1e-12 * max(1.0, abs(iota))
        if np.all(slack[S] > -tol) and np.all(slack[~S] <= tol):
            q = np.maximum(q, 0.0)
            sol = QSolution(q, float(iota), float(theta), q_objective(q, A, pi, B))
            best = sol if best is None or sol.value < best.value else best
    if best is None:  # cannot happen for a convex problem with these data; guard against silent nonsense
        raise RuntimeError("no support satisfies the KKT conditions")
    return best


def optimal_q_cvx(A_diag, pi, B: float, Q: float) -> QSolution:
    """(A.192) through its convex perspective form (A.194), solved by cvxpy (Clarabel)."""
    import cvxpy as cp

    A, pi, B, Q = _q_problem(A_diag, pi, B, Q)
    y, s = cp.Variable(len(A), nonneg=True), cp.Variable(nonneg=True)
    objective = 0.5 * cp.quad_over_lin(cp.multiply(np.sqrt(A), y), s) + B * s
    problem = cp.Problem(cp.Minimize(objective), [pi @ y == 1, cp.sum(y) == Q * s])
    problem.solve(solver=cp.CLARABEL)
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"cvxpy could not solve (A.194): status {problem.status}")
    q = np.maximum(np.asarray(y.value, float), 0.0) / float(s.value)
    q *= Q / q.sum()
    value = q_objective(q, A, pi, B)
    support = q > 1e-6 * Q
    # iota = J(q) - C by stationarity; theta from the sum constraint (A.206) on the support
    theta = (value * np.sum(pi[support] / A[support]) - Q) / np.sum(1 / A[support])
    return QSolution(q, value, float(theta), value)


def thesis_theta(A_diag, pi, Q: float, q) -> float:
    """:math:`\\theta^*` by the thesis' printed closed form (A.207) with :math:`s^*=1/\\pi^\\top q^*` and the support
    of ``q`` (an independent transcription to check :func:`optimal_q_kkt` against)."""
    A, pi, q = (np.asarray(x, float) for x in (A_diag, pi, q))
    S = q > 0
    a0, a1, a2 = (np.sum(pi[S] ** k / A[S]) for k in range(3))
    if a0 * a2 - a1 ** 2 <= 1e-14 * a0 * a2:
        raise ValueError("(A.207) is undefined when pi is constant on the support of q")
    s = 1.0 / (pi @ q)
    return float((a1 - Q * s * a2) / (s * (a0 * a2 - a1 ** 2)))


def guideline_a_regime(sol: QSolution, pi) -> dict[str, object]:
    """Digest §4.5 caveat: which regime (A.192)'s optimum is in — whether low-pi clients are excluded and whether
    :math:`q^*` increases with :math:`\\pi` (Guideline A needs :math:`\\theta^*>0`)."""
    pi = np.asarray(pi, float)
    order = np.argsort(pi, kind="stable")
    q_sorted = sol.q[order]
    excluded = int(np.sum(sol.q <= 0))
    increasing = bool(np.all(np.diff(q_sorted) >= -1e-12))
    decreasing = bool(np.all(np.diff(q_sorted) <= 1e-12))
    regime = ("excludes low-pi clients (Guideline A)" if excluded and sol.theta > 0 else
              "variance-dominated: q* decreasing in pi, no exclusion" if decreasing and not excluded else
              "mixed")
    return {"regime": regime, "excluded": excluded, "increasing_in_pi": increasing,
            "decreasing_in_pi": decreasing, "theta": sol.theta}
