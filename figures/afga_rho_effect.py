r"""AFGA against the topology's :math:`\rho` (seed 002 Fig. 1(a), Remark 4.10; digest 002 §5 V14), closed-form stand-in.

The time-averaged :math:`\frac1R\sum_r\|\nabla f(x_r)\|^2` of AFGA on the complete graph, a 4x5 torus, an Erdős–Rényi
graph (:math:`p = 0.25`, Metropolis–Hastings weights) and the ring, ordered by their exact
:math:`\rho = \|W-J\|_2`, at the digest's prototype step sizes (:mod:`theorylab.figures.afga_sweeps`); mean and 95% interval
over replicas.  The paper's Fig. 1(a) shows CIFAR-10 curves for :math:`\rho\in\{0, 0.455, 0.995\}`.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.afga_sweeps import M, N, PAPER_LIKE, TOPOLOGIES, average_gradnorm
from theorylab.plotting import pyplot, save
from theorylab.registry import build, register
from theorylab.threads import one_thread
from theorylab.trace import mean_ci

STEPS = 8


def compute(ctx) -> dict:
    """``{"rho": {name: rho}, "score": {name: (replicas,)}}`` in increasing rho."""
    rounds, replicas = ctx.pick(200, 400), ctx.pick(32, 96)
    rho = {name: build("topology", spec).rho for name, spec in TOPOLOGIES.items()}
    order = sorted(rho, key=rho.get)
    score = {name: average_gradnorm(ctx, dict(PAPER_LIKE, topology=TOPOLOGIES[name]), steps=STEPS, rounds=rounds,
                                    replicas=replicas) for name in order}
    return {"rho": {name: rho[name] for name in order}, "score": score, "rounds": rounds}


def draw(data: dict, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4), constrained_layout=True)
    for i, (name, values) in enumerate(data["score"].items()):
        lo, hi = mean_ci(values, 0.95)
        mean = values.mean()
        ax.errorbar(data["rho"][name], mean, yerr=[[mean - lo], [hi - mean]], fmt="o", color=f"C{i}",
                    label=f"{name} ($\\rho$ = {data['rho'][name]:.3f})")
    ax.set(xlabel=r"$\rho = \|W - J\|_2$", ylabel=r"$\frac{1}{R}\sum_r\|\nabla f(x_r)\|^2$",
           title=f"AFGA vs topology: N = {N}, M = {M}, I = {STEPS}, R = {data['rounds']}")
    ax.legend(fontsize=7)
    return save(fig, path)


@register("figure", "afga-rho-effect")
@one_thread
def render(ctx):
    """AFGA Fig. 1(a) stand-in: averaged squared gradient norm against rho for four topologies (mean, 95% CI)."""
    return draw(compute(ctx), ctx.figure_path("afga-rho-effect"))
