r"""Thesis Fig. 2.2 (seed 001 §2.5.2, L878–883; digest 001 §5.2, §8 V14): CA-Fed's convergence-speed vs model-bias
trade-off in :math:`\bar\kappa^2` on Synthetic LEAF(0.5, 0.5).

(a) test accuracy vs round of More available, Unbiased and CA-Fed with
:math:`\bar\kappa^2\in\{10^{-2},10^{-1},1,10,10^2\}`; (b) the :math:`\bar\kappa^2` of highest mean accuracy at each
evaluation round, i.e. the best :math:`\bar\kappa^2` for a training budget :math:`T` equal to that round (the thesis
trains once per :math:`T` with constant steps, so reading the curves at :math:`t = T` is the same run).  Setting:
:mod:`theorylab.figures.thesis_fig2_1` (quick :math:`N = 20`, :math:`T = 100`; full :math:`N = 100`, :math:`T = 500`).  The
claims ``thesis.cafed_leaf.kappa_tradeoff`` and ``thesis.cafed_leaf.small_kappa`` check these curves.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.thesis_fig2_1 import ORACLE, accuracy_curves, budget, clients, draw_curves, leaf_problem, methods
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

KAPPAS = (1e-2, 1e-1, 1.0, 1e1, 1e2)


def rounds(ctx) -> int:
    return ctx.pick(100, 500)


def compute(ctx, run=None, mode: str = ORACLE) -> dict:
    """Accuracy curves of :func:`theorylab.figures.thesis_fig2_1.accuracy_curves`, CA-Fed in ``mode``
    (:data:`theorylab.figures.thesis_fig2_1.CAFED_MODES`)."""
    T = rounds(ctx)
    specs = methods(leaf_problem(clients(ctx)), T, kappas=KAPPAS, others=("Unbiased", "More available"), mode=mode)
    return accuracy_curves(ctx, T, specs, run)


def best_kappa(data: dict) -> np.ndarray:
    """Per evaluation round, the kappa_bar^2 of :data:`KAPPAS` whose mean accuracy is highest."""
    means = np.stack([data[f"CA-Fed ({k:g})"].mean(0) for k in KAPPAS])
    return np.asarray(KAPPAS)[means.argmax(0)]


def draw(data: dict, path, title: str):
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    colors = {f"CA-Fed ({k:g})": plt.cm.Reds(0.35 + 0.15 * i) for i, k in enumerate(KAPPAS)}
    draw_curves(ax, data, {**colors, "Unbiased": "C0", "More available": "C1"})
    ax.set_title("(a) accuracy vs round, CA-Fed for several kappa_bar^2", fontsize=9)
    bx.semilogy(data["rounds"][1:], best_kappa(data)[1:], "o-", color="C3")
    bx.set(xlabel="training budget T (rounds)", ylabel="best kappa_bar^2", title="(b) best kappa_bar^2 vs T")
    fig.suptitle(title, fontsize=9)
    return save(fig, path)


@register("figure", "thesis-fig2-2")
@one_thread
def render(ctx):
    """Thesis Fig. 2.2: accuracy vs round for several kappa_bar^2, More available, Unbiased; best kappa_bar^2 vs T."""
    title = f"Thesis Fig. 2.2 on Synthetic LEAF(0.5, 0.5) ({budget(ctx, rounds(ctx))})"
    return draw(compute(ctx), ctx.figure_path("thesis-fig2-2"), title)
