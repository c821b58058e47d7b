"""Seed 003 §3 (Theorems 3.1-3.3, proofs App. B-C): the bounds E|theta_bar^t - theta_PS|^2 <= v/(gamma + t) under
full participation, Scheme I and Scheme II, their constants, their O(1/t) rate, and whether the paper's experiments
lie within their preconditions (digest 003 §3.1-§3.3, §4.1.4, §8 V8-V9).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from testbeds.gaussian_mean import gaussian_mean_paper
from theorylab.checks import at_most, max_standardised_gap, printed, slope_check, trend
from theorylab.claims import Evidence, claim
from theorylab.fitting import loglog_slope
from theorylab.performative.experiments import (PAPER_LR, R_DEFAULTS, algorithm_spec, exact, expected_dist2,
                                                gaussian_spec, run_config)
from theorylab.performative.theorems import BY_CONSTRUCTION, for_gaussian
from theorylab.threads import one_thread
from validations.performative.common import SEED, decade_slope

THEOREM_SETTINGS = {"3.1": ("full", "random"), "3.2": ("I", "random"), "3.3": ("II", "uniform")}
DIGEST_CONSTANTS = {"3.1": {"eps_max": "1.454", "varsigma2": "3820", "mu_tilde": "0.05", "c1": "60.23", "c2": "24.09",
                            "c3": "108.4", "c4": "4.585e4", "c5": "1.114e9", "eta_hat0": "2.30e-12", "B": "44.8",
                            "gamma": "1.74e13", "v": "1.41e17"},
                    "3.2": {"c6": "118.26", "eta_tilde0": "1.41e-12", "B": "6.59e9", "gamma": "2.83e13"},
                    "3.3": {"B": "1.37e9", "gamma": "2.83e13"}}
MC_RATE_LR = {"name": "inverse", "lr0": 1.0, "t0": 100}  # the paper's beta = 100 with gamma = 100


def _constant(consts, problem, name: str, theorem: str) -> float:
    if name in ("B", "gamma", "v"):
        return getattr(consts, name)[theorem]
    if name in ("eta_hat0", "eta_tilde0", "mu_tilde", "eps_max"):
        return getattr(consts, name)
    return problem.varsigma2 if name == "varsigma2" else consts.c[name]


def _theorem(ctx, theorem: str) -> Evidence:
    scheme, weights = THEOREM_SETTINGS[theorem]
    checks = []
    reference = gaussian_mean_paper(weights="random")
    ref_consts = for_gaussian(reference, 5, 20)
    for name, text in DIGEST_CONSTANTS[theorem].items():
        checks.append(printed(f"constant {name} (random-p instance, E=5, K=20, delta=(1/eps_bar-1)/2)",
                              _constant(ref_consts, reference, name, theorem), text, "digest §4.1.4 table"))
    spec = gaussian_spec(weights=weights)
    problem = gaussian_mean_paper(weights=weights)
    consts = for_gaussian(problem, 5, 20)
    hidden = consts.hidden_condition(theorem)
    checks.append(trend(f"{hidden.name} at the theorem's own eta_0 (unstated in Lemma B.1)", hidden.value,
                        hidden.value <= hidden.limit, "<=", hidden.limit, basis="closed_form",
                        note="a precondition, not a bound on a measurement (so no tightness); not implied by the "
                             "choice of gamma (digest §3.1); calculator's delta"))
    horizon = ctx.pick(200_000, 2_000_000)
    algorithm = algorithm_spec(scheme, 20, 5, consts.schedule(theorem))
    moments = exact(spec, algorithm, horizon)
    t = moments.t[moments.local_steps:]
    actual = moments.dist2(problem.theta_ps)[t]
    bound = consts.bound(theorem, t)
    worst = float(np.max(actual / bound))
    checks.append(trend(f"bound holds at every t: max over E <= t <= {horizon:.0e} of E|theta_bar^t - theta_PS|^2 / "
                        "(v/(gamma+t))", worst, worst <= 1.0, "<=", 1.0, basis="closed_form",
                        note="exact engine with the theorem's eta_t = 2/(mu_tilde (t + gamma)); the ratio is ~1 near "
                             "t = 0 by construction (v = gamma Delta_0, both sides start at Delta_0), so it measures "
                             "validity, not tightness"))
    checks.append(at_most(f"bound at the horizon t = {horizon:.0e}: E|theta_bar^t - theta_PS|^2 <= v/(gamma+t)",
                          float(actual[-1]), float(bound[-1]), basis="closed_form",
                          note="exact engine; tightness = bound/actual at the horizon. Under the theorem's own steps "
                               "(eta_0 ~ 1e-12) the iterates barely move, so both sides stay near Delta_0: the bound is "
                               "tight here because nothing happens, not because it tracks a convergence"))
    exact_slope = decade_slope(weights, scheme, 20)
    checks.append(trend("rate: exact slope of E|theta_bar - theta_PS|^2 vs t + gamma on [2e4, 2e5]", exact_slope,
                        exact_slope <= -1, "<=", -1.0, basis="closed_form",
                        note="paper's eta_t = 100/(t + 1e4); exact engine, 60 log-spaced points"))
    lr, mc_horizon, window = ctx.pick((MC_RATE_LR, 10_000, 1_000), (PAPER_LR, 200_000, 20_000))
    mc_algorithm = algorithm_spec(scheme, 20, 5, lr)
    trace = ctx.run(run_config(spec, mc_algorithm, mc_horizon, ctx.pick(40, 100), seed=ctx.seed, points=200))
    steps = trace.rounds * 5
    sel = steps >= window
    samples = trace.metrics["server.dist2"][:, sel]
    expected = expected_dist2(spec, mc_algorithm, steps[sel])
    mc_exact = loglog_slope(steps[sel] + lr["t0"], expected)[0]
    note = (f"{trace.replicas} MC runs, eta_t = {lr['lr0'] * lr['t0']:g}/(t + {lr['t0']:g}), "
            f"window [{window:g}, {mc_horizon:g}]; the exact engine's slope for the same schedule is {mc_exact:.4f}")
    checks.append(slope_check("rate: MC slope of |theta_bar - theta_PS|^2 (bootstrap CI)", steps[sel] + lr["t0"],
                              samples, -1.0, "at_most", note, seed=ctx.seed))
    z = np.abs(samples.mean(0) - expected) / (samples.std(0, ddof=1) / np.sqrt(trace.replicas))
    checks.append(max_standardised_gap("MC mean of |theta_bar - theta_PS|^2 matches the exact engine over the fitting "
                                       "window (max |z|)", float(np.max(z)), int(sel.sum()),
                                       note=f"exact engine, same schedule, at each of the {int(sel.sum())} points of "
                                            "the window, so the MC slope measures the exact curve's slope"))
    eta_cap = consts.eta_hat0 if theorem == "3.1" else consts.eta_tilde0
    notes = [f"Constants of this run's instance ({weights} p): gamma = {consts.gamma[theorem]:.3g}, "
             f"v = {consts.v[theorem]:.3g}, eta_0 = {consts.eta0(theorem):.3g}, cap {eta_cap:.3g}. Vacuity: the bound "
             f"at t = 1e6 is {float(consts.bound(theorem, 1e6)) / consts.delta0:.8f} Delta_0 (no guaranteed progress "
             f"at practical horizons); the experiments' eta_0 = 0.01 exceeds the cap by {0.01 / eta_cap:.1e}x "
             "(performative.theorem_scope).",
             "The bound holds but is vacuous: with eta ~ 1e-12 the iterate barely moves, and v/(gamma+t) ~ Delta_0.",
             "Definitional at the theorem's own eta_0, so not counted as checks: " + "; ".join(BY_CONSTRUCTION) +
             " (each is a term of gamma's max).",
             f"Appendix D's Theorems D.5/D.8 assume bounded gradients ((3), D.1): here G^2 = {problem.G2} "
             "(E|grad l|^2 grows like theta^2), so they do not apply and are not checked."]
    if theorem == "3.3":
        notes.append("Theorem 3.3 needs p_i = 1/N: its bound test uses the uniform-p instance; the digest's constants "
                     "(B2, gamma) are for the random-p instance and are checked there.")
    notes.append("For |theta_bar - theta_PS| (the authors' y-axis) halve the slopes.")
    return Evidence(checks, notes=notes, deviations=[R_DEFAULTS] + ([] if ctx.quick else [
        "Full budget: the MC rate test runs at the paper's scale."]) + ([
        "Quick budget: the MC rate test uses eta_t = 100/(t + 100) (the paper's beta with gamma = 100) over 1e4 local "
        "steps; the paper-scale rate is checked on the exact engine."] if ctx.quick else []),
        errata=["eta0_hat/eta0_tilde use the lemma form 2 sigma^2/Delta_0 (derivation (15)); the main text omits "
                "1/Delta_0 (no numerical effect here, sigma^2 = 1e-6). Theorem 3.3's sqrt uses c3 (proof of Thm C.5), "
                "not c5. v uses mu_tilde^2 (the main text's mu_bar is a typo)."])


THEOREM_CLAIMS = {
    "3.1": ("Theorem 3.1 (L223; App. B)", "Full participation with eta_t = 2/(mu_tilde (t + gamma)): "
            "E|theta_bar^t - theta_PS|^2 <= v/(gamma + t) for all t (an O(1/t) rate)."),
    "3.2": ("Theorem 3.2 (L239; App. C)", "Scheme I (K i.i.d. draws by p) with eta_t = 2/(mu_tilde (t + gamma)): "
            "E|theta_bar^t - theta_PS|^2 <= v/(gamma + t)."),
    "3.3": ("Theorem 3.3 (L249; App. C)", "Scheme II (K uniform without replacement, p_i = 1/N) with eta_t = "
            "2/(mu_tilde (t + gamma)): E|theta_bar^t - theta_PS|^2 <= v/(gamma + t)."),
}
for _number, (_where, _statement) in THEOREM_CLAIMS.items():
    claim(f"performative.thm{_number.replace('.', '_')}", f"{SEED} {_where}; digest 003 §3.3, §4.1.4, §8 V8-V9",
          _statement, kind="statement")(one_thread(functools.partial(_theorem, theorem=_number)))


@claim("performative.theorem_scope", f"{SEED} §4.1 (L308: the scheme ordering 'conforms to our theoretical result "
       "because B1 > B2'), Thms B.4/C.5 (App. B L568, App. C L899); digest 003 TL;DR, §3.1-§3.3, §4.1.4",
       "The Gaussian experiments (eta_t = 100/(t + 1e4), i.e. beta = 100, gamma = 1e4, eta_0 = 0.01; E = 5, K = 20) "
       "lie within the preconditions of Theorems 3.1-3.3 in their general-step form (B.4, C.5), so the theorems "
       "describe them.", kind="scope", expect="violated",
       because="out of scope: the experiments' eta_0 = 0.01 is ~1e6 times the largest step Thms B.4/C.5 allow, so "
               "the theorems do not describe them (a finding about the theorems' reach, not an error of the paper)")
def theorem_scope(ctx) -> Evidence:
    beta, gamma = PAPER_LR["lr0"] * PAPER_LR["t0"], PAPER_LR["t0"]
    checks, cap_factor = [], math.inf
    for theorem, (scheme, weights) in THEOREM_SETTINGS.items():
        consts = for_gaussian(gaussian_mean_paper(weights=weights), 5, 20)
        conditions = consts.schedule_conditions(theorem, beta, gamma)
        cap_factor = min(cap_factor, conditions[1].value / conditions[1].limit)  # eta_0 against eta0_hat / eta0_tilde
        for cond in conditions:
            checks.append(at_most(f"Thm {theorem} ({scheme}, {weights} p): {cond.name}", cond.value, cond.limit,
                                  basis="closed_form",
                                  note="exact constants (digest §4.1.4); a delta-dependent limit is its supremum over "
                                       "delta, so a miss holds for every delta"))
    return Evidence(checks, deviations=[R_DEFAULTS], notes=[
        "The theorems' own step sizes (eta_0 ~ 1e-12) are checked in performative.thm3_*; this claim asks whether the "
        f"paper's experiments, which it reads through B1 > B2, are covered: eta_0 = {beta / gamma:g} is "
        f"{cap_factor:.1e} times (or more) the largest eta0_hat / eta0_tilde any delta allows."])
