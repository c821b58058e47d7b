r"""Learning curves of network runs: mean :math:`\pm` one sample standard deviation over seeds, per round.

``draw(panels, path)`` takes ``{panel title: {curve label: [Trace, ...]}}``; the replicas of all
traces of a curve are its seeds.  The top row shows test accuracy (%), the bottom row training loss
on a log scale (as FedAWE Fig. 7), each at the curve's evaluation point (``"server"`` unless the
label maps to another point in ``points``).  The band is the sample standard deviation
:math:`\sqrt{\sum_k (v_k-\bar v)^2/(n-1)}` (``ddof=1``, as the claim's reported std); one run has no band.
The figure ``fedawe-cnn-curves`` (:mod:`theorylab.figures.fedawe_cnn_curves`) and ``theorylab train`` draw with it.
"""

from __future__ import annotations

import numpy as np

from theorylab.plotting import pyplot, save
from theorylab.trace import Trace

ROWS = (("test_acc", "test accuracy (%)", 100.0, "linear"), ("train_loss", "training loss", 1.0, "log"))


def seeds_by_round(traces: list[Trace], metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Evaluation rounds and the ``(seeds, rounds)`` values of ``metric`` over all replicas of ``traces``."""
    rounds = traces[0].rounds
    if any(len(t.rounds) != len(rounds) or np.any(t.rounds != rounds) for t in traces):
        raise ValueError("traces of one curve must share their evaluation rounds")
    return rounds, np.concatenate([t.metrics[metric] for t in traces], axis=0)


def mean_and_std(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-round mean and sample standard deviation (``ddof=1``) over the runs of ``values`` ``(runs, rounds)``;
    the deviation is zero for a single run."""
    std = values.std(0, ddof=1) if len(values) > 1 else np.zeros(values.shape[1:])
    return values.mean(0), std


def rounds_to_target(rounds, accuracy, target: float, every: int = 1) -> int | None:
    """The first round :math:`r` with :math:`r \\bmod` ``every`` :math:`= 0` at which ``accuracy`` (a mean curve per
    evaluated round) is at least ``target``; ``None`` when it never is (the papers' "–" or "500+")."""
    rounds, accuracy = np.asarray(rounds), np.asarray(accuracy, dtype=np.float64)
    hit = np.flatnonzero((rounds % every == 0) & (accuracy >= target))
    return int(rounds[hit[0]]) if len(hit) else None


def draw(panels: dict[str, dict[str, list[Trace]]], path, points: dict[str, str] | None = None, title: str = ""):
    plt = pyplot()
    points = points or {}
    fig, axes = plt.subplots(len(ROWS), len(panels), figsize=(3.6 * len(panels), 5.2), squeeze=False,
                             constrained_layout=True)
    for col, (panel, curves) in enumerate(panels.items()):
        for row, (metric, ylabel, scale, yscale) in enumerate(ROWS):
            ax = axes[row, col]
            for label, traces in curves.items():
                rounds, values = seeds_by_round(traces, f"{points.get(label, 'server')}.{metric}")
                mean, std = (v * scale for v in mean_and_std(values))
                line, = ax.plot(rounds, mean, label=f"{label} (n={len(values)})", lw=1.2)
                ax.fill_between(rounds, mean - std, mean + std, color=line.get_color(), alpha=0.2, lw=0)
            ax.set(yscale=yscale, xlabel="round", ylabel=ylabel)
            if row == 0:
                ax.set_title(panel)
    axes[0, 0].legend(fontsize=7, title="mean ± sample std (ddof=1)", title_fontsize=7)
    if title:
        fig.suptitle(title)
    return save(fig, path)

