"""Thesis ch. 2, CA-Fed on Synthetic LEAF (seed 001 §2.4.3, §2.5.2 Figs. 2.1a and 2.2, L870-883; digest 001 §5.1-5.2,
§8 V12, V14, V27): the kappa_bar^2 trade-off, kappa_bar^2 = 1e-2 against More available, and Fig. 2.1a's ordering.

The runs are those of the figure recipes :mod:`theorylab.figures.thesis_fig2_1` and :mod:`theorylab.figures.thesis_fig2_2` (their
docstrings give the setting: Synthetic LEAF(0.5, 0.5) with the ridge multinomial logistic model of
:mod:`theorylab.testbeds.synthetic_leaf`, the thesis' four availability classes, oracle (pi, lambda)).  Accuracies are the
alpha-weighted average test accuracy over clients, in percentage points (pp); every comparison is paired over
replicas, which share the dataset and differ in availability and minibatches (common random numbers across methods).

The thesis leaves open how CA-Fed estimates the clients' minima F_i* (digest §2.6 [?]: the running minimum of Alg. 3
line 4, or the oracle minimum of the author's code), and it decides which clients CA-Fed keeps.  Every comparison
that involves CA-Fed is therefore decided under both modes of :data:`theorylab.figures.thesis_fig2_1.CAFED_MODES`
(:func:`theorylab.checks.across` with ``what="choice"``): "not reproduced" only when both fail.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theorylab.figures import thesis_fig2_1, thesis_fig2_2
from theorylab.checks import across, at_most, paired_difference
from theorylab.claims import Evidence, claim
from theorylab.threads import one_thread
from theorylab.tuning import select
from theorylab.validations.thesis.cafed.exclusion import drive

LR_GRID = (0.02, 0.05, 0.1)  # local steps around the common 0.05 for the per-method tuning (eta_c = 2 diverges here)
SMALLEST_EFFECT = 2.8  # pp: the smallest accuracy difference the thesis reports as an effect in Fig. 2.2a (L882)
MODES = thesis_fig2_1.CAFED_MODES
_TRACES: dict = {}


def _run(ctx):
    """``ctx.run`` memoised by config key within the process, so that claims sharing runs compute them once even
    without a result store."""
    def run(config):
        key = config.key()
        if key not in _TRACES:
            _TRACES[key] = ctx.run(config)
        return _TRACES[key]
    return run


def _curves(ctx, figure) -> dict[str, dict]:
    """``figure.compute`` under every CA-Fed mode (the baselines' runs are shared)."""
    return {mode: figure.compute(ctx, _run(ctx), mode) for mode in MODES}


def _deviations(ctx, rounds: int) -> list[str]:
    n = thesis_fig2_1.clients(ctx)
    return [f"N = {n} clients (thesis 100), T = {rounds} rounds, {thesis_fig2_1.replicas(ctx)} replicas (thesis 10 runs); one "
            "dataset (seed 0) for all replicas.",
            "One common step setting for every method (K = 5, eta_c = 0.05, eta_s = 1) instead of the per-method grid "
            "search of Table A.2 (see figures/thesis_fig2_1.py); K is not given in the thesis.",
            "CA-Fed's losses are the exact train losses F_i(w^t) (oracle mode) or those plus Gaussian noise of a "
            f"one-minibatch standard error, {thesis_fig2_1.minibatch_noise(thesis_fig2_1.leaf_problem(n)):.3g} "
            "(running-min mode), instead of one-minibatch estimates."]


def _acc(data: dict, kappa: float) -> np.ndarray:
    return data[f"CA-Fed ({kappa:g})"]


def defence(varied: str) -> str:
    """The authors' answer to a verdict on this stand-in, and what the verdict was decided across (``varied``)."""
    return ("The authors can answer that our stand-in is not their experiment: N = 20 clients in quick mode (100 in "
            "full), Gaussian loss noise instead of minibatch losses, CA-Fed's estimator of F_i* left open in the text, "
            "the number of local steps K not stated (digest 001 §5.1: older scripts use 2), and learning rates that do "
            "not transfer (Table A.2's eta_c = 2 diverges on our testbed). The verdict is decided across " + varied +
            "; Unbiased and More available, which need no estimate, behave as the thesis describes on the same runs.")


MODES_VARIED = "both F_i* modes the digest lists (the author's oracle minima and the text's running minimum)"
TUNED_VARIED = (MODES_VARIED + ", with one common step (eta_c = 0.05, K = 5) and with each method's eta_c tuned on "
                f"{list(LR_GRID)} (on a separate seed)")
EARLY_K = (5, 2)  # K of the common setting, and of the digest's older scripts (full mode)


@claim("thesis.cafed_leaf.kappa_tradeoff",
       "seed 001 Ch. 2 §2.5.2, Fig. 2.2a (L878-883); digest 001 §5.2, §8 V14",
       "On Synthetic(0.5, 0.5) a small kappa_bar^2 is better early and a large one late: CA-Fed (kappa_bar^2 = 0.1) "
       "beats Unbiased at t = 40 (+2.8 pp), and CA-Fed (kappa_bar^2 = 1e2) beats More available at t = T = 500 "
       "(+3.8 pp).",
       kind="statement", expect="inconclusive", expect_full="violated", severity="experiment",
       where="§2.5.2, 'Convergence speed vs. Bias error', Fig. 2.2a",
       quote=r"Low values of $\bar{\kappa}^2$ speed-up convergence and then they can be beneficial for short training "
             r"durations (e.g., CA-Fed ($\bar{\kappa} = 10^{-1}$) achieves a higher test accuracy of +2.8 pp with "
             r"respect to Unbiased at communication round $t = 40$).",
       because="the early half is undecided under one of the choices left open: with the oracle minima CA-Fed "
               "(kappa_bar^2 = 0.1) is far below Unbiased (violated, read at t = 40 and at t = 10), with the running "
               "minimum on noisy losses it is below Unbiased on average but varies so much across the 8 replicas "
               "that the paired interval contains 0; the late half (kappa_bar^2 = 1e2 beats More available) holds "
               "under both. Full mode (N = 100, T = 500, 10 replicas, as the thesis): at t = 40 CA-Fed (kappa_bar^2 = "
               "0.1) is 7.2-24.6 pp below Unbiased under both modes, at the common step and with each method's eta_c "
               "tuned at K = 5 and at K = 2 (every paired interval below 0), against the thesis' +2.8 pp; the late "
               "half holds",
       defence=defence(MODES_VARIED + "; in full mode the early half also with each method's eta_c tuned on the "
                                      "grid, at K = 5 and at K = 2"), checks=("V14",))
@one_thread
def kappa_tradeoff(ctx) -> Evidence:
    curves = _curves(ctx, thesis_fig2_2)
    rounds = curves[MODES[0]]["rounds"]
    T = int(rounds[-1])
    index = {int(np.argmin(np.abs(rounds - t))) for t in (40, 0.08 * T)}  # the thesis' t = 40, and 40/500 of T
    reads = {f"t = {int(rounds[e])}": e for e in sorted(index)}
    early, chosen = {}, {}
    for mode, data in curves.items():
        settings = {"common eta_c = 0.05, K = 5": data}
        for K in ctx.pick((), EARLY_K):  # quick mode is undecided at the common setting already
            settings[f"eta_c tuned per method, K = {K}"], chosen[(mode, K)] = tuned_pair(
                ctx, mode, T, K, 0.1, "Unbiased")
        for setting, pair in settings.items():
            cafed = pair["CA-Fed"] if "CA-Fed" in pair else _acc(pair, 0.1)
            for label, e in reads.items():
                early[f"{mode}, {setting}, read at {label}"] = paired_difference(
                    f"accuracy at {label}: CA-Fed (kappa2 = 0.1) minus Unbiased", cafed[:, e],
                    pair["Unbiased"][:, e], unit=" (pp)", note="thesis: +2.8 pp at t = 40 of T = 500")
    late = {mode: paired_difference(f"accuracy at t = T = {T}: CA-Fed (kappa2 = 1e2) minus More available",
                                    _acc(data, 1e2)[:, -1], data["More available"][:, -1], unit=" (pp)",
                                    note="thesis: +3.8 pp at t = 500") for mode, data in curves.items()}
    best = {mode: thesis_fig2_2.best_kappa(data) for mode, data in curves.items()}
    return Evidence([
        across("CA-Fed (kappa2 = 0.1) beats Unbiased early", early, what="choice"),
        across(f"CA-Fed (kappa2 = 1e2) beats More available at t = T = {T}", late, what="choice"),
    ], notes=[f"{mode}: best kappa_bar^2 by mean accuracy at rounds " + ", ".join(
        f"{int(t)}: {k:g}" for t, k in zip(rounds[1:], b[1:])) for mode, b in best.items()] + [
        f"{mode}: mean accuracy at T (pp): " + ", ".join(f"{k}: {v[:, -1].mean():.1f}" for k, v in data.items()
                                                         if k != "rounds") for mode, data in curves.items()] + [
        f"Per-method tuning ({mode}, K = {K}): eta_c chosen on seed {ctx.seed + 1} from {list(LR_GRID)} by final "
        f"accuracy: {lrs}" for (mode, K), lrs in chosen.items()],
        deviations=_deviations(ctx, T) + [f"'Early' is read at t = 40 (the thesis' round) and at the recorded round "
                                          f"nearest to its 40/500 of our T = {T}."])


@claim("thesis.cafed_leaf.small_kappa",
       "seed 001 Ch. 2 §2.4.3 and §2.5.2, Fig. 2.2a (L880-881); digest 001 §2.6, §8 V12",
       "CA-Fed with kappa_bar^2 = 1e-2 achieves a similar convergence as More available, and with kappa_bar^2 = 1e2 "
       "its accuracy curve overlaps Unbiased.",
       kind="statement", expect="inconclusive",
       where="§2.5.2, 'Convergence speed vs. Bias error', Fig. 2.2a",
       quote=r"CA-Fed tends to exclude more clients for low values of $\bar{\kappa}^2$ and achieves a similar "
             r"convergence rate as More available for $\bar{\kappa}^2 = 10^{-2}$. … For $\bar{\kappa}^2 = 10^2$, "
             r"CA-Fed reduces to Unbiased (their curves overlap in Fig. 2.2a).",
       because="with the oracle minima CA-Fed (kappa_bar^2 = 1e-2) keeps about two clients and stays at chance level, "
               "tens of points below More available (violated); with the running minimum on noisy losses it keeps "
               "about ten and plateaus below More available on average, but the replicas spread so widely that the "
               "interval of the gap contains the 2.8 pp tolerance: undecided under that choice. Under both it is "
               "nearer More available than Unbiased, and the kappa_bar^2 = 1e2 half holds",
       defence=defence(MODES_VARIED + " at one common step") + " 'Similar' is read with the thesis' own smallest reported effect (2.8 pp) as the "
                              "tolerance; with the oracle minima the gap found is about 17 times larger.",
       checks=("V12",))
@one_thread
def small_kappa(ctx) -> Evidence:
    curves = _curves(ctx, thesis_fig2_2)
    gap = lambda a, b: np.abs(a - b)[:, 1:].mean(1)  # noqa: E731  per replica, over the rounds after t = 0
    tolerance = (f"'similar' / 'overlap' read as: differs by less than {SMALLEST_EFFECT} pp, the smallest effect the "
                 "thesis reports in Fig. 2.2a")

    def per_mode(check):
        return {mode: check(_acc(data, 1e-2), _acc(data, 1e2), data["More available"], data["Unbiased"])
                for mode, data in curves.items()}

    return Evidence([
        across("CA-Fed (1e-2) similar to More available", per_mode(lambda small, _, more, __: at_most(
            "mean over rounds of |CA-Fed (1e-2) - More available| (pp)", float(gap(small, more).mean()),
            SMALLEST_EFFECT, basis="monte_carlo", samples=gap(small, more), note=tolerance)), what="choice"),
        across("CA-Fed (1e-2) nearer More available than Unbiased", per_mode(
            lambda small, _, more, unbiased: paired_difference(
                "mean over rounds of |CA - Unbiased| - |CA - More available|", gap(small, unbiased), gap(small, more),
                unit=" (pp)")), what="choice"),
        across("CA-Fed (1e2) overlaps Unbiased", per_mode(lambda _, large, __, unbiased: at_most(
            "mean over rounds of |CA-Fed (1e2) - Unbiased| (pp)", float(gap(large, unbiased).mean()), SMALLEST_EFFECT,
            basis="monte_carlo", samples=gap(large, unbiased), note=tolerance)), what="choice"),
    ], notes=[f"{mode}: mean accuracy over rounds (pp): " + ", ".join(
        f"{k}: {v[:, 1:].mean():.1f}" for k, v in data.items() if k != "rounds") for mode, data in curves.items()]
        + [_kept(ctx, mode) for mode in MODES],
        deviations=_deviations(ctx, int(curves[MODES[0]]["rounds"][-1])))


def _kept(ctx, mode: str) -> str:
    """How many clients CA-Fed (kappa2 = 1e-2) gives a weight q_i > 0, per round (a rerun of the same config)."""
    T = thesis_fig2_2.rounds(ctx)
    n = thesis_fig2_1.clients(ctx)
    spec = thesis_fig2_1.methods(thesis_fig2_1.leaf_problem(n), T, kappas=(1e-2,), others=(), mode=mode)["CA-Fed"]
    kept = drive(thesis_fig2_1.leaf_config(ctx, spec, T, every=T))["kept"]
    return (f"{mode}: CA-Fed (1e-2) keeps {kept.mean():.2f} of {n} clients per round on average (More available keeps "
            f"the {n // 2} more available ones)")


def tuned_pair(ctx, mode: str, rounds: int, K: int, kappa: float, other: str) -> tuple[dict, dict[str, float]]:
    """Accuracy curves of CA-Fed (``kappa``, in ``mode``) and ``other`` with ``K`` local steps, each at the local step
    of :data:`LR_GRID` with its best mean final accuracy on a tuning seed (``ctx.seed + 1``), evaluated on
    ``ctx.seed``'s replicas: the thesis' per-method tuning (Table A.2), without selecting on the runs that are
    compared.  Returns ({label: (replicas, evals)}, chosen lr by label)."""
    problem = thesis_fig2_1.leaf_problem(thesis_fig2_1.clients(ctx))

    def curves(c, lr: float) -> dict:
        specs = thesis_fig2_1.methods(problem, rounds, kappas=(kappa,), others=(other,), mode=mode, lr=lr)
        return thesis_fig2_1.accuracy_curves(c, rounds, {label: {**spec, "local_steps": K}
                                                         for label, spec in specs.items()}, _run(c))

    tune = dataclasses.replace(ctx, seed=ctx.seed + 1)
    grid = {lr: curves(tune, lr) for lr in LR_GRID}  # a diverged run's accuracy reads inf: never chosen (select)
    chosen = {label: select({lr: runs[label] for lr, runs in grid.items()}, lambda acc: float(acc[:, -1].mean()),
                            larger=True, rule="best mean final accuracy on the tuning seed").best
              for label in ("CA-Fed", other)}
    return {label: curves(ctx, lr)[label] for label, lr in chosen.items()}, chosen


@claim("thesis.cafed_leaf.fig2_1a_ordering",
       "seed 001 Ch. 2 §2.5.2, Fig. 2.1a (L870-877); digest 001 §5.2, §8 V27",
       "On Synthetic LEAF after T = 200 rounds CA-Fed (kappa_bar^2 = 1) has the highest test accuracy, +1.56 pp above "
       "the second best, AdaFed, which beats Unbiased, More available and F3AST.",
       kind="reproduction", expect="violated", severity="experiment",
       where="§2.5.2, 'CA-Fed vs. baselines', Fig. 2.1a",
       quote="Across all three datasets, CA-Fed consistently outperforms the baselines, achieving higher test "
             "accuracy (+1.56 pp on Synthetic; +0.94 pp on MNIST; +1.32 pp on CIFAR-10) compared to the second best "
             "performing method, AdaFed.",
       because="on our testbed CA-Fed (kappa_bar^2 = 1) excludes clients it needs and ends 5.6-7.9 pp below AdaFed "
               "under both F_i* modes, with the common step and with each method's step tuned on a grid (every paired "
               "interval below 0); AdaFed's lead over the other baselines reproduces only in part (not over Unbiased)",
       defence=defence(TUNED_VARIED), partial=("V27",))
@one_thread
def fig2_1a_ordering(ctx) -> Evidence:
    curves = _curves(ctx, thesis_fig2_1)
    final = {mode: {k: v[:, -1] for k, v in data.items() if k != "rounds"} for mode, data in curves.items()}
    base = final[MODES[0]]  # the baselines do not depend on CA-Fed's mode
    outcomes, chosen = {}, {}
    for mode, f in final.items():
        outcomes[f"{mode}, common eta_c = 0.05"] = paired_difference(
            "final accuracy: CA-Fed minus AdaFed", f["CA-Fed"], f["AdaFed"], unit=" (pp)", note="thesis: +1.56 pp")
        tuned, chosen[mode] = tuned_pair(ctx, mode, thesis_fig2_1.horizon(ctx), thesis_fig2_1.STEPS["local_steps"],
                                         1.0, "AdaFed")
        outcomes[f"{mode}, eta_c tuned per method on {list(LR_GRID)}"] = paired_difference(
            "final accuracy: CA-Fed minus AdaFed", tuned["CA-Fed"][:, -1], tuned["AdaFed"][:, -1], unit=" (pp)",
            note=f"chosen eta_c: {chosen[mode]}")
    checks = [across("CA-Fed beats AdaFed at T", outcomes, what="choice")]
    checks += [paired_difference(f"final accuracy: AdaFed minus {other}", base["AdaFed"], base[other],
                                 unit=" (pp)") for other in ("Unbiased", "More available", "F3AST")]
    f3ast = ("F3AST is the f3ast kernel (FedAWE's reading: weights pi_k / r_k with pi_k = 1/m, budget 0.45 N, "
             "smoothness 1/T), since the thesis states no rule (digest 001 §2.5 item 4).")
    return Evidence(checks, notes=[f"{mode}: final accuracy (pp): " + ", ".join(f"{k}: {v.mean():.1f}"
                                                                               for k, v in f.items())
                                   for mode, f in final.items()] + [
        f"Per-method tuning ({mode}): eta_c chosen on seed {ctx.seed + 1} from {list(LR_GRID)}: {lrs}"
        for mode, lrs in chosen.items()],
                    deviations=_deviations(ctx, int(curves[MODES[0]]["rounds"][-1])) + [f3ast])
