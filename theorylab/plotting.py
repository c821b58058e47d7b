"""Matplotlib helpers: a headless backend, one house style, and atomic PNG writes.

matplotlib is imported here only, when a figure is drawn, so the engine runs without it.
"""

from __future__ import annotations

from pathlib import Path

from theorylab.files import replacing


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend with the house style applied."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "figure.dpi": 110, "savefig.dpi": 130, "font.size": 9, "axes.titlesize": 10,
        "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
        "legend.frameon": False,
    })
    return plt


def save(fig, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` atomically through a temporary file of its own (:func:`theorylab.files.replacing`),
    so a killed run leaves no half-written PNG and two processes drawing the same figure both succeed."""
    path = Path(path)
    with replacing(path) as tmp:
        fig.savefig(tmp, bbox_inches="tight", format=path.suffix.lstrip(".") or "png")
    fig.clf()
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
