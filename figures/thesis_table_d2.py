r"""Thesis Table D.2 analogue (seed 001 App. D, Table D.2; digest 001_thesis_ch4-6 §3.6, §6 C10): Fed-CIS on the
17-node system (12 / 4 / 1 nodes in layers 1 / 2 / 3, :data:`theorylab.cis.rates.SEVENTEEN_NODE`), equal data
partition, serving splits 60-30-10 and 10-30-60, one row per exit-weight strategy, beside the 7-node system of
Table 5.1 at the same splits.  The thesis' caption: the 17-node results follow "the exact same order" as Table 5.1.

Labelled substitution, that of the Tables 5.1-5.3 analogue (:mod:`theorylab.figures.thesis_tables5`, whose
:func:`~theorylab.figures.thesis_tables5.cell` computes every cell): :math:`100\,\epsilon_{\rm true}` (lower is
better) of :func:`theorylab.figures.thesis_ch5_runs.fedcis_errors` on the nested linear early-exit testbed, not
ResNet-18 accuracies on CIFAR10 over 3 seeds; the same 150 samples in all as on 7 nodes (the thesis spreads the same
CIFAR10 training set), so an equal partition gives each layer-1 node 4 samples, each layer-2 node 12 (12.5 rounded)
and the root 50; requests arrive at the 12 leaves, :math:`T = 30`, p = 0.  The printed columns are the thesis' means
(Table D.2 for 17 nodes, Table 5.1 for 7 nodes, CIFAR10), for comparison of orderings only; Balanced Adj is the
toolkit's proposal :math:`\Lambda_ev_e^{-1/2}` (the thesis gives no formula).
"""

from __future__ import annotations

from theorylab.cis.rates import SEVEN_NODE, SEVENTEEN_NODE, THESIS_SPLITS
from theorylab.figures.thesis_tables5 import PRINTED_CIFAR10, cell, draw_table
from theorylab.plotting import pyplot, save
from theorylab.registry import register

SPLITS = ((60, 30, 10), (10, 30, 60))
PRINTED_D2 = {  # thesis Table D.2 (17 nodes, CIFAR10, equal partition): mean test accuracy (%) at SPLITS
    "Equal Weight": (58.9, 83.5), "FLOPS Prop": (44.6, 82.4), "Serving Rate": (62.1, 84.3),
    "Balanced Adj (not the thesis')": (60.2, 84.7)}
SYSTEMS = {  # label: (topology, printed CIFAR10 accuracies at SPLITS)
    "17 nodes (12/4/1), Table D.2": (SEVENTEEN_NODE, PRINTED_D2),
    "7 nodes (4/2/1), Table 5.1": (SEVEN_NODE, {row: tuple(v[THESIS_SPLITS.index(s)] for s in SPLITS)
                                               for row, v in PRINTED_CIFAR10["equal"].items()}),
}


def compute(ctx, replicas: int | None = None) -> dict:
    """``{system: {row: [mean 100 eps_true per split of SPLITS]}}`` on the equal partition, p = 0."""
    replicas = replicas or ctx.pick(50, 300)
    return {system: {row: [cell(ctx, split, "equal", row, replicas, topology) for split in SPLITS] for row in printed}
            for system, (topology, printed) in SYSTEMS.items()}


def ordering(values: dict, k: int, best_first_low: bool) -> str:
    """The rows ordered best first at column ``k`` (lowest first when ``best_first_low``)."""
    return " > ".join(row.split(" (")[0] for row in sorted(values, key=lambda r: values[r][k] * (1 if best_first_low
                                                                                                 else -1)))


def draw(data: dict, path, replicas: int):
    plt = pyplot()
    fig, axes = plt.subplots(len(data) + 1, 1, figsize=(10, 7), constrained_layout=True,
                             gridspec_kw={"height_ratios": [1.0] * len(data) + [0.9]})
    for ax, (system, rows) in zip(axes, data.items()):
        draw_table(ax, rows, SYSTEMS[system][1], SPLITS, f"{system}: 100 x eps_true, nested linear testbed, equal "
                   "partition, p = 0 (lower is better) | thesis CIFAR10 accuracy %")
    lines = [f"{'-'.join(map(str, split))}  {who} {system.split(',')[0]:16s} {ordering(values, k, who == 'ours')}"
             for k, split in enumerate(SPLITS) for who in ("ours", "thesis") for system, rows in data.items()
             for values in [rows if who == "ours" else SYSTEMS[system][1]]]
    axes[-1].axis("off")
    axes[-1].text(0.0, 1.0, "Orderings of the means, best first:\n" + "\n".join(lines), fontsize=8, va="top",
                  family="monospace", transform=axes[-1].transAxes)
    fig.suptitle(f"Thesis Table D.2 analogue (CIFAR10 ResNet-18 in the thesis): the nested linear early-exit testbed, "
                 f"150 samples, T = 30, {replicas} replicas", fontsize=9)
    return save(fig, path)


@register("figure", "thesis-table-d2")
def render(ctx):
    """Thesis Table D.2 analogue: Fed-CIS error per strategy on 17 nodes beside 7 nodes (nested linear testbed)."""
    replicas = ctx.pick(50, 300)
    return draw(compute(ctx, replicas), ctx.figure_path("thesis-table-d2"), replicas)
