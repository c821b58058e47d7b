r"""AFGA's rate in :math:`R` (seed 002 Thm 4.6 eq. (3), Corollary 4.7; digest 002 §5 V11), log-log.

The time-averaged :math:`\frac1R\sum_r\|\nabla f(x_r)\|^2` of AFGA on the complete graph and on the ring with the
prescribed step sizes :math:`\eta_l = 1/(\mathcal I\sqrt R)`, :math:`\eta = 0.25N\sqrt{\mathcal I/M}`,
:math:`\epsilon = 1` (:mod:`theorylab.figures.afga_sweeps`), against :math:`R`, with fitted slopes (bootstrap CI) and the
:math:`R^{-1/2}` reference of the leading term.  Not a figure of the paper (its figures are CNN curves): the
closed-form counterpart of its Theorem 4.6.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.afga_sweeps import M, N, SAMPLER, TOPOLOGIES, average_gradnorm, theory_steps
from theorylab.figures.fedawe_rate import loglog_panel
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

STEPS = 4
CURVES = {"AFGA, complete graph (rho = 0)": {"topology": TOPOLOGIES["J"]},
          "AFGA, ring (rho = 0.967)": {"topology": TOPOLOGIES["ring"]}}
LABELS = list(CURVES)


def compute(ctx) -> dict:
    """``{"R": grid, label: (replicas, len(grid)) scores}``."""
    grid, replicas = ctx.pick([40, 80, 160, 320], [100, 200, 400, 800, 1600, 3200, 6400]), ctx.pick(16, 32)
    out = {"R": np.asarray(grid)}
    for label, switches in CURVES.items():
        out[label] = np.stack([average_gradnorm(ctx, dict(theory_steps(STEPS, R), **switches), steps=STEPS, rounds=R,
                                                replicas=replicas) for R in grid], axis=1)
    return out


def draw(data: dict, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 5), constrained_layout=True)
    loglog_panel(ax, data["R"], {k: v for k, v in data.items() if k != "R"}, "rounds $R$")
    ax.set_ylabel(r"$\frac{1}{R}\sum_r\|\nabla f(x_r)\|^2$")
    ax.set_title(f"AFGA, theory step sizes: N = {N}, M = {M}, I = {STEPS}, shared-Hessian quadratic")
    return save(fig, path)


@register("figure", "afga-rate")
@one_thread
def render(ctx):
    """AFGA Thm 4.6: log-log averaged squared gradient norm vs R (complete graph, ring) with fitted slopes."""
    return draw(compute(ctx), ctx.figure_path("afga-rate"))
