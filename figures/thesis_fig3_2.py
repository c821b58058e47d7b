r"""Thesis Fig. 3.2 (seed 001 §3.5.2, L1134-1150; digest 001 §5.3, §5.4, §8 V23): the best weight on stale updates
:math:`\beta_{\rm opt}\in\{0, 0.2, 0.5, 0.8, 1\}` over data heterogeneity :math:`\sigma_g^2` (rows) and participation
heterogeneity :math:`p_{\rm avg}/p_{\min}` (columns), each cell annotated with :math:`\Delta_0` (gain over FedAvg,
:math:`\beta = 0`) and :math:`\Delta_1` (over FedVARP, :math:`\beta = 1`).

**Stand-in for the thesis' MNIST grid.**  :math:`N = 4` clients in two equal groups as in the thesis (group 1 always
participates, group 2 with :math:`p_{\min}`), so :math:`p_{\rm avg}/p_{\min} = (1+p_{\min})/(2p_{\min})`, i.e.
:math:`p_{\min} = 1/(2r-1)` for the ratio :math:`r`.  Data heterogeneity only in group 2 (the thesis' label swap):
:math:`F_i(w) = \frac12(w-u_i)^2` with :math:`u = (0, 0, s, -s)`, so :math:`\sigma_g^2 = \frac1N\sum_i\|\nabla F_i -
\nabla F\|^2 = s^2/2` at every :math:`w` (A8 with equality).  Gradient noise :math:`\sigma = 1`, :math:`K = 5`,
:math:`\eta_s = 1`, :math:`w^{(1)} = 5`, horizon :math:`T = 10/p_{\min}` (the thesis' "first ten participations of the
least participating client"), :math:`\eta_c` tuned per cell and per :math:`\beta` on a half-decade grid like the
thesis'.  The measure is the exact expected loss :math:`L_\beta = \mathbb E F(w^T) - F^\star` by enumeration of the
participation outcomes (:mod:`theorylab.exact.fedstale_moments`) instead of test accuracy, so the gains are relative
loss reductions :math:`\Delta_b = 100\,(L_b - L_{\beta_{\rm opt}})/L_b` in percent (the thesis' are accuracy points;
its per-cell values are not in the text, only its shares: FedStale best in 72 % of the cells, FedVARP 18 %,
FedAvg 10 %, printed beside ours).
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.exact.fedstale_moments import fedstale_moments
from theorylab.kernels.fedstale import THESIS_BETAS as BETAS
from theorylab.plotting import pyplot, save
from theorylab.registry import build, register
from theorylab.tuning import select

LRS = (10 ** -2.5, 10 ** -2, 10 ** -1.5, 10 ** -1)  # eta_c grid (thesis: 10^-2 ... 10^-4 for its CNNs)
LOCAL_STEPS, SIGMA, START = 5, 1.0, 5.0
SIGMAS_G2 = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)  # the thesis' hat sigma_g^2 values, used as sigma_g^2 = s^2 / 2
RATIOS = (1.5, 3.0, 5.5, 10.5, 25.5, 50.5, 100.5, 250.5)  # p_avg / p_min of p_min = 50 % ... 0.2 %
PAPER_SHARES = {"FedStale": 72.0, "FedVARP": 18.0, "FedAvg": 10.0}  # % of the thesis' 48 cells (L1150)


def p_min_of(ratio: float) -> float:
    """:math:`p_{\\min} = 1/(2r-1)`, the inverse of :math:`r = (1+p_{\\min})/(2p_{\\min})` (equal halves)."""
    if ratio < 1:
        raise ValueError(f"ratio p_avg/p_min must be >= 1; got {ratio}")
    return 1.0 / (2.0 * ratio - 1.0)


def shift_of(sigma_g2: float) -> float:
    """:math:`s = \\sqrt{2\\sigma_g^2}`, the centre shift giving :math:`\\sigma_g^2 = s^2/2`."""
    if sigma_g2 < 0:
        raise ValueError(f"sigma_g^2 must be >= 0; got {sigma_g2}")
    return math.sqrt(2.0 * sigma_g2)


def two_groups(shift: float):
    """The Q-shift problem of the module docstring: u = (0, 0, s, -s), sigma_g^2 = s^2 / 2."""
    centers = [[0.0], [0.0], [shift], [-shift]]
    return build("testbed", {"name": "quadratic", "hessians": [[[1.0]]] * 4, "centers": centers, "sigma": SIGMA,
                             "x0": [START]})


def horizon(p_min: float) -> int:
    """:math:`T = 10/p_{\\min}` rounds."""
    return int(round(10 / p_min))


def tuned_losses(shift: float, p_min: float, betas=BETAS) -> dict[float, tuple[float, float]]:
    """beta -> (exact E F(w^T) - F* at the best eta_c of :data:`LRS`, that eta_c), at T = 10/p_min."""
    problem, rounds, p = two_groups(shift), horizon(p_min), [1.0, 1.0, p_min, p_min]
    out = {}
    for beta in betas:
        losses = {lr: float(fedstale_moments(problem, p, beta, LOCAL_STEPS, lr, 1.0, rounds)[1][-1]) for lr in LRS}
        lr = select(losses, float, larger=False,
                    rule="least exact final loss (an overflowing step is never chosen)").best
        out[beta] = (losses[lr], lr)
    return out


def best_beta(losses: dict[float, tuple[float, float]]) -> float:
    """:math:`\\beta_{\\rm opt}`: the beta of least tuned loss (the smaller beta on a tie)."""
    return min(losses, key=lambda beta: (losses[beta][0], beta))


def gain(loss_baseline: float, loss_best: float) -> float:
    """:math:`\\Delta = 100\\,(L_{\\rm baseline} - L_{\\beta_{\\rm opt}})/L_{\\rm baseline}`, in percent."""
    return 100.0 * (loss_baseline - loss_best) / loss_baseline


def summarise(losses: dict[float, tuple[float, float]]) -> dict:
    """beta_opt, Delta_0 and Delta_1 of one cell's tuned losses."""
    beta = best_beta(losses)
    best = losses[beta][0]
    return {"beta": beta, "delta0": gain(losses[0.0][0], best), "delta1": gain(losses[1.0][0], best),
            "lr": losses[beta][1]}


