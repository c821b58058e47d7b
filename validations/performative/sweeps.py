"""Seed 003 §4.1 'Impact of E' and 'Impact of K' (Figs 2-3; §3.3 'Choice of E', 'Choice of K'): the shape of the
exact expected error over the aggregation period E and the number of sampled clients K, under every reading of the
figures' unstated axes (digest 003 §4.1.1-§4.1.2, §6 Tables C-D, §8 V11, V16).
"""

from __future__ import annotations

import numpy as np

from theorylab.figures import performative_fig2, performative_fig3
from theorylab.checks import Check, across, trend
from theorylab.claims import Evidence, claim
from theorylab.performative.experiments import R_DEFAULTS, default_weights
from theorylab.threads import one_thread
from theorylab.validations.performative.common import SEED, decade_slope, dist2

E_VALUES = (1, 5, 10, 20, 50)  # the authors' list [R]
ITERATIONS = (10_000, 100_000)  # horizons in local iterations
ROUNDS = (2_000, 6_000)  # horizons in rounds; 6000 is the [R] server_step
K_TABLE_D = (2, 5, 10, 15, 20, 24, 25)  # digest Table D; K = 25 of Scheme II is full participation
K_PLOT = (2, 5, 15, 20, 25)  # the K the [R] plot script loads


# ----- E -----------------------------------------------------------------------------------------------------------
def _e_shape(values: dict) -> bool:
    """'A slightly larger E leads to faster convergence. However, an extremely large E (E=50) … slower': E = 5 or 10
    below E = 1, and E = 50 above both."""
    moderate = min(values[5], values[10])
    return moderate < values[1] and values[50] > moderate


def _e_reading(label: str, panels: dict) -> Check:
    """Both panels of Fig. 2 (``panels``: scheme -> {E: error}) show the shape."""
    return trend(label, "; ".join(f"Scheme {s}: " + ", ".join(f"E={E} {v:.3g}" for E, v in values.items())
                                  for s, values in panels.items()),
                 all(_e_shape(v) for v in panels.values()), "E=5 or 10 < E=1 and E=50 > both, in both panels",
                 "valley", basis="enumeration", note="exact E|theta_bar - theta_PS|^2, K = 20")


@claim("performative.effect_of_E",
       f"{SEED} §4.1 'Impact of E' (L307), Fig. 2; §3.3 'Choice of E'; digest §6 Table C, V16",
       "A slightly larger E converges faster; an extremely large E (E = 50) converges more slowly.", kind="statement",
       expect="inconclusive", where="§4.1, 'Impact of E' and Fig. 2 (L307-L310)",
       quote="A slightly larger E leads to faster convergence. However, an extremely large E(E=50) in the experiment "
             "can also cause slower convergence.",
       because="it depends on Fig. 2's unstated x-axis: per local iteration (the [R] plot's axis and Fig. 1's "
               "'number of iterations') E = 1 is fastest at every horizon (E=5 / E=1 = 5.85 for Scheme II at t = 1e5); "
               "per communication round E = 5 is fastest and E = 50 slowest after 2000 rounds, but E = 1 is fastest "
               "again after 6000 (the [R] server_step)",
       defence="The authors can answer that Fig. 2 counts communication rounds, the cost §3.3 weighs, and per round "
               "the statement holds at the horizons a figure of a few thousand rounds shows. That is why the verdict "
               "is inconclusive and not violated: only if Fig. 2's axis is local iterations, as in the released plot "
               "script, does the statement fail, there at every horizon and in both panels.", checks=("V16",))
@one_thread
def effect_of_e(ctx) -> Evidence:
    panels = {"I": {}, "II": {}}  # scheme -> E -> errors at ITERATIONS + rounds * E
    for scheme in panels:
        for E in E_VALUES:
            panels[scheme][E] = dist2(default_weights(scheme), scheme, 20, [*ITERATIONS, *(r * E for r in ROUNDS)], E)
    readings = {}
    for i, t in enumerate(ITERATIONS):
        readings[f"per local iteration, t = {t:.0e}"] = _e_reading(
            f"t = {t:.0e}", {s: {E: float(v[i]) for E, v in p.items()} for s, p in panels.items()})
    for j, rounds in enumerate(ROUNDS):
        column = len(ITERATIONS) + j
        readings[f"per round, {rounds} rounds"] = _e_reading(
            f"{rounds} rounds", {s: {E: float(v[column]) for E, v in p.items()} for s, p in panels.items()})
    path = performative_fig2.draw(performative_fig2.compute(ctx), ctx.figure_path("performative-fig2"))
    return Evidence([across("Fig. 2: a slightly larger E faster, E = 50 slower (x-axis and horizon)", readings)],
                    figure=str(path), deviations=[R_DEFAULTS], notes=[
        "Fig. 2: (a) Scheme I with the [R] random p, (b) Scheme II with p_i = 1/25 (its caption); E in {1, 5, 10, 20, "
        "50} ([R]). The step eta_t = 100/(t + 1e4) runs over local iterations, so per round the comparison changes "
        "with the horizon.",
        "§3.3's communication-time argument ('some middle E values are preferable' when communication is slow) "
        "matches the per-round reading."])


