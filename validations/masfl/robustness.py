r"""Seed 004's robustness claims (§4.1, §6 Figs. 2–3; digest 004 §5.2 checks 11–13) on a closed-form testbed:
AdaMasFL's normalised steps keep it stable over a wide range of learning rates, and it stays nearly unchanged as the
asynchrony grows while the others deteriorate (the staleness statistics are ``validations/masfl/staleness.py``'s).

**Asynchrony sweep.**  The paper's protocol (§6): step sizes are tuned at the default concurrency
(:math:`M_c = 20 = 2S`, Fig. 1d) and frozen while :math:`M_c` grows.  AdaMasFL takes Theorem 4.1's problem-free steps;
MasFL Theorem 3.1's or tuned ones; CA²FL and FADAS tuned ones, a multiplier on all their step sizes chosen at
:math:`M_c = 2S` by the final gap or by the run-average gap (speed) — the paper says neither, so both are run
(:func:`theorylab.checks.across`, ``what="choice"``).  Performance is the optimality gap over the last quarter of the
run (the end of Fig. 2's curves; the whole-run average would count the transient, where a method that barely moves
looks robust); the degradation of a method is the change of its :math:`\log_{10}` final gap from :math:`M_c = 2S` to
:math:`5S`, per paired run, and the paper's contrast is that AdaMasFL's is the smallest.

The learning-rate sweep is :mod:`theorylab.figures.masfl_fig3`'s (a multiplier :math:`m` one decade apart on every step size
of each method).  A multiplier is *good* for a run when the final optimality gap is at most a tenth of the initial one;
the *plateau* of a run is the longest interval of :math:`\log_{10}m` on which the gap, interpolated linearly in
log-log between grid points, stays good, in decades (continuous, so that paired differences have power).  The
threshold is ours (the paper gives none), so plateau comparisons never accuse.  AdaMasFL's steps are bounded by
:math:`\gamma` and :math:`\eta` whatever the gradients (§4.1, Lemma D.1), so it cannot diverge; the others diverge
above an :math:`\mathcal O(1/L)` threshold.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.masfl_curves import async_quadratic
from theorylab.figures.masfl_fig3 import BASE, MULTIPLIERS, compute, draw
from theorylab.bounds.masfl import steps_thm31, steps_thm41
from theorylab.checks import across, equal, ours, paired_difference
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.registry import build
from theorylab.threads import one_thread

FINE = 100  # points per decade of the interpolated grid
DIVERGED = 1e6  # a diverged run's gap ratio in the interpolation (anything far above the threshold)


def plateau(ratios: np.ndarray, threshold: float = 0.1) -> np.ndarray:
    """Per run (rows of ``ratios``, final / initial gap over :data:`MULTIPLIERS`), the longest interval of
    log10(m) on which the log gap ratio, interpolated linearly between grid points, stays <= log ``threshold``;
    in decades."""
    grid = np.log10(MULTIPLIERS)
    fine = np.linspace(grid[0], grid[-1], FINE * int(round(grid[-1] - grid[0])) + 1)
    logs = np.log10(np.minimum(ratios, DIVERGED))
    best = np.zeros(len(ratios))
    for r, row in enumerate(logs):
        run = longest = 0
        for ok in np.interp(fine, grid, row) <= np.log10(threshold):
            run = run + 1 if ok else 0
            longest = max(longest, run)
        best[r] = max(longest - 1, 0) / FINE
    return best


@claim("masfl.lr_plateau", "seed 004 §4.1, §6 Fig. 3; digest 004 §5.2 check 12", "AdaMasFL never diverges over "
       "step-size multipliers spanning five decades (its normalised steps bound every server move by gamma); the "
       "width of its plateau of good step sizes against MasFL's, FedBuff's, CA2FL's and FADAS's is shown by a "
       "criterion of our own.", kind="statement", where="§4.1, Momentum-Driven Adaptivity and Server-Side Aggregation",
       quote="This gradient normalization mitigates sensitivity to learning rate choices by automatically adjusting "
             "the effective stepsizes based on local optimization landscape. … These designs collectively enable "
             "AdaMasFL to achieve both normalization-induced stability and momentum-driven acceleration.",
       checks=("12",))
@one_thread
def lr_plateau(ctx) -> Evidence:
    data = compute(ctx)
    finals = data["ratios"]
    good = {name: plateau(ratio) for name, ratio in finals.items()}
    diverged = {name: int(np.isinf(f).sum()) for name, f in finals.items()}
    checks = [equal("AdaMasFL: diverged runs over the whole grid", diverged["adamasfl"], 0, 0, basis="closed_form",
                    note="every server step has length <= gamma (Lemma D.1); diverged runs of the others: "
                         + ", ".join(f"{k} {v}" for k, v in diverged.items() if k != "adamasfl"))]
    checks += [ours(paired_difference(f"plateau width (decades): AdaMasFL - {name}", good["adamasfl"], good[name],
                                      strict=False),
                    "a step size is 'good' when the final gap is at most a tenth of the initial one: the paper gives "
                    "no threshold for 'robustness across a wide range of learning rates'")
               for name in BASE if name != "adamasfl"]
    table = "; ".join(f"{name}: " + ", ".join(f"{v:.2g}" for v in np.median(f, 0)) for name, f in finals.items())
    return Evidence(checks, notes=[f"Median final gap / initial gap over m = {MULTIPLIERS}: {table}.",
                                   "Fig. 3's own relation ('AdaMasFL consistently outperforms the baselines ... across "
                                   "the displayed learning rate regions') is not decided: the paper says neither which "
                                   "rate it sweeps nor over which range (digest 004 §4), so the comparison at equal "
                                   "multipliers of each method's own base step is only shown in the table above.",
                                   "Plateau widths (mean over replicas): "
                                   + ", ".join(f"{k} {v.mean():.2f}" for k, v in good.items())],
                    figure=str(draw(data, ctx.figure_path("masfl-fig3"))),
                    deviations=["Quadratic testbed, N, S, M_c, T = {} (the paper: CNNs on CIFAR-10 / FMNIST, T = 600, "
                                "test accuracy).".format(data["setting"])])


LEVELS = (2, 5)  # M_c / S: the paper's default M_c = 20 at S = 10, and the top of the digest's suggested 20-50
GRID = tuple(10.0 ** e for e in (-1.0, -0.5, 0.0, 0.5, 1.0))  # step multipliers tried at the default M_c
CRITERIA = ("final gap", "run-average gap")  # what the tuning at the default M_c minimises
ROBUST = dict(n=20, S=2, K=2, sigma=0.5)
STEP_KEYS = ("gamma", "eta", "lr", "server_lr")  # the step sizes a multiplier scales


def log_gaps(ctx, spec: dict, concurrency: int, seed: int, replicas: int, T: int) -> np.ndarray:
    """Per run, log10 of (f - f*) / (f(theta^0) - f*) at 21 evenly spaced rounds (a diverged run counts as
    :data:`DIVERGED`)."""
    fields = async_quadratic(ROBUST["n"], ROBUST["S"], concurrency, sigma=ROBUST["sigma"])
    gap = ctx.run(RunConfig(algorithm=spec, rounds=T, replicas=replicas, seed=seed, every=T // 20,
                            **fields)).metrics["server.gap"]
    ratio = np.nan_to_num(gap / gap[:, :1], nan=DIVERGED, posinf=DIVERGED)
    return np.log10(np.minimum(ratio, DIVERGED))


def performance(logs: np.ndarray, criterion: str = "final gap") -> np.ndarray:
    """Per run: the mean log gap over the last quarter of the run ("final gap", what the figure's end shows) or
    over the whole run ("run-average gap", the area under the curve, i.e. speed)."""
    return logs[:, -(logs.shape[1] // 4):].mean(1) if criterion == "final gap" else logs.mean(1)


def frozen_specs(ctx, T: int) -> dict[str, dict[str, dict]]:
    """Per method, per choice, the step sizes frozen before the sweep: Theorem 4.1's for AdaMasFL; for MasFL
    Theorem 3.1's and the tuned ones; for CA2FL and FADAS the tuned ones.  Tuning (the paper's protocol for the
    baselines, Fig. 1d) picks the multiplier of :data:`GRID` with the best mean :func:`performance` under each of
    :data:`CRITERIA` at the default :math:`M_c = 2S`, on runs of their own seed."""
    S, K = ROBUST["S"], ROBUST["K"]
    L = build("testbed", async_quadratic(ROBUST["n"], S, 2 * S)["problem"]).L
    thm31 = steps_thm31(S, K, T, L, 0.0, eta_fraction=0.5)
    base = {"MasFL": {"name": "masfl", "beta": thm31.beta, "gamma": thm31.gamma, "eta": thm31.eta},
            "CA2FL": {"name": "ca2fl", "lr": 0.01}, "FADAS": {"name": "fadas", "lr": 0.01, "server_lr": 0.01}}
    frozen = {"AdaMasFL": {"Theorem 4.1": {"name": "adamasfl", **steps_thm41(S, K, T)._asdict(), "local_steps": K}},
              "MasFL": {"Theorem 3.1": {**base["MasFL"], "local_steps": K}}}
    for label, spec in base.items():
        tried = [{**spec, "local_steps": K, **{k: m * v for k, v in spec.items() if k in STEP_KEYS}} for m in GRID]
        logs = [log_gaps(ctx, t, 2 * S, ctx.seed + 1, 8, T) for t in tried]
        for criterion in CRITERIA:
            best = int(np.argmin([performance(g, criterion).mean() for g in logs]))
            frozen.setdefault(label, {})[f"tuned for the {criterion} (m = {GRID[best]:.3g})"] = tried[best]
    return frozen


@claim("masfl.asynchrony_robustness", "seed 004 Abstract, §6 Fig. 2; digest 004 §5.2 checks 11, 13",
       "With step sizes frozen at those of the default M_c = 2S (Fig. 2: 'those used in Figure 1d'), AdaMasFL's "
       "final optimality gap degrades less than MasFL's, CA2FL's and FADAS's as M_c (hence the staleness) grows to "
       "5S.", kind="statement", expect="inconclusive",
       where="§6, Fig. 2 and its paragraph (the Abstract and §7 say the same in general terms)",
       quote="We observe that AdaMasFL demonstrates exceptional robustness to varying levels of asynchrony, "
             "maintaining nearly consistent performance despite increasing delays. In contrast, the performance of "
             "other algorithms deteriorates significantly, requiring reconfiguration to adapt to changing "
             "environments.",
       because="the paper's contrast is observed on FMNIST with a CNN, which this CPU does not run at the paper's "
               "scale, so nothing here can decide it; on the noisy heterogeneous quadratic, a setting of ours, from "
               "M_c = 2S to 5S AdaMasFL's final gap grows by about 0.5 decades (T = 200; 0.3 at T = 300-600) while "
               "MasFL's, CA2FL's and FADAS's, tuned at M_c = 2S, stay flat or improve: the contrast does not carry "
               "over to it under any tuning choice (paired intervals over 32 runs below 0), which is reported as a "
               "limit of the claim's reach, not as an erratum",
       defence="The paper's observation is made on FMNIST with a CNN, where tuned step sizes sit near the edge of "
               "stability and staleness pushes the baselines over it; on a strongly convex quadratic with gradient "
               "noise the tuned steps sit at the noise-floor optimum, far from that edge, while AdaMasFL's "
               "normalised steps keep a floor that grows with the staleness (||theta^t - theta^{t-tau}|| <= tau "
               "gamma, Lemma D.1). We agree, which is why the verdict is inconclusive: the quadratic result follows "
               "the paper's own protocol (tune at the default M_c, freeze, raise M_c) and holds under each tuning "
               "criterion, so it bounds how far the abstract's general wording reaches, but it does not say that "
               "Fig. 2 is wrong on FMNIST.", checks=("13",), partial=("11",))
@one_thread
def asynchrony_robustness(ctx) -> Evidence:
    S, T, replicas = ROBUST["S"], ctx.pick(200, 600), ctx.pick(32, 64)
    frozen = frozen_specs(ctx, T)
    finals, perf = {}, {}
    for label, choices in frozen.items():
        for choice, spec in choices.items():
            low, high = (performance(log_gaps(ctx, spec, level * S, ctx.seed, replicas, T)) for level in LEVELS)
            finals[label, choice], perf[label, choice] = high - low, (low.mean(), high.mean())
    ada = finals["AdaMasFL", "Theorem 4.1"]
    checks = [ours(across(f"degradation (log10 final gap, M_c {LEVELS[0]}S -> {LEVELS[1]}S): {other} above AdaMasFL",
                          {choice: paired_difference(choice, finals[other, choice], ada) for choice in frozen[other]},
                          what="choice"),
                   "the paper's contrast is an observation on FMNIST with a CNN; the quadratic testbed is our setting, "
                   "so its outcome bounds the claim's reach and cannot accuse") for other in ("MasFL", "CA2FL", "FADAS")]
    return Evidence(checks, notes=[
        "Mean log10 final gap / initial gap at M_c = {}S -> {}S: ".format(*LEVELS) + "; ".join(
            f"{label} ({choice}) {a:.2f} -> {b:.2f}" for (label, choice), (a, b) in perf.items()),
        f"N = {ROBUST['n']}, S = {S}, K = {ROBUST['K']}, T = {T}, sigma = {ROBUST['sigma']}, R2, U(0, 20) per job, "
        f"{replicas} paired runs per level; tuning: 8 runs of seed + 1 per multiplier in {[round(m, 3) for m in GRID]} "
        "(CA2FL from eta_l = 0.01, FADAS from eta_l = server step = 0.01); MasFL's Theorem 3.1 eta is half its cap "
        "at tau_max = 0, the largest the theorem allows (at the paper's own T, S, tau_max it admits none, "
        "masfl.experiments_in_scope)."],
        deviations=["Quadratic testbed instead of FMNIST; M_c in {2S, 5S} at S = 2 for the paper's unstated values "
                    "(the digest suggests 20-50 at S = 10); final optimality gap instead of test accuracy."])
