r"""Thesis ch. 4 theory: Theorem 4.3.1 (4.6)-(4.7) against the exact expected gap (U4), the loss sensitivity of
its constant (U5), Remark 1.3.1 on the chapter's quadratics (G1) and theory mode vs paper mode (G2).

Seed 001 Ch. 4 §4.3 Theorem 4.3.1, App. C; Ch. 1 Remark 1.3.1; digest 001 §2.3-2.5, §6 U4, U5, G1, G2, §7 items
1, 3.  The expected gap :math:`\mathbb EF(w^{(t)})-F^*` of UPGA-PL is exact
(:func:`theorylab.exact.lossy_moments.lossy_moments`) on the two-group quadratic of
:mod:`theorylab.validations.thesis.packet_loss.setting` with gradient noise :math:`\sigma_i^2 = 1`.  The bound
(:func:`theorylab.bounds.thesis_ch4.bound_46`) uses the exact :math:`L = \mu = 1`, :math:`\Gamma = 1/2`,
:math:`\|w^{(1)}-w^*\|^2 = 4` and the a-posteriori :math:`G^2 = \max_{t,k,i}\mathbb E\|\nabla F_i(w_i^{(t,k)})\|^2
+\sigma_i^2` along the exact trajectory (A13 cannot hold on all of :math:`\mathbb R`; digest §2.3).

**Drift coefficient** (digest §7 item 3 lists 2 and 8): every bound is decided under both readings
(:func:`drift_readings`).  The printed 2 is what X. Li et al.'s Lemmas 1 and 3, which (C.8) cites, give for
Algorithm 5's step, constant within a round: Lemma 1 carries :math:`2\sum_i\alpha_i\|w_i-\bar w\|^2` and Lemma 3
bounds it by :math:`(\eta_{t_0}/\eta_t)^2\eta_t^2(K-1)^2G^2`, where the ratio is 1 here (it is at most 2 only for a
step that decays within the round, as in App. D's (D.31), whence App. D's 8).
"""

from __future__ import annotations

import functools

import numpy as np

from theorylab.testbeds.heterogeneity import gamma_ch1, sigma_g2_at_optimum
from theorylab.bounds.thesis_ch4 import DRIFT_COEFFICIENTS, Ch4Constants, bound_46, c_terms, lossy_term
from theorylab.checks import Check, across, at_most, auxiliary, equal, ours, trend
from theorylab.claims import Evidence, claim
from theorylab.exact.lossy_moments import local_gradient_second_moments, lossy_moments
from theorylab.fitting import loglog_slope
from theorylab.kernels.schedules import make_schedule
from theorylab.registry import build
from theorylab.threads import one_thread
from theorylab.validations.thesis.packet_loss.setting import K, N, SOURCE, config, losses

GRID = (1e-1, 10 ** -1.5, 1e-2, 10 ** -2.5, 1e-3)  # the thesis' learning-rate grid (§4.4), largest first
HORIZON = 150  # "after around 150 communication rounds" (§4.4.2): where the thesis reads its experiments
DRIFT = {2: "drift 2 (printed in (4.7), (C.9))", 8: "drift 8 (App. D's (D.32), (D.50))"}
THEOREM = r"Choose diminishing learning rates as $\eta_c^{(t+1)} = \frac{2/\mu}{8\kappa+t}$"


@functools.lru_cache(maxsize=2)
def theory_mode(rounds: int) -> tuple[dict[str, np.ndarray], Ch4Constants]:
    """Exact metrics of UPGA-PL at every round under Theorem 4.3.1's step, and the theorem's constants."""
    cfg = config("upga_pl", rounds, sigma=1.0)
    quad = build("testbed", cfg.problem)
    m = lossy_moments(cfg)
    g2 = local_gradient_second_moments(quad, m, make_schedule(cfg.algorithm["lr"]), K)
    consts = Ch4Constants(tuple(quad.alpha), tuple(losses()), (quad.sigma2,) * N, quad.L, quad.mu, K, float(g2.max()),
                          gamma_ch1(quad), float(np.sum((quad.x_init - quad.x_star) ** 2)))
    return m.metrics(quad), consts


