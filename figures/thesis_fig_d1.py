r"""Thesis Fig. D.1 analogue (seed 001 App. D, Fig. D.1; Tables 5.3-5.4; digest 001_thesis_ch4-6 §3.6, §6 C9): the
error of Fed-CIS against the sampling parameter :math:`p` on the highly biased partition (3.4 / 19.9 / 76.7 % of the
data per layer), Serving Rate with :math:`p_{i,e}=p` for :math:`e<E_i`, Equal Weight at :math:`p=0` dashed.

Labelled substitution: the thesis plots test accuracy of ResNet-18 on CIFAR (values only in the image); here the
y-axis is :math:`\epsilon_{\rm true}=F_{\mathcal D,\Lambda}(w^{(T)})-F^*_{\mathcal D,\Lambda}` (lower is better) of
the runs of :func:`theorylab.figures.thesis_ch5_runs.fedcis_errors` (nested linear testbed, 7 nodes, 150 samples).  A
larger :math:`p` lets the deeper nodes train exit 1 (:math:`|D_{1,p}|` grows from 3.4 % to all of the data:
:math:`\epsilon_{\rm gen}` falls) while :math:`(1-p)/p` in (D.50) makes small :math:`p>0` noisy.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.thesis_ch5_runs import fedcis_errors
from theorylab.plotting import pyplot, save
from theorylab.registry import register

P_GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.45)
SPLITS = ((80, 15, 5), (60, 30, 10), (45, 35, 20))  # the splits of Table 5.3


def compute(ctx, splits=SPLITS, p_grid=P_GRID, replicas: int | None = None) -> dict:
    """``{split: {"serving": {p: per-replica errors}, "equal": per-replica errors at p = 0}}``."""
    replicas = replicas or ctx.pick(100, 400)
    return {split: {"serving": {p: fedcis_errors(ctx, split, "highly_biased", p, "Serving Rate", replicas)
                                for p in p_grid},
                    "equal": fedcis_errors(ctx, split, "highly_biased", 0.0, "Equal Weight", replicas)}
            for split in splits}


def draw(data: dict, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4), constrained_layout=True)
    for k, (split, curves) in enumerate(data.items()):
        grid = sorted(curves["serving"])
        errs = np.stack([curves["serving"][p] for p in grid])
        se = errs.std(1, ddof=1) / np.sqrt(errs.shape[1])
        label = "-".join(map(str, split))
        ax.errorbar(grid, errs.mean(1), yerr=se, marker="o", color=f"C{k}", label=f"Serving Rate (p), {label}")
        ax.axhline(curves["equal"].mean(), color=f"C{k}", ls="--", lw=1, label=f"Equal Weight (p = 0), {label}")
    ax.set(xlabel="p (probability that a node trains each smaller exit)", yscale="log",
           ylabel=r"$\epsilon_{true}$ = F(w$^{(T)}$) - F$^*$ (lower is better)",
           title="Fig. D.1 analogue: highly biased partition\n(nested linear testbed, not CIFAR)")
    ax.legend(fontsize=7)
    return save(fig, path)


@register("figure", "thesis-fig-d1")
def render(ctx):
    """Thesis Fig. D.1 analogue: Fed-CIS error vs p on the highly biased partition (nested linear testbed)."""
    return draw(compute(ctx), ctx.figure_path("thesis-fig-d1"))
