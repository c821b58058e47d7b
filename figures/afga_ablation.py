r"""AFGA's component ablation (seed 002 §6.3 Table 4; digest 002 §1.5, §5 V16), closed-form stand-in.

Bars: the time-averaged :math:`\frac1R\sum_r\|\nabla f(x_r)\|^2` (mean and 95% interval over replicas, lower is better)
of FedAMSGrad, +Gossip (ring over all clients, no re-sampling), AFGA (ring) and CAFGA (4 clusters of 5 on rings,
:math:`m = 1`) at the digest's prototype step sizes (:mod:`theorylab.figures.afga_sweeps`), each labelled with the CIFAR-10
accuracy Table 4 prints for that row.
"""

from __future__ import annotations

from theorylab.figures.afga_sweeps import M, N, PAPER_LIKE, VARIANTS, average_gradnorm
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread
from theorylab.trace import mean_ci

STEPS, K = 8, 4
CLUSTERED = dict(topology={"name": "block_diagonal", "sizes": [N // K] * K}, clusters=K)
CLUSTER_SAMPLER = {"name": "cluster_uniform_k", "n_clients": N, "clusters": K, "k": M // K}
TABLE4 = {"+Gossip (ring)": "77.39", "FedAMSGrad": "79.59", "AFGA (ring)": "80.02", "CAFGA (rings of 5)": "82.10"}


def cafga_score(ctx, step_sizes: dict, steps: int, rounds: int, replicas: int, problem: dict | None = None):
    """Per-replica score of CAFGA with :math:`K` ring clusters and :math:`m = M/K` (:func:`average_gradnorm`)."""
    return average_gradnorm(ctx, dict(step_sizes, **CLUSTERED), steps=steps, rounds=rounds, replicas=replicas,
                            sampler=CLUSTER_SAMPLER, problem=problem)


def compute(ctx) -> dict:
    """``{"score": {row: (replicas,)}, "rounds": R}`` in Table 4's order of printed accuracy."""
    rounds, replicas = ctx.pick(120, 400), ctx.pick(32, 96)
    score = {row: average_gradnorm(ctx, dict(PAPER_LIKE, **VARIANTS[row]), steps=STEPS, rounds=rounds,
                                   replicas=replicas) for row in list(TABLE4)[:-1]}
    score["CAFGA (rings of 5)"] = cafga_score(ctx, PAPER_LIKE, STEPS, rounds, replicas)
    return {"score": score, "rounds": rounds}


def draw(data: dict, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
    for i, (row, values) in enumerate(data["score"].items()):
        lo, hi = mean_ci(values, 0.95)
        ax.bar(i, values.mean(), yerr=[[values.mean() - lo], [hi - values.mean()]], color=f"C{i}", capsize=3)
        ax.annotate(f"Table 4: {TABLE4[row]} %", (i, hi), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(TABLE4)), list(TABLE4), fontsize=8)
    ax.set(ylabel=r"$\frac{1}{R}\sum_r\|\nabla f(x_r)\|^2$ (lower is better)",
           title=f"Table 4 ablation on the quadratic: N = {N}, M = {M}, I = {STEPS}, R = {data['rounds']}")
    return save(fig, path)


@register("figure", "afga-table4")
@one_thread
def render(ctx):
    """AFGA Table 4 stand-in: averaged squared gradient norm of FedAMSGrad, +Gossip, AFGA and CAFGA (bars, 95% CI)."""
    return draw(compute(ctx), ctx.figure_path("afga-table4"))