# ----- K -----------------------------------------------------------------------------------------------------------
def _valley(values) -> bool:
    """The sequence strictly decreases to a minimum at an interior position and strictly increases after it."""
    low, steps = int(np.argmin(values)), np.diff(values)
    return 0 < low < len(values) - 1 and bool(np.all(steps[:low] < 0) and np.all(steps[low:] > 0))


def _runs(scheme: str, ks) -> list:
    """(scheme, K) per K; Scheme II with K = N = 25 is full participation."""
    return [("full", None) if (scheme == "II" and k == 25) else (scheme, k) for k in ks]


def _k_measures(scheme: str) -> dict:
    """Fig. 3's 'convergence rate' in K under each reading: label -> (K values, error or slope per K; lower is
    faster).  The [R] time axis x = t C K/(N + 1) compares the K at equal time: K runs 25/K times the iterations of
    K = 25 (here 2e4)."""
    runs = _runs(scheme, K_TABLE_D)
    level = {h: np.array([float(dist2("uniform", s, k, h)[0]) for s, k in runs]) for h in (50_000, 200_000)}
    equal_time = np.array([float(dist2("uniform", s, k, 20_000 * 25 // size // 5 * 5)[0])
                           for (s, k), size in zip(runs, K_TABLE_D)])
    plot = [K_TABLE_D.index(k) for k in K_PLOT]
    return {"error at t = 5e4 (Table D)": (K_TABLE_D, level[50_000]),
            "error at t = 2e5": (K_TABLE_D, level[200_000]),
            "slope on [2e4, 2e5]": (K_TABLE_D, np.array([decade_slope("uniform", s, k) for s, k in runs])),
            "[R] time axis, equal time": (K_TABLE_D, equal_time),
            "error at t = 5e4 on the [R] plot's K": (K_PLOT, level[50_000][plot])}


def _k_check(scheme: str, label: str, ks, values) -> Check:
    listed = ", ".join(f"K={k}: {v:.4g}" for k, v in zip(ks, values))
    if scheme == "I":
        return trend(f"Scheme I: {label} decreases in K (largest step change)", float(np.diff(values).max()),
                     bool(np.all(np.diff(values) < 0)), "< 0", 0.0, basis="enumeration", note=listed)
    return trend(f"Scheme II: {label} falls to an interior minimum in K, then rises (K at the minimum)",
                 ks[int(np.argmin(values))], _valley(values), "2 < K_min < 25, monotone on each side", "interior",
                 basis="enumeration", note=listed)


@claim("performative.effect_of_K",
       f"{SEED} §4.1 'Impact of K' (L313), Fig. 3; §3.3 'Choice of K'; digest §6 Table D, V11",
       "For Scheme I a larger K converges faster; for Scheme II the convergence rate first increases then decreases "
       "with K.", kind="statement", expect="violated", severity="experiment",
       where="§4.1, 'Impact of K' and Fig. 3 (L312-L314)",
       quote="For scheme I, larger k leads to faster convergence. While for scheme II, as k increasing, the "
             "convergence rate will first increase and then decrease.",
       because="Scheme II's exact error decreases, and its slope steepens, monotonically in K under every reading "
               "tried (error at 5e4 or 2e5, slope, the [R] plot's time axis t C K/(N + 1), the [R] plot's K): no "
               "interior optimum; Scheme I's part holds under every reading",
       defence="Fig. 3 shows 5 Monte Carlo runs of unstated K values, so non-monotone noise can look like a peak, "
               "and §3.3 argues that stragglers make large K slow in wall-clock time. But the error and the slope "
               "of Scheme II are monotone in expectation on both axes the released plot script uses (local "
               "iterations, and time scaled by C K/(N + 1)); the paper states no other time model, so 'first increase "
               "then decrease' is not a property of Scheme II on its own testbed.", checks=("V11",))
@one_thread
def effect_of_k(ctx) -> Evidence:
    checks = []
    for scheme in ("I", "II"):
        outcomes = {label: _k_check(scheme, label, ks, values) for label, (ks, values) in _k_measures(scheme).items()}
        checks.append(across(f"Fig. 3({'a' if scheme == 'I' else 'b'}): Scheme {scheme}'s shape in K", outcomes))
    path = performative_fig3.draw(performative_fig3.compute(ctx), ctx.figure_path("performative-fig3"))
    return Evidence(checks, figure=str(path), deviations=[R_DEFAULTS, "uniform p for both panels (Fig. 3(b)'s "
                                                                      "caption; Table D's setting)."], notes=[
        "'The convergence rate first increases then decreases' is tested on the error level (a faster rate means a "
        "lower curve), on the fitted log-log slope (a more negative slope) and at equal time on the [R] plot's time "
        "axis; each must show a valley with its bottom at an interior K."],
        errata=["Scheme II's 'first increases then decreases with K' is not reproduced in expectation: the error "
                "decreases and the slope steepens monotonically in K (digest Table D); a Monte Carlo figure with 5 "
                "runs can show non-monotone noise."])