def shares(beta_table: np.ndarray) -> dict[str, float]:
    """% of cells where FedStale (0 < beta_opt < 1), FedVARP (beta_opt = 1) and FedAvg (beta_opt = 0) is best."""
    b = np.asarray(beta_table, dtype=np.float64)
    return {"FedStale": 100.0 * float(np.mean((b > 0) & (b < 1))), "FedVARP": 100.0 * float(np.mean(b == 1)),
            "FedAvg": 100.0 * float(np.mean(b == 0))}


def compute(sigmas=SIGMAS_G2, ratios=RATIOS) -> dict:
    """The grid: ``cells[i][j]`` = :func:`summarise` at ``sigmas[i]`` x ``ratios[j]``; the beta table; shares."""
    cells = [[summarise(tuned_losses(shift_of(s), p_min_of(r))) for r in ratios] for s in sigmas]
    beta = np.array([[c["beta"] for c in row] for row in cells])
    return {"sigmas": list(sigmas), "ratios": list(ratios), "cells": cells, "beta": beta, "shares": shares(beta)}


def draw(data: dict, path):
    plt = pyplot()
    beta, sigmas, ratios = data["beta"], data["sigmas"], data["ratios"]
    fig, ax = plt.subplots(figsize=(1.3 * len(ratios) + 2.5, 0.9 * len(sigmas) + 2), constrained_layout=True)
    image = ax.imshow(beta, cmap="Blues", vmin=0, vmax=1, origin="lower", aspect="auto")
    for i, row in enumerate(data["cells"]):
        for j, cell in enumerate(row):
            color = "white" if cell["beta"] > 0.6 else "black"
            ax.text(j, i, f"β={cell['beta']:g}\nΔ0={cell['delta0']:.1f}%\nΔ1={cell['delta1']:.1f}%",
                    ha="center", va="center", fontsize=7, color=color)
    ax.set_xticks(range(len(ratios)), [f"{r:g}" for r in ratios])
    ax.set_yticks(range(len(sigmas)), [f"{s:g}" for s in sigmas])
    ax.set(xlabel="participation heterogeneity p_avg / p_min", ylabel="data heterogeneity σ_g²")
    ours = ", ".join(f"{k} {v:.0f}%" for k, v in data["shares"].items())
    paper = ", ".join(f"{k} {v:.0f}%" for k, v in PAPER_SHARES.items())
    ax.set_title("β_opt on the quadratic stand-in for MNIST (exact E F(w^T) − F*, η_c tuned); Δ = loss reduction\n"
                 f"best in: ours {ours}; thesis (MNIST) {paper}", fontsize=9)
    fig.colorbar(image, ax=ax, label="β_opt")
    return save(fig, path)


@register("figure", "thesis-fig3-2")
def render(ctx):
    """Thesis Fig. 3.2: beta_opt heat map with Delta_0, Delta_1 over sigma_g^2 x p_avg/p_min (quadratic stand-in)."""
    data = compute(ctx.pick(SIGMAS_G2[::2], SIGMAS_G2), ctx.pick(RATIOS[:5:2], RATIOS))
    return draw(data, ctx.figure_path("thesis-fig3-2"))
