r"""Shared recipe of the performative sweep figures (Figs. 2–4 of seed 003): one curve per setting.

Each panel holds settings ``(label, problem spec, algorithm spec)`` of the Gaussian-mean testbed.  Every curve
is the exact :math:`\sqrt{\mathbb E(\bar\theta^t-\theta^{PS})^2}` (exact engine, digest §5.2); the full budget adds
the Monte Carlo mean of :math:`|\bar\theta^t-\theta^{PS}|` over 5 cached runs (``ctx.run``), as the authors plot.
``per_round=True`` adds a second row against communication rounds :math:`t/E` (digest §6 Table C: per local
iteration larger :math:`E` is slower, per round it can be faster).
"""

from __future__ import annotations

import numpy as np

from theorylab.performative.experiments import THETA_PS, expected_dist2, run_config
from theorylab.plotting import pyplot, save

HORIZON = 100_000


def compute(ctx, panels: dict[str, list[tuple[str, dict, dict]]], horizon: int = HORIZON) -> dict:
    """Exact curves (and, at the full budget, Monte Carlo means) for every setting of every panel."""
    out = {}
    for title, settings in panels.items():
        curves = []
        for label, problem, algorithm in settings:
            E = algorithm["local_steps"]
            t = np.unique(np.linspace(0, horizon, 801).astype(int) // E * E)
            curve = {"label": label, "E": E, "t": t, "exact": np.sqrt(expected_dist2(problem, algorithm, t))}
            if not ctx.quick:
                trace = ctx.run(run_config(problem, algorithm, horizon, 5, seed=ctx.seed, points=200))
                curve["mc"] = (trace.rounds * E, np.abs(trace.metrics["server.theta"] - THETA_PS).mean(0))
            curves.append(curve)
        out[title] = curves
    return out


def draw(data: dict, path, title: str, per_round: bool = False, legend: str = "upper right"):
    plt = pyplot()
    rows = 2 if per_round else 1
    fig, axes = plt.subplots(rows, len(data), figsize=(4.6 * len(data), 3.2 * rows), constrained_layout=True,
                             squeeze=False)
    for col, (panel, curves) in enumerate(data.items()):
        for k, curve in enumerate(curves):
            colour = f"C{k}"
            for row in range(rows):
                ax = axes[row, col]
                scale = 1 if row == 0 else curve["E"]
                ax.plot(curve["t"] / scale, curve["exact"], color=colour, lw=1.1, label=curve["label"] if row == 0 else None)
                if "mc" in curve and row == 0:  # MC records are too sparse for the log-scaled per-round axis
                    steps, mean = curve["mc"]
                    ax.plot(steps / scale, mean, color=colour, lw=0.6, alpha=0.6)
        axes[0, col].set(yscale="log", title=panel, xlabel="local iterations $t$",
                         ylabel=r"$\sqrt{\mathbb{E}(\bar\theta^t-\theta^{PS})^2}$")
        axes[0, col].legend(fontsize=7, loc=legend, ncol=1 if legend == "upper right" else 2)
        if per_round:
            axes[1, col].set(yscale="log", xscale="log", xlabel="communication rounds $t/E$",
                             ylabel=r"$\sqrt{\mathbb{E}(\bar\theta^t-\theta^{PS})^2}$", title=f"{panel}: per round")
    fig.suptitle(title + "  (lines: exact engine" + ("; thin: MC mean of 5 runs)" if any(
        "mc" in c for cs in data.values() for c in cs) else ")"))
    return save(fig, path)