def drift_readings(name: str, measured: float, consts: Ch4Constants, rounds: int, note: str = "") -> Check:
    """``measured <= (4.6)`` after ``rounds`` rounds, under both drift coefficients (the printed 2 first)."""
    return across(name, {DRIFT[d]: at_most(name, measured, float(bound_46(consts, rounds, d)), basis="enumeration",
                                           note=note) for d in DRIFT_COEFFICIENTS})


@claim("thesis.ch4.theorem_4_3_1", SOURCE + " U4",
       "With eta_t = 2/(mu(8 kappa + t - 1)), UPGA-PL's E F(w^(t+1)) - F* <= kappa/(8 kappa + t) (2KC/mu + 4L||w1 - "
       "w*||^2) (4.6)-(4.7), an O(1/t) rate.", kind="statement", where="§4.3.1, Theorem 4.3.1, eqs. (4.6)-(4.7)",
       quote=THEOREM + r" … \frac{\kappa}{8\kappa+t} \left(\frac{2KC}{\mu} + 4L \|\mathbf{w}^{(1)} - "
                       r"\mathbf{w}^*\|^2 \right)", checks=("U4",))
@one_thread
def theorem_4_3_1(ctx) -> Evidence:
    rounds = ctx.pick(1000, 10000)
    metrics, consts = theory_mode(rounds)
    gap, t = metrics["server.gap"], np.arange(rounds + 1)
    ratio = {d: float((gap / bound_46(consts, t, d)).max()) for d in DRIFT_COEFFICIENTS}
    slope = loglog_slope(t[rounds // 10:], gap[rounds // 10:])[0]
    scaled = t[[rounds // 4, rounds // 2, rounds]] * gap[[rounds // 4, rounds // 2, rounds]]
    checks = [drift_readings(f"(4.6): E F(w^T) - F* at T = {rounds}", gap[-1], consts, rounds,
                             note="left exact; right (4.6) with the a-posteriori G^2"),
              across("(4.6): max over t of exact gap / bound",
                     {DRIFT[d]: at_most("max_t gap / bound", ratio[d], 1.0, basis="enumeration")
                      for d in DRIFT_COEFFICIENTS}),
              ours(equal("log-log slope of the exact gap over t in [T/10, T]", slope, -1.0, 0.02, basis="closed_form",
                         note="tolerance: the finite-t correction"),
                   "the digest's expectation (U4) that the 1/t rate is attained; the thesis states an upper bound"),
              ours(trend("t (E F - F*) at t = T/4, T/2, T", scaled.round(5), bool(np.ptp(scaled) < 0.02 * scaled[-1]),
                         "spread < 2%", "a constant", basis="enumeration"),
                   "a 2% band for 'settled'; O(1/t) asks only that it stays bounded")]
    terms = {d: c_terms(consts, d) for d in DRIFT_COEFFICIENTS}
    return Evidence(checks, notes=[
        f"a-posteriori G^2 = {consts.G2:.4g} (at t = 0, the lossy group's clients); Gamma = {consts.Gamma:.4g}",
        "C terms (drift 2): " + ", ".join(f"{k} {v:.4g}" for k, v in terms[2].items())
        + "; drift 8: C = " + f"{terms[8]['C']:.4g}",
        "the client-drift term dominates C, so the bound is vacuous by three orders of magnitude; the loss term "
        "K G^2 sum alpha_i^2 q_i/(1-q_i) is the second largest",
        "drift coefficient: the printed 2 follows from the cited lemmas for Algorithm 5's step, constant within a "
        "round; App. D's 8 is for a step that decays within the round (module docstring); both hold here"])


@claim("thesis.ch4.loss_sensitivity", SOURCE + " U5",
       "Larger losses slow UPGA-PL but do not stop it: T (E F - F*) grows with sum alpha_i^2 q_i/(1-q_i) for "
       "q_2 in {0, 0.5, 0.9, 0.99}, and E||w^t - w*||^2 keeps decreasing in every case.", kind="statement",
       where="§4.3.2 and §4.4.2",
       quote="the larger the loss probabilities, the larger is C and the slower the convergence predicted by the "
             "bound in (4.6) … a severe amount of packet losses ($q_1 = 0.1, q_2 = 0.9$) slows down but does not "
             "prevent convergence to the optimal model, provided that UPGA-PL is used", checks=("U5",))
@one_thread
def loss_sensitivity(ctx) -> Evidence:
    rounds = ctx.pick(1000, 10000)
    alpha, scaled, notes, checks = np.full(N, 1.0 / N), [], [], []
    for q2 in (0.0, 0.5, 0.9, 0.99):
        cfg = config("upga_pl", rounds, sigma=1.0, q2=q2, every=rounds // 4)
        quad = build("testbed", cfg.problem)
        metrics = lossy_moments(cfg).metrics(quad)
        scaled.append(rounds * float(metrics["server.gap"][-1]))
        dist2 = metrics["server.dist2"][1:]  # t = T/4, T/2, 3T/4, T
        checks += [trend(f"q_2 = {q2}: exact E(w^t - w*)^2 at t = T/4, T/2, 3T/4, T", dist2.round(6),
                         bool(np.all(np.diff(dist2) < 0)), "strictly decreasing", "-> 0", basis="enumeration"),
                   ours(trend(f"q_2 = {q2}: E(w^T - w*)^2 / E(w^(T/2) - w*)^2", round(dist2[3] / dist2[1], 4),
                              bool(dist2[3] < 0.6 * dist2[1]), "< 0.6", 0.5, basis="enumeration"),
                        "a 1/t decay halves it when t doubles; 0.6 is our margin for the finite-t correction")]
        notes.append(f"q_2 = {q2}: v = {lossy_term(alpha, losses(q2)):.4g}, T (E F - F*) = {scaled[-1]:.4g}")
    checks.append(trend("T (E F(w^T) - F*) over q_2 = 0, 0.5, 0.9, 0.99", np.round(scaled, 4),
                        bool(np.all(np.diff(scaled) > 0)), "increasing", "increasing in v", basis="enumeration"))
    return Evidence(checks, notes=notes + [f"T = {rounds}, sigma = 1, Theorem 4.3.1's step"])


@claim("thesis.ch4.remark_1_3_1", "seed 001 Ch. 1 Remark 1.3.1, Defs. 1.3.1-1.3.2; digest 001 §1, §6 G1",
       "Gamma <= sigma_g^2/(2 mu) and sigma_g^2 <= 2 L Gamma on the chapter's quadratics.", kind="statement",
       where="Ch. 1 §1.3.1, Remark 1.3.1, eqs. (1.8)-(1.9)",
       quote=r"\leq \frac{\sigma_g^2}{2\mu}, \quad (1.8)$$ … \leq 2L\Gamma. \quad (1.9)$$", checks=("G1",))
@one_thread
def remark_1_3_1(ctx) -> Evidence:
    checks = []
    for label, spec in (("two-group scalar (equal curvatures)", config("upga_pl", 1).problem),
                        ("random 2-D, rotated spectra in [0.3, 1]",
                         {"name": "random_quadratic", "n_clients": N, "dim": 2, "seed": 3, "mu": 0.3, "L": 1.0})):
        quad = build("testbed", spec)
        gamma, sg2 = gamma_ch1(quad), sigma_g2_at_optimum(quad)
        checks += [at_most(f"{label}: Gamma <= sigma_g^2 / (2 mu)", gamma, sg2 / (2 * quad.mu), basis="closed_form"),
                   at_most(f"{label}: sigma_g^2 <= 2 L Gamma", sg2, 2 * quad.L * gamma, basis="closed_form")]
    return Evidence(checks, notes=["both are equalities when every A_i = I (the scalar setting): tightness 1"])


@claim("thesis.ch4.theory_vs_paper_mode", SOURCE + " G2",
       "Theorem 4.3.1 assumes its diminishing step; the experiments tune a step on a grid (paper mode, read as "
       "constant). Over the horizon at which the thesis reads them (about 150 rounds), (4.6) still bounds UPGA-PL's "
       "gap for every step of the grid, under both drift coefficients.", kind="scope",
       where="§4.3.1 Theorem 4.3.1; §4.4.1 (step grid); §4.4.2 (about 150 rounds)",
       quote=THEOREM + r" … we tuned the learning rate $\eta_c = \{\eta_c^{(t)}\}_{t>0}$ via grid search with "
                       r"values $\eta = \{10^{-3}, 10^{-2.5}, 10^{-2}, 10^{-1.5}, 10^{-1}\}$ … after around 150 "
                       r"communication rounds", checks=("G2",))
@one_thread
def theory_vs_paper_mode(ctx) -> Evidence:
    rounds = ctx.pick(1000, 10000)
    metrics, consts = theory_mode(rounds)
    quad = build("testbed", config("upga_pl", 1, sigma=1.0).problem)
    paper, notes = {}, []
    for eta in GRID:
        gap = lossy_moments(config("upga_pl", rounds, sigma=1.0, lr=eta)).metrics(quad)["server.gap"]
        paper[eta] = gap
        notes.append(f"eta = {eta:.4g}: exact gap at t = {HORIZON}, T/2, T = {gap[HORIZON]:.4g}, "
                     f"{gap[rounds // 2]:.6g}, {gap[-1]:.6g}")
    top = GRID[0]
    scale = {d: float(bound_46(consts, 0, d)) * 8 * consts.L / consts.mu  # (4.6) times (8 kappa + t)
             for d in DRIFT_COEFFICIENTS}
    crossing = {d: scale[d] / paper[top][-1] - 8 * consts.L / consts.mu for d in DRIFT_COEFFICIENTS}
    checks = [auxiliary(drift_readings(f"theory mode: E F(w^T) - F* <= (4.6) at T = {rounds}",
                                       metrics["server.gap"][-1], consts, rounds)),
              across(f"paper mode: E F(w^t) - F* <= (4.6) at t = {HORIZON}, every step of the grid",
                     {f"eta = {eta:.4g}": drift_readings(f"eta = {eta:.4g}", paper[eta][HORIZON], consts, HORIZON,
                                                         note="(4.6) with theory mode's constants")
                      for eta in GRID}, what="choice"),
              auxiliary(equal(f"paper mode eta = {top:g}: the gap has settled (|gap(T) - gap(T/2)|)",
                              abs(paper[top][-1] - paper[top][rounds // 2]), 0.0, 1e-12, basis="enumeration",
                              note="so the floor below is the gap at every later round"))]
    return Evidence(checks, notes=notes + [
        f"beyond the thesis' horizon a constant step leaves its O(eta) floor ({paper[top][-1]:.4g} at eta = {top:g}) "
        "while (4.6) decays like 1/t: the floor exceeds (4.6) after about "
        + " and ".join(f"{crossing[d]:.2g} rounds ({DRIFT[d]})" for d in DRIFT_COEFFICIENTS)
        + "; outside the theorem's step schedule, as §4.3's stochastic-approximation argument itself says "
          "(thesis.ch4.constant_step_floor)",
        "theory mode: plain SGD, no momentum, alpha summing to 1, Theorem 4.3.1's step; no projection (the iterates "
        "stay bounded on this quadratic)",
        "paper mode: whether the experiments decay the step is not stated (digest §7 item 1); a constant step is the "
        "reading farthest from the theorem"])
