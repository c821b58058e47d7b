r"""Thesis Fig. 2.1d (seed 001 §2.5.2, L870-881; digest 001 §3.3, §5.2, §7.1, §8 V13): CA-Fed's cumulative
aggregation weights :math:`\frac1T\sum_{t=1}^T q_i^{(t)}` per client after :math:`T` rounds, grouped by availability
class, on the setting of Fig. 2.1 (:func:`theorylab.figures.thesis_fig2_1.leaf_config`: Synthetic LEAF(0.5, 0.5), the four
classes of the text's split, CA-Fed with :math:`\bar\kappa^2 = 1`).

Reference marks: the Unbiased weights :math:`\alpha_i/\pi_i` (closed form), which CA-Fed's :math:`q^{(t)}` equals in
every round in which it drops no client; a client below its mark was dropped in some rounds, a client at 0 in all.
The thesis groups the clients in three classes (the repository's split, digest §3.3 [?]); we keep the four of the
text's split.  Rounds are driven by :func:`theorylab.figures.thesis_fig2_5.record` (the kernel's ``cafed.q_sum``).
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.thesis_fig2_1 import availability, budget, horizon, leaf_config, leaf_problem, clients, methods
from theorylab.figures.thesis_fig2_5 import record
from theorylab.plotting import pyplot, save
from theorylab.registry import build, register
from theorylab.threads import one_thread

CLASSES = ("more available,\ncorrelated", "more available,\nweakly corr.", "less available,\ncorrelated",
           "less available,\nweakly corr.")


def compute(ctx, rounds: int | None = None, kappa2: float = 1.0) -> dict:
    """``q_mean`` ``(replicas, N)``, the Unbiased weights ``alpha / pi`` and each client's class index."""
    rounds = rounds or horizon(ctx)
    problem = leaf_problem(clients(ctx))
    spec = methods(problem, rounds, kappas=(kappa2,), others=())
    config = leaf_config(ctx, next(iter(spec.values())), rounds, every=rounds)
    pi, _ = availability(problem["n_clients"])
    alpha = np.asarray(build("testbed", problem).alpha)
    return {"q_mean": record(config)["q_mean"], "unbiased": alpha / np.asarray(pi),
            "classes": np.repeat(np.arange(4), problem["n_clients"] // 4)}


def draw(data: dict, path, title: str):
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    x = np.arange(len(data["unbiased"]))
    mean = data["q_mean"].mean(0)
    for ax, values, ylabel in ((axes[0], mean, "(1/T) sum_t q_i^(t), mean over replicas"),
                               (axes[1], mean / data["unbiased"], "the same / (alpha_i / pi_i): share of rounds kept")):
        for c, label in enumerate(CLASSES):
            idx = x[data["classes"] == c]
            ax.bar(idx, values[idx], color=f"C{c}", label=label.replace("\n", " "))
        ax.set(xlabel="client i (grouped by class)", ylabel=ylabel)
    axes[0].plot(x, data["unbiased"], "k_", ms=8, label="Unbiased alpha_i / pi_i (no drop)")
    axes[0].set_yscale("symlog", linthresh=1e-2)
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return save(fig, path)


@register("figure", "thesis-fig2-1d")
@one_thread
def render(ctx):
    """Thesis Fig. 2.1d: CA-Fed's cumulative weights per client by availability class on Synthetic LEAF."""
    title = f"Thesis Fig. 2.1d on Synthetic LEAF(0.5, 0.5), CA-Fed kappa2 = 1 ({budget(ctx, horizon(ctx))})"
    return draw(compute(ctx), ctx.figure_path("thesis-fig2-1d"), title)
