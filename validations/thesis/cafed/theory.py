"""Thesis ch. 1-2 theory (seed 001 Remark 1.3.1, (2.19), App. D-E; digest 001 §1.1, §4.5, §6 erratum 22, §8 V7,
V15, V16).

Remark 1.3.1's two heterogeneity inequalities; convexity of the bias term on slices ||q||_1 = Q and its non-convexity
on the orthant (Props. D.1-D.2); the q-optimisation (A.192) by cvxpy vs its KKT closed form and the regime of
Guideline A.  Theorem 2.3.3 has its own module, :mod:`.thm2_3_3`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from theorylab.testbeds.heterogeneity import chi2, gamma_ch1, sigma_g2_at_optimum
from theorylab.testbeds.quadratic import random_quadratic
from theorylab.bounds import thesis_ch2 as ch2
from theorylab.checks import across, at_least, at_most, auxiliary, equal, trend
from theorylab.claims import Evidence, claim


@claim("thesis.ch2.remark_1_3_1",
       "seed 001 Ch. 1, Remark 1.3.1, eqs. (1.6)-(1.9); digest 001 §1.1, §8 V7",
       "For L-smooth, mu-strongly convex F_i: Gamma = F* - sum_i alpha_i F_i* <= sigma_g^2 / (2 mu) and "
       "sigma_g^2 = sum_i alpha_i ||grad F_i(w*)||^2 <= 2 L Gamma.", kind="statement",
       where="Ch. 1 §1.3, Remark 1.3.1, eqs. (1.8)-(1.9)",
       quote=r"\Gamma \triangleq \sum_{i=1}^N \alpha_i [F_i(\mathbf{w}^*) - F_i^*] \leq \frac{1}{2\mu} \sum_{i=1}^N "
             r"\alpha_i \|\nabla F_i(\mathbf{w}^*) - \nabla F(\mathbf{w}^*)\|^2 \leq \frac{\sigma_g^2}{2\mu}, "
             r"\quad (1.8) … \sigma_g^2 \triangleq \sum_{i=1}^N \alpha_i \|\nabla F_i(\mathbf{w}^*)\|^2 \leq 2L "
             r"\sum_{i=1}^N \alpha_i [F_i(\mathbf{w}^*) - F_i^*] \leq 2L\Gamma. \quad (1.9)", checks=("V7", "G1"))
def remark_1_3_1(ctx) -> Evidence:
    rng = np.random.Generator(np.random.PCG64([ctx.seed, 131]))
    worst_18 = worst_19 = 0.0
    count = ctx.pick(300, 2000)
    for _ in range(count):
        m, d = int(rng.integers(2, 7)), int(rng.integers(1, 5))
        problem = random_quadratic(m, d, seed=int(rng.integers(2**31)), mu=float(rng.uniform(0.05, 0.9)), L=1.0,
                                   spread=float(rng.uniform(0.3, 3.0)), weights=rng.dirichlet(np.ones(m)))
        gamma, sg2 = gamma_ch1(problem), sigma_g2_at_optimum(problem)
        worst_18 = max(worst_18, gamma / (sg2 / (2 * problem.mu)))
        worst_19 = max(worst_19, sg2 / (2 * problem.L * gamma))
    note = f"{count} random Q-hetero instances (2-6 clients, dimension 1-4); Gamma, sigma_g^2 exact (closed forms)"
    return Evidence([at_most("(1.8): max of Gamma_ch1 / (sigma_g^2 / (2 mu))", worst_18, 1.0, basis="closed_form",
                             note=note),
                     at_most("(1.9): max of sigma_g^2 / (2 L Gamma_ch1)", worst_19, 1.0, basis="closed_form",
                             note=note)])


def _slice_points(rng, weights, level: float, count: int) -> np.ndarray:
    """Random points of {q >= 0, weights^T q = level} (about 10% of coordinates set to zero: faces)."""
    y = rng.dirichlet(np.full(len(weights), 0.7), size=count)
    y[rng.random(y.shape) < 0.1] = 0.0
    y[y.sum(1) == 0, 0] = 1.0
    return y / y.sum(1, keepdims=True) * level / weights


def _exact_chi2(alpha, pi, q) -> Fraction:
    """chi^2(alpha || pi~q) in rational arithmetic."""
    total = sum(w * x for w, x in zip(pi, q))
    return sum((a - w * x / total) ** 2 / (w * x / total) for a, w, x in zip(alpha, pi, q))


def _midpoint_excess(rng, pairs: int, slice_by: str, equal_pi: bool) -> tuple[float, float]:
    """Largest relative midpoint excess [f(mid) - chord] / max(1, |f(a)| + |f(b)|) over random pairs on slices, for
    f = chi^2(alpha || pi~q) and for f = chi^2 + J (the objective of (2.19)); slices {||q||_1 = Q} or {pi^T q = Q}."""
    worst = np.full(2, -np.inf)
    for _ in range(pairs // 50):
        n = int(rng.integers(2, 8))
        alpha = rng.dirichlet(np.ones(n))
        pi = np.full(n, float(rng.uniform(0.05, 1.0))) if equal_pi else rng.uniform(0.05, 1.0, n)
        A, B, Q = rng.uniform(0.01, 2.0, n), float(rng.uniform(0, 3)), float(rng.uniform(0.2, 10))
        weights = np.ones(n) if slice_by == "l1" else pi
        a, b = _slice_points(rng, weights, Q, 50), _slice_points(rng, weights, Q, 50)
        for qa, qb in zip(a, b):
            f = np.array([chi2(alpha, ch2.biased_weights(pi, q)) for q in (qa, qb, 0.5 * (qa + qb))])
            if np.all(np.isfinite(f)):
                j = np.array([ch2.q_objective(q, A, pi, B) for q in (qa, qb, 0.5 * (qa + qb))])
                for k, g in enumerate((f, f + j)):
                    worst[k] = max(worst[k], (g[2] - 0.5 * (g[0] + g[1])) / max(1.0, abs(g[0]) + abs(g[1])))
    return float(worst[0]), float(worst[1])


PROP_D2 = ("Prop. D.2's proof (A.180)-(A.183) needs the denominator c^T q + d = pi^T q fixed on the domain; on the "
           "stated slice ||q||_1 = Q it is fixed only when every pi_i is equal, so for heterogeneous availability "
           "chi^2(alpha || pi~q) is not convex there (it is on the slices pi^T q = const)")
# a pair on the slice ||q||_1 = 1 whose midpoint lies above the chord, evaluated in exact rational arithmetic
COUNTEREXAMPLE = {"alpha": ("0.172", "0.039", "0.17", "0.619"), "pi": ("0.973", "0.587", "0.099", "0.06"),
                  "q": ("0.598", "0.201", "0.144", "0.057"), "q'": ("0.077", "0.346", "0.531", "0.046")}
ROUNDING = "relative to max(1, |f(a)| + |f(b)|); 1e-12 absorbs floating-point rounding"


@claim("thesis.ch2.chi2_convexity",
       "seed 001 Ch. 2, (2.19); App. D, Prop. D.2, (A.171)-(A.173), (A.179)-(A.183); digest 001 §4.5, §8 V15",
       "chi^2(alpha || pi~q), p_i = pi_i q_i / sum_h pi_h q_h, is convex on {q > 0, ||q||_1 = Q} (Prop. D.2), hence so "
       "is the objective eps_opt_bar + eps_bias_bar of (2.19).", kind="statement", expect="violated", because=PROP_D2,
       severity="statement", where="App. D, Proposition D.2 and its proof (A.179)-(A.186); §2.3.3 on (2.19)",
       quote=r"Proposition D.2. *The function $\chi_{\alpha\|p}^2(\mathbf{q})$ is convex over $\mathbb{R}_{>0}^N \cap "
             r"\{\mathbf{q} : \|\mathbf{q}\|_1 = Q > 0\}$.*",
       defence="The authors can answer that the proof (A.180)-(A.186) is correct for the slice on which c^T q + d is "
               "fixed, i.e. pi^T q = Q, and that for equal availabilities this slice is the stated one; we confirm "
               "both (the last two checks hold). The statement stands refuted as printed: with h_i(q) = pi_i q_i / "
               "sum_k pi_k q_k of (A.171) the slice ||q||_1 = Q fixes pi^T q only when every pi_i is equal, and one "
               "pair of positive q on ||q||_1 = 1 with heterogeneous pi, evaluated in exact rational arithmetic, "
               "has its midpoint above the chord (64.66 > 63.24); so (2.19), whose constraint is ||q||_1 = Q, is "
               "not shown convex by Appendix D.", checks=("V15",))
def chi2_convexity(ctx) -> Evidence:
    rng = np.random.Generator(np.random.PCG64([ctx.seed, 173]))
    pairs = ctx.pick(2000, 20000)
    l1, l1_equal, pi_slice = (_midpoint_excess(rng, pairs, by, eq) for by, eq in
                              (("l1", False), ("l1", True), ("pi", False)))
    note = f"{pairs} random midpoint tests, 2-7 clients, random alpha, A, B, Q; {ROUNDING}"
    alpha, pi, qa, qb = ([Fraction(v) for v in COUNTEREXAMPLE[k]] for k in ("alpha", "pi", "q", "q'"))
    mid = _exact_chi2(alpha, pi, [(x + y) / 2 for x, y in zip(qa, qb)])
    chord = (_exact_chi2(alpha, pi, qa) + _exact_chi2(alpha, pi, qb)) / 2
    return Evidence([
        at_most("||q||_1 = 1, one pair in exact rational arithmetic: chi^2(midpoint) <= chord", float(mid),
                float(chord), basis="closed_form", note=f"pair {COUNTEREXAMPLE} (decimal strings read exactly)"),
        at_most("||q||_1 = Q, heterogeneous pi: max chi^2 midpoint excess (Prop. D.2 as stated)", l1[0], 1e-12,
                basis="closed_form", note=note),
        at_most("||q||_1 = Q, heterogeneous pi: max (chi^2 + J) midpoint excess, objective of (2.19)", l1[1], 1e-12,
                basis="closed_form", note=note),
        auxiliary(at_most("||q||_1 = Q, equal pi_i: max chi^2 midpoint excess", l1_equal[0], 1e-12,
                          basis="closed_form", note=note + "; the case where pi^T q is fixed on the slice")),
        auxiliary(at_most("pi^T q = Q (what (A.181) proves): max (chi^2 + J) midpoint excess", max(pi_slice), 1e-12,
                          basis="closed_form", note=note))],
        errata=[PROP_D2])


@claim("thesis.ch2.chi2_nonconvexity",
       "seed 001 App. D, Prop. D.1, (A.174)-(A.178); digest 001 §4.5, §8 V15",
       "chi^2(alpha || q/||q||_1) is not convex on the open orthant: with q = alpha, q' = (Q/N) 1 and zeta = 1/2 the "
       "midpoint exceeds the chord for Q large, the two sides tending to (A.177) and (A.178).", kind="statement",
       where="App. D, Proposition D.1 and its proof (A.174)-(A.178)",
       quote=r"Proposition D.1. *The function $\chi_{\alpha\|p}^2(\mathbf{q})$ is not convex over "
             r"$\mathbb{R}_{>0}^N$.*", checks=("V15",))
def chi2_nonconvexity(ctx) -> Evidence:
    n, alpha, Q = 4, np.array([0.4, 0.3, 0.2, 0.1]), 1e7
    uniform = np.full(n, Q / n)
    chi = [chi2(alpha, q / q.sum()) for q in (alpha, uniform, 0.5 * (alpha + uniform))]
    limit = chi2(alpha, np.full(n, 1 / n))  # (A.177) summed over i; (A.178) is half of it
    return Evidence([
        at_least(f"Q = {Q:g}: chi^2 at the midpoint vs the chord (A.175)", chi[2], 0.5 * (chi[0] + chi[1]),
                 basis="closed_form", note="pi = 1 as in (A.174); the midpoint must exceed the chord"),
        equal("midpoint value vs its limit (A.177), sum_i (1/N - alpha_i)^2 N", chi[2], limit, atol=1e-5,
              basis="closed_form", note="error O(1/Q)"),
        equal("chord vs its limit (A.178), half of (A.177)", 0.5 * (chi[0] + chi[1]), 0.5 * limit, atol=1e-5,
              basis="closed_form", note="chi^2(alpha||alpha) = 0 at q = alpha")])


@claim("thesis.ch2.q_kkt",
       "seed 001 App. E, (A.192)-(A.207); digest 001 §4.5, §7.4",
       "The q-optimisation (A.192) is convex through the perspective (A.194), and its solution is the KKT closed "
       "form q_i* = (iota* pi_i - theta*) / A_ii on the support (A.204) with iota*, theta* of (A.206)-(A.207).",
       kind="statement", where="App. E.A-E.C, (A.192)-(A.207)",
       quote=r"and then the optimization problem defined by (A.194a)–(A.194e) is convex. We solve it with the method "
             r"of Lagrange multipliers. … q_i^* = \frac{1}{A_{kk}} (\iota^* \pi_i - \theta^*); \quad (\text{A.204})",
       partial=("V16",))
def q_kkt(ctx) -> Evidence:
    rng = np.random.Generator(np.random.PCG64([ctx.seed, 192]))
    gap_value = gap_q = gap_theta = 0.0
    count = ctx.pick(20, 100)
    for _ in range(count):
        n = int(rng.integers(2, 9))
        pi, A = rng.uniform(0.05, 1.0, n), rng.uniform(0.05, 3.0, n)
        B, Q = float(rng.uniform(0.0, 5.0)), float(rng.uniform(0.2, 5.0))
        kkt, cvx = ch2.optimal_q_kkt(A, pi, B, Q), ch2.optimal_q_cvx(A, pi, B, Q)
        gap_value = max(gap_value, abs(kkt.value / cvx.value - 1))
        gap_q = max(gap_q, float(np.abs(kkt.q - cvx.q).max()) / Q)
        if len(np.unique(pi[kkt.q > 0])) > 1:
            gap_theta = max(gap_theta, abs(kkt.theta - ch2.thesis_theta(A, pi, Q, kkt.q)) / max(1.0, abs(kkt.theta)))
    note = f"{count} random instances (2-8 clients); cvxpy (Clarabel) on the perspective form (A.194)"
    return Evidence([
        equal("max relative gap of the optimal value: KKT closed form vs cvxpy", gap_value, 0.0, atol=1e-6,
              basis="independent", note=note + "; tolerance = interior-point accuracy"),
        equal("max |q_KKT - q_cvxpy| / Q", gap_q, 0.0, atol=1e-4, basis="independent",
              note=note + "; tolerance = interior-point accuracy on the weights"),
        equal("max relative gap: theta* of the KKT solve vs the printed (A.207) at s* = 1/pi^T q*", gap_theta, 0.0,
              atol=1e-9, basis="independent", note="instances whose support has two distinct pi at least")])


def _guideline_instance(n: int, sigma2: float):
    """(A.192) with the constants of Theorem 2.3.3 for ``n`` independent two-state clients (M = 2^n joint states;
    pi spread over [0.1, 0.9], a lambda = 0.5 chain, eta_t = 0.01/t, K = 1), evaluated at q = 1 (Q = n)."""
    pi = np.linspace(0.1, 0.9, n)
    sched = ch2.PowerSchedule(0.01, 1.0)
    consts = ch2.Ch2Constants(L=1.0, K=1, diam=2.0, D=1.0, G=1.0, H=1.0, Gamma=0.1, pi=tuple(pi),
                              sigma2=(sigma2,) * n)
    chain = ch2.ChainMixing(C_P=2.0, T_P=0, lam=0.75, M=2 ** n)
    bound = ch2.eps_opt_bound(np.ones(n), consts, chain, sched, terms=20_000)
    return pi, bound.sigma_diag, bound.v


REGIMES = {"8 clients (M = 2^8), sigma_i^2 = 1": (8, 1.0), "8 clients (M = 2^8), sigma_i^2 = 1e8": (8, 1e8),
           "100 clients as in the thesis (M = 2^100), sigma_i^2 = 1e8": (100, 1e8)}


@claim("thesis.ch2.guideline_a",
       "seed 001 Ch. 2, Guideline A (§2.3.3.1), App. E.B (A.204); digest 001 §4.5 caveat, §6 erratum 22, §8 V16",
       "The optimum of (A.192) gives weights q_i* that increase with pi_i (App. E.B), so the least available clients "
       "get the smallest weights and can be excluded (Guideline A).", kind="statement", expect="inconclusive",
       where="App. E.B, after (A.204); §2.3.3.1, Guideline A",
       quote=r"By considering $A_{kk} \geq 0$ and $\iota^* \geq 0$ in Equation (A.204), we conclude that q_i^* "
             r"increases with π_i , providing analytical support for Guideline A.",
       because="regime-dependent (digest §4.5, V16: 'report regime'): A_ii = 2(K+1) pi_i sigma_i^2 S_2 grows with "
               "pi_i, so q_i* = (iota* - theta*/pi_i) / (2(K+1) sigma_i^2 S_2) increases with pi_i only when "
               "theta* > 0. With 8 clients and sigma_i^2 = 1, v dominates and q* increases with pi (low-pi clients "
               "excluded); with 8 clients and sigma_i^2 = 1e8 the variance term dominates, theta* < 0 and q* "
               "decreases in pi; with the thesis' 100 clients v ~ M = 2^100 dominates even at sigma_i^2 = 1e8",
       defence="The authors can answer that Guideline A is meant for their setting, where M = 2^N joint states make v "
               "dominate for any realistic noise, and there (A.204) does give q* increasing in pi; we agree, hence no "
               "erratum. What stays open is the step in E.B: it treats A_kk as a constant independent of pi_i, while "
               "(A.189) makes it proportional to pi_i, so the conclusion needs theta* > 0, which E.B does not show; "
               "a clarification of the regime would settle it.", checks=("V16",))
def guideline_a(ctx) -> Evidence:
    outcomes = {}
    for label, (n, sigma2) in REGIMES.items():
        pi, A, B = _guideline_instance(n, sigma2)
        sol = ch2.optimal_q_kkt(A, pi, B, float(n))  # Q = n, the ||q||_1 at which v was evaluated
        regime = ch2.guideline_a_regime(sol, pi)
        ends = np.r_[0:4, n - 4:n]  # the four least and the four most available clients
        outcomes[label] = trend(f"{label}: q* non-decreasing in pi", np.round(sol.q[ends], 4).tolist(),
                                regime["increasing_in_pi"], "non-decreasing in pi", pi[ends].round(3).tolist(),
                                basis="closed_form",
                                note=f"regime: {regime['regime']}; {regime['excluded']} of {n} clients excluded; "
                                     f"theta* = {sol.theta:.4g}; B = v = {B:.4g}, A_ii in [{A.min():.3g}, "
                                     f"{A.max():.3g}] (Theorem 2.3.3 calculator, eta_t = 0.01/t, K = 1); the weights "
                                     "of the four least and four most available clients shown")
    return Evidence([across("q* of (A.192) increases with pi_i", outcomes, what="choice")],
                    errata=["(A.204) gives q_i* = (iota* pi_i - theta*) / A_ii with A_ii proportional to pi_i "
                            "(A.189): q_i* increases with pi_i only when theta* > 0, i.e. when v dominates the "
                            "variance term (digest §6 erratum 22)."])
