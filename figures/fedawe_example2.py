r"""FedAWE Example 2 / Fig. 3, Table 9 and Table 8 on a stand-in for SVHN (seed 000 §4 Example 2 and Fig. 3, App. J.4
Tables 8 and 9; digest 000 §4, §5, §6.3, §6.4, §6.6).

**Example 2 / Fig. 3.**  Every client has the same availability
:math:`p_i^t = p\,[\gamma\sin(0.1\pi t) + (1-\gamma)]`, i.e. the ``sine`` dynamics of
:class:`theorylab.participation.dynamics.Schedule` with period :math:`P = 20` on the base probabilities
:math:`p_i = p` for all :math:`i`; it ranges over :math:`[(1-2\gamma)p,\ p]` and averages :math:`(1-\gamma)p` over a
period.  FedAvg (its variant is not stated, digest §4 [U]: over active clients, the code's default, and over all
clients both run) trains on a Dirichlet(0.1) partition; the figure plots its final train and test accuracy against
:math:`\gamma` for several :math:`p` (the paper's grid is not given [U]; :data:`GAMMAS`, :data:`BASES`).

**Table 9.**  FedAWE and both FedAvg variants under the paper's sine dynamics
:math:`p_i^t = p_i[\gamma\sin(2\pi t/20) + (1-\gamma)]` with the recipe's heterogeneous :math:`p_i`, for
:math:`\gamma\in\{0.3, 0.2, 0.1\}` (:data:`TABLE9_GAMMAS`): final train and test accuracy, mean ± sample std.  The
:math:`\gamma = 0.3` runs are Table 2's sine runs (:mod:`theorylab.figures.fedawe_cnn_curves`; the paper's Table 9
column equals its Table 2 SVHN sine row), read from the store when present.

**Table 8.**  On the same :math:`\gamma = 0.3` runs: the first round at which the seed-mean test accuracy, sampled every
20 rounds (:data:`SAMPLE_EVERY`), reaches each target (:func:`theorylab.figures.learning_curves.rounds_to_target`;
"–" when never).  The paper's targets are 1/4, 1/2, 3/4 and 1 of Table 2's best test accuracy rounded down to a
multiple of 10 points (SVHN 80 -> 20/40/60/80, CIFAR-10 60 -> 15/30/45/60, CINIC-10 40 -> 10/20/30/40;
:func:`targets`).  Here "best" is the best final test accuracy
among the algorithms run (Table 2 takes it over eight algorithms and four dynamics).

Stand-ins, as in :mod:`theorylab.figures.fedawe_cnn_curves`: scikit-learn digits with an MLP (quick), Fashion-MNIST
with the Table 6 CNN on a GPU or an MLP on a CPU (full), for SVHN with its CNN.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from theorylab.figures.fedawe_cnn_curves import ALGORITHMS, FULL_CPU, FULL_GPU, QUICK, Setup, run_config, setup
from theorylab.figures.learning_curves import rounds_to_target
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.testbeds.training import choose_point, final_accuracy

GAMMAS = (0.1, 0.2, 0.3, 0.4, 0.5)  # Fig. 3's x axis; the printed comparison is gamma 0.1 -> 0.5
BASES = (0.1, 0.5)  # Fig. 3's p; 0.1 is the case its caption quantifies
FEDAVG = {a["label"]: a for a in ALGORITHMS if a["spec"]["name"] == "fedavg"}  # Example 2's FedAvg, both readings
TABLE9_GAMMAS = (0.3, 0.2, 0.1)
DEFAULT_GAMMA = 0.3  # the paper's gamma for every non-stationary run (seed 000 App. J.3), Schedule's default
QUARTERS = (0.25, 0.5, 0.75, 1.0)
SAMPLE_EVERY = 20  # Table 8 samples the mean test accuracy every 20 rounds

EXAMPLE2_DEVIATIONS = (
    "Example 2's FedAvg variant is not stated (digest 000 §4 [U]): over active clients (the code's default) and over "
    "all clients both run, with Table 7's eta_0 = 0.05 and the local schedule eta_0 / sqrt(t/10 + 1).",
    "Fig. 3's grid of p and gamma is not given: p in {0.1, 0.5} (figure), gamma from 0.1 to 0.5.",
)
EXAMPLE2_QUICK = dataclasses.replace(
    QUICK, dynamics=("sine",), rounds=50, every=10, window=2, local_steps=5, replicas=8,
    deviations=("QUICK-MODE STAND-IN: scikit-learn digits (1,437 train / 360 test 8x8 images) with a one-hidden-layer "
                "MLP (64 units), 50 clients, batch 16, s = 5 local steps, 50 rounds (final accuracy = mean of the "
                "last 2 evaluations, rounds 40 and 50); the paper uses SVHN with its CNN, 100 clients, batch 128, "
                "s = 10, 1000 rounds (last 50 rounds).",
                "Quick mode's 8 samples are 8 replicas on one partition (seed 0): they cover initialisation, "
                "availability draws and minibatches, not the partition.", *QUICK.deviations[2:],
                *EXAMPLE2_DEVIATIONS))
EXAMPLE2_FULL_GPU = dataclasses.replace(FULL_GPU, dynamics=("sine",), rounds=1000,
                                        deviations=(FULL_GPU.deviations[0].replace("500 rounds instead of 2000",
                                                                                   "1000 rounds as Example 2"),
                                                    *FULL_GPU.deviations[1:], *EXAMPLE2_DEVIATIONS))
EXAMPLE2_FULL_CPU = dataclasses.replace(FULL_CPU, dynamics=("sine",),
                                        deviations=(FULL_CPU.deviations[0].replace("instead of 2000",
                                                                                   "instead of Example 2's 1000"),
                                                    *FULL_CPU.deviations[1:], *EXAMPLE2_DEVIATIONS))


def example2_setup(quick: bool) -> Setup:
    """Quick: digits stand-in; full: Fashion-MNIST with the CNN on a GPU, the MLP on a CPU-only machine."""
    if quick:
        return EXAMPLE2_QUICK
    return EXAMPLE2_FULL_GPU if torch.cuda.is_available() else EXAMPLE2_FULL_CPU


def example2_runs(ctx, s: Setup, gammas=GAMMAS, bases=BASES, variants=tuple(FEDAVG)) -> dict:
    """``{(variant, p, gamma): [Trace per seed]}``: FedAvg under Example 2's availability, every client at
    :math:`p_i^t = p[\\gamma\\sin(2\\pi t/20) + 1-\\gamma]` (from the store when present)."""
    out = {}
    for label in variants:
        for seed in s.seeds:
            base = run_config(s, FEDAVG[label], "sine", seed)  # reads the data once per (variant, seed)
            for p in bases:
                for gamma in gammas:
                    participation = {"name": "bernoulli", "p": [float(p)] * s.problem["clients"],
                                     "dynamics": "sine", "gamma": float(gamma)}
                    out.setdefault((label, p, gamma), []).append(ctx.run(base.replace(participation=participation)))
    return out


def accuracies(traces: list, split: str, window: int, horizon: int | None = None) -> np.ndarray:
    """Per-run accuracy (%) of the server model averaged over the last ``window`` evaluations up to round
    ``horizon`` (the run's end by default)."""
    out = []
    for t in traces:
        upto = len(t.rounds) if horizon is None else int(np.searchsorted(t.rounds, horizon, side="right"))
        out.append(100.0 * t.metrics[f"server.{split}_acc"][:, upto - window:upto].mean(1))
    return np.concatenate(out)


def draw_example2(runs: dict, s: Setup, path):
    """Fig. 3: final train and test accuracy (mean ± sample std over runs) against gamma, one curve per (variant, p)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True, sharey=True)
    curves = sorted({(label, p) for label, p, _ in runs})
    for ax, split in zip(axes, ("train", "test")):
        for label, p in curves:
            gammas = sorted(g for lab, q, g in runs if (lab, q) == (label, p))
            values = [accuracies(runs[(label, p, g)], split, s.window) for g in gammas]
            mean = np.array([v.mean() for v in values])
            std = np.array([v.std(ddof=1) if len(v) > 1 else 0.0 for v in values])
            ax.errorbar(gammas, mean, yerr=std, marker="o", capsize=3, label=f"{label}, p = {p:g}")
        ax.set(xlabel=r"$\gamma$ (degree of non-stationarity)", ylabel=f"{split} accuracy (%)", title=split)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"FedAWE Example 2 / Fig. 3 (stand-in: {s.problem['name']} {s.problem['model']}, "
                 f"{s.problem['clients']} clients, Dir({s.problem['alpha']}), {s.rounds} rounds, "
                 f"{len(s.seeds) * s.replicas} runs): FedAvg, $p_i^t = p[\\gamma\\sin(0.1\\pi t)+1-\\gamma]$",
                 fontsize=9)
    return save(fig, path)


# ----- Tables 9 and 8 -------------------------------------------------------------------------------------------------
def table9_runs(ctx, s: Setup, gammas=TABLE9_GAMMAS) -> dict:
    """``{(gamma, algorithm label): [Trace per seed]}`` under the paper's sine dynamics with the recipe's
    :math:`p_i`; gamma = 0.3 is left out of the spec (the Schedule default), so those runs are Table 2's."""
    out = {}
    for gamma in gammas:
        for a in ALGORITHMS:
            configs = [run_config(s, a, "sine", seed) for seed in s.seeds]
            if gamma != DEFAULT_GAMMA:
                configs = [c.replace(participation={**c.participation, "gamma": float(gamma)}) for c in configs]
            out[(gamma, a["label"])] = [ctx.run(c) for c in configs]
    return out


def targets(best: float) -> tuple[float, ...]:
    """Table 8's targets: quarters of the best accuracy (%) rounded down to a multiple of 10 points
    (SVHN 86.5 -> 20, 40, 60, 80)."""
    top = 10.0 * math.floor(best / 10.0)
    return tuple(q * top for q in QUARTERS)


def mean_test_curve(traces: list, point: str) -> tuple[np.ndarray, np.ndarray]:
    """Evaluation rounds and the test accuracy (%) averaged over every run of ``traces``."""
    return traces[0].rounds, 100.0 * np.concatenate([t.metrics[f"{point}.test_acc"] for t in traces]).mean(0)


def table_data(runs: dict, s: Setup) -> dict:
    """Table 9's cells ``{(gamma, label, split): (mean, std)}`` and Table 8's rows ``{label: rounds per target}``."""
    points = {a["label"]: choose_point(a["spec"], s.problem["clients"]) for a in ALGORITHMS}
    table9 = {}
    for (gamma, label), traces in runs.items():
        for split in ("train", "test"):
            v = np.concatenate([final_accuracy(t, points[label], s.window, split) for t in traces])
            table9[(gamma, label, split)] = (float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0)
    sine = {label: runs[(DEFAULT_GAMMA, label)] for label in points}
    best = max(table9[(DEFAULT_GAMMA, label, "test")][0] for label in points)
    goal = targets(best)
    table8 = {label: [rounds_to_target(*mean_test_curve(traces, points[label]), g, SAMPLE_EVERY) for g in goal]
              for label, traces in sine.items()}
    return {"table9": table9, "table8": table8, "targets": goal, "best": best}


def draw_tables(data: dict, s: Setup, path):
    """Table 9 (accuracy against gamma) above Table 8 (rounds to target at gamma = 0.3)."""
    plt = pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 4.6), constrained_layout=True)
    labels = [a["label"] for a in ALGORITHMS]
    gammas = sorted({g for g, _, _ in data["table9"]}, reverse=True)
    cells = [[f"{m:.1f} ± {sd:.1f}" for g in gammas for split in ("train", "test")
              for m, sd in [data["table9"][(g, label, split)]]] for label in labels]
    top.axis("off")
    top.table(cellText=cells, rowLabels=labels, loc="center", cellLoc="center",
              colLabels=[f"γ={g:g} {split}" for g in gammas for split in ("train", "test")])
    top.set_title(f"Table 9 stand-in: final accuracy (%) under sine dynamics, mean ± std over "
                  f"{len(s.seeds) * s.replicas} runs", fontsize=9)
    bottom.axis("off")
    bottom.table(cellText=[["–" if r is None else str(r) for r in data["table8"][label]] for label in labels],
                 rowLabels=labels, colLabels=[f"{q:g} ({t:g}%)" for q, t in zip(QUARTERS, data["targets"])],
                 loc="center", cellLoc="center")
    bottom.set_title(f"Table 8 stand-in: first round (sampled every {SAMPLE_EVERY}) with mean test accuracy >= target "
                     f"(γ = {DEFAULT_GAMMA}; targets: quarters of the best {data['best']:.1f}% rounded down to 10)",
                     fontsize=9)
    fig.suptitle(f"FedAWE Tables 8-9 (stand-in: {s.problem['name']} {s.problem['model']}, {s.problem['clients']} "
                 f"clients, Dir({s.problem['alpha']}), {s.rounds} rounds; the paper: SVHN CNN, 2000 rounds)",
                 fontsize=9)
    return save(fig, path)


def _cheap(ctx):
    """Figures stay cheap: on a CPU-only machine the full setups take tens of minutes, so they draw quick mode."""
    return ctx if ctx.quick or torch.cuda.is_available() else dataclasses.replace(ctx, quick=True)


@register("figure", "fedawe-example2")
def render(ctx):
    """FedAWE Example 2 / Fig. 3 stand-in: FedAvg's final accuracy against gamma (digits MLP on a CPU)."""
    ctx = _cheap(ctx)
    s = ctx.with_seeds(example2_setup(ctx.quick))
    return draw_example2(example2_runs(ctx, s), s, ctx.figure_path("fedawe-example2" + ("-quick" if ctx.quick else "")))


@register("figure", "fedawe-tables8-9")
def render_tables(ctx):
    """FedAWE Tables 8 and 9 stand-in: accuracy against gamma and rounds to target accuracy under sine dynamics."""
    ctx = _cheap(ctx)
    s = ctx.with_seeds(dataclasses.replace(setup(ctx.quick), dynamics=("sine",)))
    return draw_tables(table_data(table9_runs(ctx, s), s), s,
                       ctx.figure_path("fedawe-tables8-9" + ("-quick" if ctx.quick else "")))
