r"""FedAWE Figure 2: where FedAvg's expected model ends up on Example 1, over :math:`(p_1, p_2)`.

Two scalar clients :math:`F_i(x) = (x-u_i)^2/2`, :math:`u = (0, 1)`, :math:`x^\star = 0.5`
(seed 000 §4, Example 1).  Each cell is :math:`x_{\rm output} = \lim_t\mathbb E[x^t]` from the
exact-moment engine's fixed point (:func:`theorylab.exact.fedavg_moments.fedavg_mean_limit`),
for FedAvg over all clients and over active clients.  The paper's OCR lost which variant
its figure shows (digest 000 §4); both are drawn.

FedAWE is drawn beside them (:func:`compute_fedawe`): the exact limits of the all-client mean
:math:`\lim_t\mathbb E[\bar x^t]` and of the server model :math:`\lim_t\mathbb E[x^t]`, from the staleness
chain of :mod:`theorylab.exact.fedawe_two_client`, on a coarser grid :math:`p_i\in[0.1, 0.9]` (the chain's size
grows like :math:`1/(p_1p_2)`).  With equal curvatures the mean's limit is exactly :math:`\bar u = x^\star` (a
consequence of Proposition 1), while the server model stays biased.  The claim ``fedawe.fig2`` and
``theorylab figure fedawe-fig2`` draw the same figure (:func:`figure_data`, :func:`draw`).
"""

from __future__ import annotations

import numpy as np

from theorylab.testbeds.quadratic import scalar_quadratic
from theorylab.exact.fedawe_two_client import fedawe_two_client_moments
from theorylab.exact.fedavg_moments import fedavg_mean_limit
from theorylab.plotting import pyplot, save
from theorylab.registry import register

CENTERS = (0.0, 1.0)
LOCAL_STEPS, LR = 5, 0.05
SETTLE, TRUNCATION = 1e-9, 1e-10  # stopping rule and truncated staleness mass of FedAWE's exact chain
VARIANTS = {"all": "FedAvg over all clients", "active": "FedAvg over active clients"}


def compute(n: int = 49) -> dict[str, np.ndarray]:
    """Grid of :math:`p_1, p_2` and the engine's :math:`x_{\\rm output}` for each FedAvg variant."""
    grid = np.linspace(0.02, 0.98, n)
    problem = scalar_quadratic(CENTERS)
    out = {"p": grid}
    for kind in VARIANTS:
        out[kind] = np.array([[fedavg_mean_limit(problem, kind, (p1, p2), LOCAL_STEPS, LR)[0] for p1 in grid]
                              for p2 in grid])
    return out


def compute_fedawe(n: int = 9, rounds: int = 2000) -> dict[str, np.ndarray]:
    """FedAWE's exact limits over ``n x n`` points of :math:`[0.1, 0.9]^2` (same s and eta_l as the FedAvg panels);
    each chain runs until both moments move by less than ``SETTLE`` over 25 rounds (at most ``rounds``), with
    staleness truncated at probability mass ``TRUNCATION``; ``"rounds"`` holds the longest chain's length."""
    grid = np.linspace(0.1, 0.9, n)
    mean, server, longest = np.empty((n, n)), np.empty((n, n)), 0
    for a, p2 in enumerate(grid):
        for b, p1 in enumerate(grid):
            exact = fedawe_two_client_moments((p1, p2), CENTERS, lr=LR, local_steps=LOCAL_STEPS, rounds=rounds,
                                              every=25, tol=TRUNCATION, settle=SETTLE)
            mean[a, b], server[a, b] = exact.mean_model[-1], exact.server_model[-1]
            longest = max(longest, int(exact.rounds[-1]))
    return {"p": grid, "mean": mean, "server": server, "rounds": longest}


def figure_data(ctx) -> dict:
    """The FedAvg grids (``n = 25`` quick, 49 full) and FedAWE's under ``"fedawe"`` (9 quick, 17 full)."""
    return {**compute(ctx.pick(25, 49)), "fedawe": compute_fedawe(ctx.pick(9, 17))}


def closed_form(kind: str, p1, p2) -> np.ndarray:
    """Digest 000 §4: over all, :math:`\\sum p_iu_i/\\sum p_i`; over active, :math:`\\sum q_iu_i/\\sum q_i`
    with :math:`q_1 = p_1(1-p_2/2)`, :math:`q_2 = p_2(1-p_1/2)`."""
    u1, u2 = CENTERS
    if kind == "all":
        q1, q2 = p1, p2
    else:
        q1, q2 = p1 * (1 - p2 / 2), p2 * (1 - p1 / 2)
    return (q1 * u1 + q2 * u2) / (q1 + q2)


def draw(data: dict, path):
    """Heatmaps of :math:`x_{\\rm output}` (colour centred on :math:`x^\\star = 0.5`): the FedAvg variants, then
    FedAWE's all-client mean and server model on their own grid (:func:`figure_data`)."""
    plt = pyplot()
    awe = data["fedawe"]
    panels = [(VARIANTS[k], data[k], data["p"]) for k in VARIANTS]
    panels += [("FedAWE: all-client mean $\\bar x$", awe["mean"], awe["p"]),
               ("FedAWE: server model $x$", awe["server"], awe["p"])]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 3.1), constrained_layout=True)
    for ax, (title, values, p) in zip(np.atleast_1d(axes), panels):
        im = ax.pcolormesh(p, p, values, cmap="RdBu_r", vmin=0.0, vmax=1.0, shading="nearest")
        if len(p) >= 20 and np.ptp(np.abs(values - 0.5)) > 0.05:  # no contours on a coarse grid or a flat field
            cs = ax.contour(p, p, np.abs(values - 0.5), levels=[0.05, 0.2, 0.4], colors="k", linewidths=0.6)
            ax.clabel(cs, fmt=lambda v: f"|bias|={v:g}", fontsize=6)
        ax.set(title=title, xlabel="$p_1$ (client with $u_1=0$)", ylabel="$p_2$ (client with $u_2=1$)", aspect="equal")
        ax.grid(False)
    fig.colorbar(im, ax=axes, shrink=0.85, label=r"$x_{\mathrm{output}}=\lim_t \mathbb{E}[x^t]$  ($x^\star=0.5$)")
    fig.suptitle(f"FedAWE Fig. 2 (Example 1): limit points $\\lim_t\\mathbb{{E}}[\\cdot]$, s={LOCAL_STEPS}, $\\eta_l$={LR}, "
                 "$\\eta_g$=1, exact engines (no sampling)")
    return save(fig, path)


@register("figure", "fedawe-fig2")
def render(ctx):
    """FedAWE Fig. 2: FedAvg's limit E[x^t] over (p1, p2) on Example 1 (both variants), FedAWE beside them."""
    return draw(figure_data(ctx), ctx.figure_path("fedawe-fig2"))
