r"""Thesis ch. 4 theory: Theorem 4.3.1 (4.6)-(4.7) against the exact expected gap (U4), the loss sensitivity of
its constant (U5), Remark 1.3.1 on the chapter's quadratics (G1) and theory mode vs paper mode (G2).

Seed 001 Ch. 4 §4.3 Theorem 4.3.1, App. C; Ch. 1 Remark 1.3.1; digest 001 §2.3-2.5, §6 U4, U5, G1, G2, §7 items
1, 3.  The expected gap :math:`\mathbb EF(w^{(t)})-F^*` of UPGA-PL is exact
(:func:`theorylab.exact.lossy_moments.lossy_moments`) on the two-group quadratic of
:mod:`validations.thesis.ch4_setting` with gradient noise :math:`\sigma_i^2 = 1`.  The bound
(:func:`theorylab.bounds.thesis_ch4.bound_46`) uses the exact :math:`L = \mu = 1`, :math:`\Gamma = 1/2`,
:math:`\|w^{(1)}-w^*\|^2 = 4` and the a-posteriori :math:`G^2 = \max_{t,k,i}\mathbb E\|\nabla F_i(w_i^{(t,k)})\|^2
+\sigma_i^2` along the exact trajectory (A13 cannot hold on all of :math:`\mathbb R`; digest §2.3), with both
drift coefficients (2 as printed in Ch. 4, 8 as in App. D).
"""

from __future__ import annotations

import functools

import numpy as np

from testbeds.heterogeneity import gamma_ch1, sigma_g2_at_optimum
from theorylab.bounds.thesis_ch4 import DRIFT_COEFFICIENTS, Ch4Constants, bound_46, c_terms, lossy_term
from theorylab.checks import at_most, equal, trend
from theorylab.claims import Evidence, claim
from theorylab.exact.lossy_moments import local_gradient_second_moments, lossy_moments
from theorylab.fitting import loglog_slope
from theorylab.kernels.schedules import make_schedule
from theorylab.registry import build
from theorylab.threads import one_thread
from validations.thesis.ch4_setting import K, N, SOURCE, config, losses

GRID = (1e-3, 10 ** -2.5, 1e-2, 10 ** -1.5, 1e-1)  # the thesis' learning-rate grid (§4.4)


@functools.lru_cache(maxsize=2)
def theory_mode(rounds: int) -> tuple[np.ndarray, Ch4Constants]:
    """Exact gap of UPGA-PL at every round under Theorem 4.3.1's step, and the theorem's constants."""
    cfg = config("upga_pl", rounds, sigma=1.0)
    quad = build("testbed", cfg.problem)
    m = lossy_moments(cfg)
    g2 = local_gradient_second_moments(quad, m, make_schedule(cfg.algorithm["lr"]), K)
    consts = Ch4Constants(tuple(quad.alpha), tuple(losses()), (quad.sigma2,) * N, quad.L, quad.mu, K, float(g2.max()),
                          gamma_ch1(quad), float(np.sum((quad.x_init - quad.x_star) ** 2)))
    return m.metrics(quad)["server.gap"], consts


@claim("thesis.ch4.theorem_4_3_1", SOURCE + " U4",
       "With eta_t = 2/(mu(8 kappa + t - 1)), UPGA-PL's E F(w^(t+1)) - F* <= kappa/(8 kappa + t) (2KC/mu + 4L||w1 - "
       "w*||^2) (4.6)-(4.7), an O(1/t) rate: the exact gap's log-log slope tends to -1 and t (E F - F*) stays "
       "bounded.", kind="statement")
