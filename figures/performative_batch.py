r"""Performative FL Figures 8–10: credit scoring with batch sizes 1, 4 and 16.

Seed 003 App. E.2 (L1242), Figs 8–10; digest 003 §4.2.1, §8 V18.  The Fig. 5 setting (10 equal clients,
:math:`\epsilon_i\sim U[0.9,1.1]`, :math:`E=5`, :math:`K=5` for Schemes I and II, start at :math:`\theta_{\rm ERM}`)
with every local step taking a mini-batch of 1, 4 or 16 rows best-responded to the client's current model.  One
column per batch size, equal y-scales as in the paper: (top) the performative loss :math:`f(\theta;\theta)`,
(bottom) :math:`\|\theta-\theta^{PS}\|`, mean :math:`\pm1` std over :data:`SEEDS` seeds.  The seeds are common to
the batch sizes, so replica :math:`r` of every run sees the same client samples (Schemes I/II) and the per-seed
differences between batch sizes can be paired.  Quick budget: synthetic stand-in; full budget: the real data.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.performative_fig5 import LABELS, band, credit_run, schedule_label
from theorylab.testbeds.credit_data import credit_source
from theorylab.performative.experiments import CREDIT_LR, CREDIT_SCHEMES
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

BATCHES = (1, 4, 16)
SEEDS = 20  # the paper shows 5; 20 give a paired test across batch sizes some power


def compute(ctx, source: str | None = None) -> dict:
    source = source or credit_source(ctx.quick)
    runs = {b: {scheme: credit_run(ctx, {"name": "credit", "source": source, "batch": b}, scheme, k, SEEDS)
                for scheme, k in CREDIT_SCHEMES} for b in BATCHES}
    return {"runs": runs, "lr": CREDIT_LR[source], "source": source}


def draw(data: dict, path):
    plt = pyplot()
    fig, axes = plt.subplots(2, len(BATCHES), figsize=(12, 6), sharey="row", constrained_layout=True)
    for col, (batch, runs) in enumerate(data["runs"].items()):
        for i, (scheme, r) in enumerate(runs.items()):
            band(axes[0, col], r["steps"] / 5, r["loss"], f"C{i}", label=LABELS[scheme])
            band(axes[1, col], r["steps"] / 5, np.sqrt(r["dist2"]), f"C{i}", label=LABELS[scheme])
        axes[0, col].set(title=f"batch size {batch}", xlabel="rounds")
        axes[1, col].set(yscale="log", xlabel="rounds")
    axes[0, 0].set(ylabel=r"performative loss $f(\theta;\theta)$")
    axes[1, 0].set(ylabel=r"$\|\theta-\theta^{PS}\|$")
    axes[1, 0].legend(fontsize=7)
    fig.suptitle(f"Figs 8-10: credit scoring ({data['source']} data), E=5, {schedule_label(data['lr'])}, "
                 f"mean $\\pm$ std over {SEEDS} common seeds")
    return save(fig, path)


@register("figure", "performative-batch")
@one_thread
def render(ctx):
    """Performative FL Figs 8-10: credit-scoring loss and distance to PS for batch sizes 1, 4 and 16."""
    return draw(compute(ctx), ctx.figure_path("performative-batch"))
