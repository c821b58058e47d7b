r"""Thesis Fig. 2.3 (seed 001 §2.5.2, L884–887; digest 001 §5.2): final test accuracy vs data heterogeneity
:math:`\gamma = \delta\in\{0, 0.25, 0.5, 0.75, 1\}` on Synthetic LEAF, for More available, Unbiased and CA-Fed with
:math:`\bar\kappa^2\in\{10^{-2}, 1, 10^2\}`.

Setting: :mod:`theorylab.figures.thesis_fig2_1` (quick :math:`N = 20`, :math:`T = 100`; full :math:`N = 100`, :math:`T = 200`,
the thesis' horizon); accuracy at the last round, mean and sample standard deviation over replicas.  As in Li et
al.'s generator without its separate ``iid`` flag, :math:`\gamma = \delta = 0` still draws one model
:math:`W_i` per client (only the means :math:`\mu_i, B_i` vanish), so it is not IID data (digest §5.1).
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.thesis_fig2_1 import budget, clients, horizon, leaf_config, leaf_problem, methods
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

GAMMAS = (0.0, 0.25, 0.5, 0.75, 1.0)
KAPPAS = (1e-2, 1.0, 1e2)


def compute(ctx, run=None) -> dict:
    """``{"gammas": ..., label: (len(GAMMAS), replicas) final accuracy in %}``."""
    run, T = run or ctx.run, horizon(ctx)
    out: dict = {"gammas": np.asarray(GAMMAS)}
    for g in GAMMAS:
        specs = methods(leaf_problem(clients(ctx), g), T, kappas=KAPPAS, others=("Unbiased", "More available"))
        for label, spec in specs.items():
            trace = run(leaf_config(ctx, spec, T, gamma=g, every=T))
            out.setdefault(label, []).append(100.0 * trace.metrics["server.test_acc"][:, -1])
    return {k: np.asarray(v) for k, v in out.items()}


def draw(data: dict, path, title: str):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4), constrained_layout=True)
    for i, (label, acc) in enumerate((k, v) for k, v in data.items() if k != "gammas"):
        ax.errorbar(data["gammas"] + 0.01 * (i - 2), acc.mean(1), yerr=acc.std(1, ddof=1), marker="o", ms=4,
                    capsize=2, lw=1, label=label)
    ax.set(xlabel="gamma = delta (data heterogeneity)", ylabel="test accuracy at T (%)")
    ax.legend(fontsize=7, title="mean ± sample std over replicas", title_fontsize=7, loc="lower right",
              bbox_to_anchor=(1.0, 0.15))
    ax.set_title(title, fontsize=8)
    return save(fig, path)


@register("figure", "thesis-fig2-3")
@one_thread
def render(ctx):
    """Thesis Fig. 2.3: final accuracy vs gamma = delta for More available, Unbiased and CA-Fed (three kappa_bar^2)."""
    title = f"Thesis Fig. 2.3 on Synthetic LEAF ({budget(ctx, horizon(ctx))})"
    return draw(compute(ctx), ctx.figure_path("thesis-fig2-3"), title)