@one_thread
def theorem_4_3_1(ctx) -> Evidence:
    rounds = ctx.pick(1000, 10000)
    gap, consts = theory_mode(rounds)
    t = np.arange(rounds + 1)
    checks = []
    for drift in DRIFT_COEFFICIENTS:
        bound = bound_46(consts, t, drift)
        checks += [at_most(f"(4.6), drift {drift}(K-1)^2 G^2: E F(w^T) - F* at T = {rounds}", gap[-1], bound[-1],
                           basis="enumeration", note="left exact; right (4.6) with the a-posteriori G^2"),
                   at_most(f"(4.6), drift {drift}: max over t of exact gap / bound", float((gap / bound).max()), 1.0,
                           basis="enumeration")]
    slope = loglog_slope(t[rounds // 10:], gap[rounds // 10:])[0]
    scaled = t[[rounds // 4, rounds // 2, rounds]] * gap[[rounds // 4, rounds // 2, rounds]]
    checks += [equal("log-log slope of the exact gap over t in [T/10, T]", slope, -1.0, 0.02, basis="closed_form",
                     note="the O(1/t) rate; tolerance: the finite-t correction, which the next check sizes"),
               trend("t (E F - F*) at t = T/4, T/2, T", scaled.round(5), bool(np.ptp(scaled) < 0.02 * scaled[-1]),
                     "bounded, spread < 2%", "a constant", basis="enumeration")]
    terms = {d: c_terms(consts, d) for d in DRIFT_COEFFICIENTS}
    return Evidence(checks, notes=[
        f"a-posteriori G^2 = {consts.G2:.4g} (at t = 0, the lossy group's clients); Gamma = {consts.Gamma:.4g}",
        "C terms (drift 2): " + ", ".join(f"{k} {v:.4g}" for k, v in terms[2].items())
        + "; drift 8: C = " + f"{terms[8]['C']:.4g}",
        "the client-drift term dominates C, so the bound is vacuous by three orders of magnitude; the loss term "
        "K G^2 sum alpha_i^2 q_i/(1-q_i) is the second largest"],
        errata=["drift coefficient: Ch. 4 prints 2(K-1)^2 G^2, App. D (and X. Li et al. 2020) 8(K-1)^2 G^2 (digest §7 "
                "item 3); both are reported and both hold here"])


@claim("thesis.ch4.loss_sensitivity", SOURCE + " U5",
       "Larger losses slow UPGA-PL but do not stop it: lim t (E F - F*) grows with sum alpha_i^2 q_i/(1-q_i) for "
       "q_2 in {0, 0.5, 0.9, 0.99}, and E||w^t - w*||^2 -> 0 in every case.", kind="statement")
@one_thread
def loss_sensitivity(ctx) -> Evidence:
    rounds = ctx.pick(1000, 10000)
    alpha, scaled, notes, checks = np.full(N, 1.0 / N), [], [], []
    for q2 in (0.0, 0.5, 0.9, 0.99):
        cfg = config("upga_pl", rounds, sigma=1.0, q2=q2, every=rounds // 2)
        quad = build("testbed", cfg.problem)
        metrics = lossy_moments(cfg).metrics(quad)
        scaled.append(rounds * float(metrics["server.gap"][-1]))
        dist2 = metrics["server.dist2"]
        checks.append(trend(f"q_2 = {q2}: exact E(w^t - w*)^2 at t = T/2, T", dist2[1:].round(6),
                            bool(dist2[2] < 0.6 * dist2[1]), "halves (1/t)", "-> 0", basis="enumeration"))
        notes.append(f"q_2 = {q2}: v = {lossy_term(alpha, losses(q2)):.4g}, T (E F - F*) = {scaled[-1]:.4g}")
    checks.append(trend("T (E F(w^T) - F*) over q_2 = 0, 0.5, 0.9, 0.99", np.round(scaled, 4),
                        bool(np.all(np.diff(scaled) > 0)), "increasing", "increasing in v", basis="enumeration"))
    return Evidence(checks, notes=notes + [f"T = {rounds}, sigma = 1, Theorem 4.3.1's step"])


@claim("thesis.ch4.remark_1_3_1", "seed 001 Ch. 1 Remark 1.3.1, Defs. 1.3.1-1.3.2; digest 001 §1, §6 G1",
       "Gamma <= sigma_g^2/(2 mu) and sigma_g^2 <= 2 L Gamma on the chapter's quadratics.", kind="statement")
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
       "Theorem 4.3.1 covers UPGA-PL run with the experiments' hyper-parameters (paper mode: a constant step from "
       "the grid {1e-3, ..., 1e-1}) as well as in theory mode (its decaying step).", kind="scope", expect="violated",
       because="with a constant step the exact expected gap settles at an O(eta) floor while (4.6) decays like 1/t: "
               "at eta = 0.1 the floor 0.083 exceeds the bound beyond about 4e4 rounds (checked at 1e5)")
@one_thread
def theory_vs_paper_mode(ctx) -> Evidence:
    rounds, horizon = ctx.pick(1000, 10000), 100_000
    gap, consts = theory_mode(rounds)
    checks = [at_most(f"theory mode: E F(w^T) - F* <= (4.6) at T = {rounds}", gap[-1], bound_46(consts, rounds),
                      basis="enumeration")]
    quad = build("testbed", config("upga_pl", 1, sigma=1.0).problem)
    notes = []
    for eta in GRID:
        cfg = config("upga_pl", rounds, sigma=1.0, lr=eta, every=rounds // 2)
        floor = lossy_moments(cfg).metrics(quad)["server.gap"]
        notes.append(f"eta = {eta:.4g}: exact gap at T/2, T = {floor[1]:.6g}, {floor[2]:.6g}")
        if eta == GRID[-1]:
            checks += [equal(f"paper mode eta = {eta:g}: the gap has settled (|gap(T) - gap(T/2)|)",
                             abs(floor[2] - floor[1]), 0.0, 1e-12, basis="enumeration",
                             note="so the gap at any later round equals gap(T)"),
                       at_most(f"paper mode eta = {eta:g}: settled gap <= (4.6) at t = {horizon}", floor[2],
                               bound_46(consts, horizon), basis="enumeration",
                               note="(4.6) with theory mode's constants, G^2 from its trajectory")]
    return Evidence(checks, notes=notes + [
        "theory mode: plain SGD, no momentum, alpha summing to 1, Theorem 4.3.1's step; no projection (the "
        "iterates stay bounded on this quadratic)", "paper mode: the thesis' grid of constant steps; whether its "
        "experiments decay the step is not stated (digest §7 item 1), we read it as constant"])
