r"""Thesis Fig. 3.5 (seed 001 §3.5.3, L1168-1180; digest 001 §2.8, §5.4, §8 V26): FedStale with exact participation
probabilities versus FedStale + FedAU, whose online estimate :math:`\omega_i^{(t)}\approx 1/p_i` replaces
:math:`1/p_i` in the fresh weights of (3.9), at :math:`\sigma_g^2 = 0.6` over :math:`p_{\rm avg}/p_{\min}`.

Same two-group quadratic stand-in as Fig. 3.2 (:mod:`theorylab.figures.thesis_fig3_2`).  *Exact*: the exact expected loss
:math:`L_\beta = \mathbb E F(w^T) - F^\star` (enumeration, :mod:`theorylab.exact.fedstale_moments`) with
:math:`\eta_c` tuned per :math:`\beta`.  *Estimated*: the ``fedstale`` kernel run round by round with
``Round.probs`` :math:`= 1/\omega^{(t)}` from FedAU's counters (:mod:`theorylab.participation.estimators`, read
before and updated after each round, as in ``IBM/fedau``), Monte Carlo over replicas with common random numbers
across :math:`\beta`, at the same tuned :math:`\eta_c` as the exact column; its expected loss is estimated as
:math:`L_\beta` plus the mean per-replica difference to the same replicas run with the true :math:`p`
(:func:`estimation_shift`).  FedAU's cutoff is not given in the thesis; we use the FedAU paper's :math:`K = 50`,
where :math:`\omega_i\to(1-(1-p_i)^K)/p_i` (:func:`fedau_limit`) is biased low once :math:`1/p_{\min}` nears
:math:`K`.  On this stand-in group 2's centres are symmetric (:math:`\pm s`) and FedAU's errors are alike in law for
its two clients, so on average they leave :math:`w^\star = 0` in place and act mainly through the variance.
The thesis' table (accuracy gains in points on its CNN) is printed beside ours.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.thesis_fig3_2 import BETAS, LOCAL_STEPS, horizon, p_min_of, shift_of, summarise, tuned_losses, two_groups
from theorylab.figures.thesis_fig3_4 import SIGMA_G2
from theorylab.kernels.algorithm import Round
from theorylab.kernels.fedstale import fedstale
from theorylab.participation.estimators import fedau_limit
from theorylab.plotting import pyplot, save
from theorylab.registry import build, register
from theorylab.rng import Streams
from theorylab.runner import autograd_off

RATIOS = (1.5, 3.0, 5.5, 10.5, 25.5, 50.5)
CUTOFF = 50  # FedAU paper's cutoff; the thesis does not state its own
# Thesis Fig. 3.5 (L1176-1177): ratio -> (beta_opt, Delta_0, Delta_1) in accuracy points, exact and with FedAU.
PAPER_EXACT = {1.5: (1.0, 0.64, 0.0), 3.0: (0.8, 0.75, 0.31), 5.5: (0.8, 0.24, 0.49), 10.5: (0.5, 0.33, 0.96),
               25.5: (0.5, 0.14, 1.96), 50.5: (0.5, 0.19, 0.12)}
PAPER_FEDAU = {1.5: (1.0, 0.61, 0.0), 3.0: (0.8, 1.64, 1.35), 5.5: (0.5, 1.93, 6.29), 10.5: (0.5, 0.52, 5.32),
               25.5: (0.2, 0.31, 4.36), 50.5: (0.2, 0.16, 2.17)}


def final_gaps(beta: float, lr: float, ratio: float, replicas: int, seed: int, estimated: bool,
               cutoff: int = CUTOFF) -> np.ndarray:
    """Per-replica :math:`F(w^T) - F^\\star` of the ``fedstale`` kernel (known-p weights, zero memory) on the
    stand-in at ``ratio``, weighted by the true :math:`p` or by FedAU's :math:`1/\\omega^{(t)}` (the kernel's
    ``weights="fedau"``)."""
    if replicas < 2:
        raise ValueError(f"replicas must be >= 2; got {replicas}")
    p_min = p_min_of(ratio)
    problem = two_groups(shift_of(SIGMA_G2))
    process = build("participation", {"name": "bernoulli", "p": [1.0, 1.0, p_min, p_min]})
    algorithm = fedstale(beta=beta, local_steps=LOCAL_STEPS, lr=lr, weights="fedau" if estimated else "known_p",
                         cutoff=cutoff)
    streams = Streams(seed, replicas)
    state = algorithm.init(problem, problem.initial_point(replicas, streams))
    pstate = process.init(replicas, streams)
    with autograd_off(problem):  # as the runner runs it
        for t in range(horizon(p_min)):
            pstate, active = process.draw(pstate, t, streams)
            state = algorithm.step(state, Round(t, active, process.probabilities(t), streams), problem)
    return problem.metrics(state["x"])["gap"].numpy().astype(np.float64)


def estimation_shift(beta: float, lr: float, ratio: float, replicas: int, seed: int) -> np.ndarray:
    r"""Per-replica :math:`F(w^T_{\rm FedAU}) - F(w^T_{p})`: the same replicas (masks and noise) run with FedAU's
    weights and with the true :math:`p`.  Its mean plus the exact :math:`L_\beta` estimates FedAU's expected loss
    (a control variate with known mean: most of the gradient noise cancels in the difference)."""
    return (final_gaps(beta, lr, ratio, replicas, seed, True)
            - final_gaps(beta, lr, ratio, replicas, seed, False))


def estimated_cell(losses: dict[float, tuple[float, float]], ratio: float, replicas: int, seed: int) -> dict:
    r"""FedAU's column at ``ratio``: per beta the estimate :math:`L_\beta + \overline{\rm shift}` at the exact
    column's tuned eta_c, and beta_opt, Delta_0, Delta_1 of those estimates."""
    means = {beta: (loss + float(estimation_shift(beta, lr, ratio, replicas, seed).mean()), lr)
             for beta, (loss, lr) in losses.items()}
    return summarise(means)


