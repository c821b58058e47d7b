r"""Thesis Tables 5.1-5.3 analogue (seed 001 §5.4.2-5.4.3; digest 001_thesis_ch4-6 §3.6, §6 C10): Fed-CIS's error
per exit-weight strategy and serving split, for the equal, biased and highly biased data partitions, rendered as
tables beside the thesis' printed CIFAR10 accuracies.

Labelled substitution: the cells are :math:`100\,\epsilon_{\rm true}` (lower is better) of
:func:`theorylab.figures.thesis_ch5_runs.fedcis_errors` on the nested linear early-exit testbed, not ResNet-18 accuracies on
CIFAR; p = 0 except the row "Serving Rate p=0.2".  The printed columns are the thesis' means (Tables 5.1-5.3,
CIFAR10), for comparison of orderings only.
"""

from __future__ import annotations

from theorylab.figures.thesis_ch5_runs import fedcis_errors
from theorylab.cis.rates import SEVEN_NODE, THESIS_SPLITS
from theorylab.plotting import pyplot, save
from theorylab.registry import register

PRINTED_CIFAR10 = {  # thesis Tables 5.1 (equal), 5.2 (biased), 5.3 (highly biased): mean test accuracy (%)
    "equal": {"Equal Weight": (49.9, 60.6, 68.9, 74.9, 80.4, 83.8, 85.1),
              "FLOPS Prop": (32.1, 47.3, 58.5, 67.3, 76.4, 83.2, 86.3),
              "Serving Rate": (54.2, 62.6, 69.2, 74.9, 80.9, 84.6, 86.7),
              "Balanced Adj (not the thesis')": (53.4, 61.1, 69.2, 74.9, 80.4, 85.0, 87.6)},
    "biased": {"Equal Weight": (47.4, 58.9, 67.8, 74.9, 80.9, 85.0, 86.7),
               "FLOPS Prop": (31.5, 47.2, 59.0, 68.4, 78.1, 85.4, 88.8),
               "Serving Rate": (53.1, 60.6, 66.4, 74.9, 81.7, 87.1, 89.2),
               "Balanced Adj (not the thesis')": (51.0, 59.6, 68.0, 74.6, 82.1, 87.5, 90.3)},
    "highly_biased": {"Equal Weight": (36.5, 45.5, 56.6), "Serving Rate": (41.3, 40.1, 55.3),
                      "Serving Rate p=0.2": (49.2, 52.6, 56.8)},
}


def cell(ctx, split, partition: str, row: str, replicas: int, topology=SEVEN_NODE) -> float:
    r"""Mean :math:`100\,\epsilon_{\rm true}` of one table cell: the strategy ``row`` (p = 0, or p = 0.2 for a row
    ending in " p=0.2") at the serving ``split`` on the ``partition``, on ``topology`` (default 7 nodes)."""
    p = 0.2 if "p=0.2" in row else 0.0
    return 100 * float(fedcis_errors(ctx, split, partition, p, row.replace(" p=0.2", ""), replicas, topology).mean())


def compute(ctx, replicas: int | None = None) -> dict:
    """``{partition: {row: [mean 100 eps_true per split]}}`` over the splits the thesis tabulates."""
    replicas = replicas or ctx.pick(50, 300)
    out = {}
    for partition, rows in PRINTED_CIFAR10.items():
        splits = THESIS_SPLITS[:len(next(iter(rows.values())))]
        out[partition] = {row: [cell(ctx, split, partition, row, replicas) for split in splits] for row in rows}
    return out


def draw(data: dict, path):
    plt = pyplot()
    fig, axes = plt.subplots(len(data), 1, figsize=(11, 2.0 + 1.1 * sum(len(r) for r in data.values()) / 2),
                             constrained_layout=True)
    for ax, (partition, rows) in zip(axes, data.items()):
        draw_table(ax, rows, PRINTED_CIFAR10[partition], THESIS_SPLITS[:len(next(iter(rows.values())))],
                   f"{partition} partition: 100 x eps_true on the nested linear testbed (lower is better) | "
                   "thesis CIFAR10 accuracy %")
    return save(fig, path)


def draw_table(ax, rows: dict, printed: dict, splits, title: str) -> None:
    """One table on ``ax``: a row per strategy, a column per serving split, cells "ours | printed"."""
    cells = [[f"{ours:.2f} | {theirs:.1f}" for ours, theirs in zip(values, printed[row])]
             for row, values in rows.items()]
    ax.axis("off")
    ax.table(cellText=cells, rowLabels=list(rows), colLabels=["-".join(map(str, s)) for s in splits], loc="center",
             cellLoc="center")
    ax.set_title(title, fontsize=9)


@register("figure", "thesis-tables5")
def render(ctx):
    """Thesis Tables 5.1-5.3 analogue: Fed-CIS error per strategy and serving split (nested linear testbed)."""
    return draw(compute(ctx), ctx.figure_path("thesis-tables5"))
