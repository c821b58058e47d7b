r"""Seed 004 Fig. 3 analogue on the closed-form quadratic (§6; digest 004 §4, §5.2 check 12): final optimality gap
(relative to the initial one) against a learning-rate multiplier :math:`m\in\{10^{-3},\dots,10^{2}\}` for MasFL,
AdaMasFL, FedBuff, CA²FL and FADAS under the FedBuff delay mechanism (Mode B, R2, :math:`\mathcal U(0,20)`).

The multiplier scales every step size an algorithm has: MasFL and AdaMasFL :math:`(\gamma,\eta)`; FedBuff and CA²FL
the local :math:`\eta_l` (server step 1, FedAvg's convention); FADAS :math:`\eta_l` and its server step.  The paper
does not say which rate its Fig. 3 sweeps (digest §4, [UNCLEAR]).  A diverged run's ratio is infinite (drawn at the
top of the axis).  ``validations/masfl/robustness.py`` checks the plateau widths on these numbers.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.masfl_curves import async_quadratic
from theorylab.config import RunConfig
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

MULTIPLIERS = (1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2)
K = 5
BASE = {"masfl": {"gamma": 0.1, "eta": 0.02}, "adamasfl": {"gamma": 0.05, "eta": 0.01}, "fedbuff": {"lr": 0.05},
        "ca2fl": {"lr": 0.05}, "fadas": {"lr": 0.05, "server_lr": 0.01}}


def scaled(name: str, m: float) -> dict:
    """The algorithm spec of ``name`` with every swept step size times ``m`` (module docstring)."""
    return {"name": name, "local_steps": K, **{key: m * value for key, value in BASE[name].items()}}


def compute(ctx) -> dict:
    """``{"setting": (N, S, M_c, T), "ratios": {name: (replicas, multipliers) final / initial gap}}``."""
    n, s, mc = ctx.pick((10, 3, 6), (100, 10, 20))
    rounds = ctx.pick(80, 600)
    fields = async_quadratic(n, s, mc, sigma=0.5)
    ratios = {}
    for name in BASE:
        gaps = []
        for m in MULTIPLIERS:
            trace = ctx.run(RunConfig(algorithm=scaled(name, m), rounds=rounds, replicas=ctx.pick(3, 32),
                                      seed=ctx.seed, every=rounds, **fields))
            gap = trace.metrics["server.gap"]
            gaps.append(np.where(np.isfinite(gap[:, -1]), gap[:, -1], np.inf) / gap[:, 0])
        ratios[name] = np.array(gaps).T
    return {"setting": (n, s, mc, rounds), "ratios": ratios}


def draw(data: dict, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
    for name, ratio in data["ratios"].items():
        ax.loglog(MULTIPLIERS, np.minimum(np.median(ratio, 0), 1e6), marker="o", label=name)
    ax.axhline(0.1, color="grey", lw=0.8, ls="--")
    n, s, mc, rounds = data["setting"]
    ax.set(xlabel="learning-rate multiplier m", ylabel="final gap / initial gap (median over replicas)",
           title=f"Mode B, N = {n}, S = {s}, M_c = {mc}, T = {rounds}, σ = 0.5")
    ax.legend()
    return save(fig, path)


@register("figure", "masfl-fig3")
@one_thread
def render(ctx):
    """MasFL Fig. 3 analogue: final optimality gap vs learning-rate multiplier, five methods, quadratic testbed."""
    return draw(compute(ctx), ctx.figure_path("masfl-fig3"))
