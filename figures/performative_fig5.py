r"""Performative FL Figure 5: credit scoring, performative loss and distance to :math:`\theta^{PS}` over rounds.

Seed 003 §4.2, Fig. 5; digest 003 §4.2.  10 equal clients, :math:`\epsilon_i\sim U[0.9,1.1]`, :math:`E=5`, batch 4,
:math:`K=5` for Schemes I and II, start at :math:`\theta_{\rm ERM}`; mean :math:`\pm1` std over 5 seeds (cached runs,
``ctx.run``).  (a) the performative loss :math:`\mathrm{PR}(\theta)=f(\theta;\theta)` on all data (what the authors
log as "loss"); (b) :math:`\|\theta-\theta^{PS}\|` (their "distance to the stable solution").  Dashed grey: full
participation with the released code's bug (local steps best-respond with :math:`\epsilon=0`), which heads for
:math:`\theta_{\rm ERM}`.  Quick budget: synthetic stand-in; full budget: the real data when whynot is installed.
"""

from __future__ import annotations

import numpy as np

from theorylab.testbeds.credit_data import credit_source
from theorylab.performative.experiments import CREDIT_LR, CREDIT_SCHEMES, algorithm_spec, run_config
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

LABELS = {"full": "full participation (K=10)", "I": "Scheme I (K=5)", "II": "Scheme II (K=5)"}
SEEDS = 5
HORIZON = (6_000, 200_000)  # local steps, (quick, full)


def credit_run(ctx, problem: dict, scheme: str, k, seeds: int = SEEDS) -> dict:
    """``seeds`` cached P-FedAvg runs (E = 5) on a credit problem spec, recorded 100 times: steps and per-seed
    squared distance to PS, distance to ERM and performative loss."""
    lr = CREDIT_LR[problem["source"]]
    config = run_config(problem, algorithm_spec(scheme, k, 5, lr), ctx.pick(*HORIZON), seeds, seed=ctx.seed,
                        points=100, n_clients=10)
    trace = ctx.run(config)
    m = trace.metrics
    return {"steps": trace.rounds * 5, "dist2": m["server.dist2"], "erm_dist": m["server.erm_dist"], "loss": m["server.loss"]}


def schedule_label(lr: dict) -> str:
    """The step size :math:`\\eta_t=\\beta/(t+\\gamma)` of an ``inverse`` schedule spec, for titles."""
    return f"$\\eta_t={lr['lr0'] * lr['t0']:g}/(t+{lr['t0']:g})$"


def band(axis, rounds, values, colour, ls: str = "-", label: str | None = None) -> None:
    """Mean over seeds with a +-1 std band."""
    mean, std = values.mean(0), values.std(0, ddof=1)
    axis.plot(rounds, mean, color=colour, ls=ls, lw=1.1, label=label)
    axis.fill_between(rounds, mean - std, mean + std, color=colour, alpha=0.2, lw=0)


def compute(ctx, source: str | None = None) -> dict:
    source = source or credit_source(ctx.quick)
    problem = {"name": "credit", "source": source}
    runs = {scheme: credit_run(ctx, problem, scheme, k) for scheme, k in CREDIT_SCHEMES}
    bug = credit_run(ctx, {**problem, "released_code_local_eps_zero": True}, "full", None)
    return {"runs": runs, "bug": bug, "lr": CREDIT_LR[source], "horizon": ctx.pick(*HORIZON), "source": source}


def draw(data: dict, path):
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9.6, 3.5), constrained_layout=True)
    series = [(LABELS[s], r, f"C{i}", "-") for i, (s, r) in enumerate(data["runs"].items())]
    series.append(("full, released-code bug (local eps = 0)", data["bug"], "0.5", "--"))
    for label, r, colour, ls in series:
        band(ax, r["steps"] / 5, r["loss"], colour, ls, label)
        band(bx, r["steps"] / 5, np.sqrt(r["dist2"]), colour, ls, label)
    ax.set(xlabel="rounds", ylabel=r"performative loss $f(\theta;\theta)$", title="(a) loss")
    bx.set(yscale="log", xlabel="rounds", ylabel=r"$\|\theta-\theta^{PS}\|$", title="(b) distance to PS")
    bx.legend(fontsize=7)
    fig.suptitle(f"Fig. 5: credit scoring ({data['source']} data), E=5, batch 4, {schedule_label(data['lr'])}, "
                 f"mean $\\pm$ std over {SEEDS} seeds")
    return save(fig, path)


@register("figure", "performative-fig5")
@one_thread
def render(ctx):
    """Performative FL Fig. 5: credit-scoring loss and distance to PS for the three schemes (and the released bug)."""
    return draw(compute(ctx), ctx.figure_path("performative-fig5"))
