r"""Thesis Fig. 3.3 (seed 001 §3.5.2, L1152-1160; digest 001 §5.4): loss of FedAvg (:math:`\beta = 0`), FedStale
(:math:`\beta = 0.5`) and FedVARP (:math:`\beta = 1`) against data heterogeneity :math:`\sigma_g^2` at
:math:`p_{\rm avg}/p_{\min} = 10`.

The thesis plots test accuracy of CNNs on MNIST and CIFAR-10; we plot the exact expected loss
:math:`\mathbb E F(w^T) - F^\star` (:math:`\eta_c` tuned per :math:`\beta`) on the two-group quadratic stand-in of
:mod:`theorylab.figures.thesis_fig3_2`, at :math:`p_{\min} = 1/19` (ratio exactly 10) and :math:`T = 190`.
"""

from __future__ import annotations

from theorylab.figures.thesis_fig3_2 import SIGMAS_G2, p_min_of, shift_of, tuned_losses
from theorylab.plotting import pyplot, save
from theorylab.registry import register

RATIO = 10.0
SHOWN = {0.0: "FedAvg (β = 0)", 0.5: "FedStale (β = 0.5)", 1.0: "FedVARP (β = 1)"}


def loss_lines(x, settings) -> dict:
    """``{"x": x, "loss": beta -> [exact tuned loss at each (sigma_g^2, p_avg/p_min) of settings]}`` for the betas
    of :data:`SHOWN` (:func:`theorylab.figures.thesis_fig3_2.tuned_losses`)."""
    cells = [tuned_losses(shift_of(s), p_min_of(r), tuple(SHOWN)) for s, r in settings]
    return {"x": list(x), "loss": {beta: [cell[beta][0] for cell in cells] for beta in SHOWN}}


def compute(sigmas=SIGMAS_G2, ratio: float = RATIO) -> dict:
    """The lines of Fig. 3.3: over sigma_g^2 at a fixed ratio."""
    return loss_lines(sigmas, [(s, ratio) for s in sigmas])


def draw_lines(data: dict, path, xlabel: str, title: str, logx: bool = False):
    """One line per beta of ``data["loss"]`` against ``data["x"]`` (shared with Fig. 3.4)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.8), constrained_layout=True)
    for beta, label in SHOWN.items():
        ax.plot(data["x"], data["loss"][beta], "o-", label=label)
    ax.set_yscale("log")
    if logx:
        ax.set_xscale("log")
    ax.set(xlabel=xlabel, ylabel="exact E F(w^T) − F* (η_c tuned)", title=title)
    ax.legend()
    return save(fig, path)


@register("figure", "thesis-fig3-3")
def render(ctx):
    """Thesis Fig. 3.3: loss vs sigma_g^2 at p_avg/p_min = 10 for beta in {0, 0.5, 1} (quadratic stand-in)."""
    return draw_lines(compute(ctx.pick(SIGMAS_G2[::2], SIGMAS_G2)), ctx.figure_path("thesis-fig3-3"),
                      "data heterogeneity σ_g²", "Fig. 3.3 stand-in: p_avg / p_min = 10")
