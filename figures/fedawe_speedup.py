r"""FedAWE Corollary 1's linear speedup: the error at fixed :math:`T` against :math:`s` and against :math:`k` (log-log).

Seed 000 Corollary 1 and the remark after (17); digest 000 §8 item 10.  Under uniform-:math:`k` participation
(:math:`\delta=\delta_{\max}=k/m`) the dominant terms of (17) scale as :math:`(skT)^{-1/2}`, i.e. slope
:math:`-1/2` against :math:`s` and against :math:`k`, once :math:`T\gg(sm)^3`.  Runs are those of
:mod:`theorylab.figures.fedawe_rate` (same problems, steps and recording), at a fixed horizon.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.fedawe_rate import LABELS, M, RATE_K, RATE_S, cor1_bound, cor1_config, loglog_panel, time_averages
from theorylab.plotting import pyplot, save
from theorylab.regime import seconds_per_round
from theorylab.registry import register
from theorylab.threads import one_thread

LOCAL_STEPS = (1, 2, 4, 8)


def speedup_horizon(ctx) -> int:
    return ctx.pick(2 ** 10, 2 ** 13)


def participants(ctx) -> tuple[int, ...]:
    """k < m: with k = m every client holds the same model after each round, the consensus error is exactly zero and
    its log-log slope is undefined."""
    return ctx.pick((2, 5, 8), (2, 3, 4, 5, 6, 8))


def speedup_data(ctx, problems=("iid",)) -> dict:
    """Per problem: per-replica time averages ``(R, len(grid))`` against ``s`` (k fixed) and ``k`` (s fixed), and the
    measured seconds per replica-round of each axis' runs (``"cost_s"``, ``"cost_k"``)."""
    T, replicas = speedup_horizon(ctx), ctx.pick(16, 32)
    out = {"T": T, "s": np.asarray(LOCAL_STEPS), "k": np.asarray(participants(ctx)), "replicas": replicas}
    for problem in problems:
        runs_s = [ctx.run(cor1_config(problem, T, s, RATE_K, replicas, ctx.seed)) for s in LOCAL_STEPS]
        runs_k = [ctx.run(cor1_config(problem, T, RATE_S, int(k), replicas, ctx.seed)) for k in out["k"]]
        by_s, by_k = [time_averages(t) for t in runs_s], [time_averages(t) for t in runs_k]
        bound_s = [cor1_bound(problem, T, s, RATE_K) for s in LOCAL_STEPS]
        bound_k = [cor1_bound(problem, T, RATE_S, int(k)) for k in out["k"]]
        out[problem] = {
            "s": {name: np.stack([v[name] for v in by_s], 1) for name in ("grad", "consensus")},
            "k": {name: np.stack([v[name] for v in by_k], 1) for name in ("grad", "consensus")},
            "bound_s": np.asarray(bound_s), "bound_k": np.asarray(bound_k),
            "cost_s": seconds_per_round(runs_s), "cost_k": seconds_per_round(runs_k),
        }
    return out


def draw_speedup(data: dict, path, problem: str = "iid"):
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), constrained_layout=True)
    xlabels = (f"local steps $s$ (k={RATE_K})", f"participants $k$ of m={M} (s={RATE_S})")
    for ax, axis, xlabel in zip(axes, ("s", "k"), xlabels):
        curves = {"gradient": data[problem][axis]["grad"], "consensus": data[problem][axis]["consensus"]}
        loglog_panel(ax, data[axis], curves, xlabel,
                     bounds={"explicit bound on the gradient (Cor. 2 at Cor. 1 steps)": data[problem][f"bound_{axis}"]})
        ax.set_title(f"{LABELS[problem]}: time averages at T={data['T']} against {axis}")
    fig.suptitle(r"FedAWE Corollary 1 linear speedup: predicted $\propto (sk)^{-1/2}$ once $T\gg(sm)^3$")
    return save(fig, path)


@register("figure", "fedawe-speedup")
@one_thread
def render(ctx):
    """FedAWE Cor. 1 linear speedup: error vs s and vs k (log-log) with fitted slopes and the explicit bound."""
    return draw_speedup(speedup_data(ctx), ctx.figure_path("fedawe-speedup"))