def compute(ratios=RATIOS, replicas: int = 1000, seed: int = 0) -> dict:
    """Per ratio: the exact column (:func:`theorylab.figures.thesis_fig3_2.summarise` of the tuned exact losses, with the
    losses) and the estimated column (:func:`estimated_cell`), plus FedAU's limiting weight for p_min."""
    out = {"ratios": list(ratios), "exact": [], "estimated": [], "limit": []}
    for ratio in ratios:
        losses = tuned_losses(shift_of(SIGMA_G2), p_min_of(ratio), BETAS)
        out["exact"].append({**summarise(losses), "losses": losses})
        out["estimated"].append(estimated_cell(losses, ratio, replicas, seed))
        p_min = p_min_of(ratio)
        out["limit"].append(float(fedau_limit(p_min, CUTOFF)) * p_min)  # omega / (1/p): 1 = unbiased
    return out


def _row(cells) -> list[str]:
    return [f"β={c['beta']:g}\nΔ0={c['delta0']:.1f}%\nΔ1={c['delta1']:.1f}%" for c in cells]


def _paper_row(table: dict, ratios) -> list[str]:
    return [f"β={table[r][0]:g}\nΔ0={table[r][1]:.2f}\nΔ1={table[r][2]:.2f}" if r in table else "" for r in ratios]


def draw(data: dict, path):
    plt = pyplot()
    ratios = data["ratios"]
    rows = {"ours, exact p": _row(data["exact"]), "ours, FedAU (K = 50)": _row(data["estimated"]),
            "thesis, exact (pp)": _paper_row(PAPER_EXACT, ratios),
            "thesis, FedAU (pp)": _paper_row(PAPER_FEDAU, ratios)}
    fig, ax = plt.subplots(figsize=(1.5 * len(ratios) + 2.5, 4.6), constrained_layout=True)
    ax.axis("off")
    table = ax.table(cellText=list(rows.values()), rowLabels=list(rows), colLabels=[f"{r:g}" for r in ratios],
                     loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    table.scale(1.0, 3.6)
    limits = ", ".join(f"{r:g}: {v:.2f}" for r, v in zip(ratios, data["limit"]))
    ax.set_title("Fig. 3.5 stand-in, σ_g² = 0.6, columns p_avg / p_min. Ours: Δ = loss reduction (%), quadratic;"
                 f" thesis: accuracy gain (pp), CNN\nFedAU limit ω·p_min at K = 50 ({limits})", fontsize=8)
    return save(fig, path)


@register("figure", "thesis-fig3-5")
def render(ctx):
    """Thesis Fig. 3.5: beta_opt, Delta_0, Delta_1 with exact vs FedAU-estimated p (stand-in), beside the thesis'."""
    data = compute(ctx.pick(RATIOS[1:4:2], RATIOS), ctx.pick(200, 2000), ctx.seed)
    return draw(data, ctx.figure_path("thesis-fig3-5"))
