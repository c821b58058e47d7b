r"""Thesis ch. 5 §5.4.3 (seed 001, Tables 5.3-5.4, Fig. D.1) and §5.3 assumptions A15-A19: the p-ablation on the
highly biased partition, and an audit of where Theorem 5.3.1's assumptions fail (digest 001_thesis_ch4-6 §3.3,
§3.6, §6 C9, C11).

C9 runs on the nested linear testbed (the Fig. D.1 analogue of :mod:`figures.thesis_fig_d1`), a labelled
substitution for ResNet-18 on CIFAR: the thesis' accuracies become :math:`\epsilon_{\rm true}` (lower is better).
"""

from __future__ import annotations

import numpy as np

from figures.thesis_ch5_runs import TOTAL
from figures.thesis_fig_d1 import compute, draw
from testbeds.early_exit import PARTITIONS, THESIS_LIKE, layer_sizes, population
from theorylab.cis.aggregation import aggregation_weights
from theorylab.cis.rates import SEVEN_NODE, split_rates
from theorylab.cis.sampling import preset
from theorylab.checks import paired_difference, printed, trend
from theorylab.claims import Evidence, claim
from theorylab.threads import one_thread

SOURCE = "seed 001 Ch. 5 §5.4.3 Tables 5.3-5.4, App. D Fig. D.1; digest 001 ch4-6 §3.6, §6 C9"


@claim("thesis.ch5.p_ablation", SOURCE,
       "On the highly biased partition at 80-15-5, letting stronger nodes also train the small exits (p = 0.2) beats "
       "p = 0 (Table 5.4: +7.9 p.p. CIFAR10, +12.2 p.p. CIFAR100); as p -> 0+ the (1-p)/p variance term of (D.50) "
       "makes small p worse than p = 0.2.", kind="statement")
@one_thread
def p_ablation(ctx) -> Evidence:
    data = compute(ctx, splits=((80, 15, 5),), p_grid=(0.0, 0.1, 0.2))
    curves = data[(80, 15, 5)]["serving"]
    _, exits = SEVEN_NODE
    sizes, lam = layer_sizes(exits, PARTITIONS["highly_biased"], TOTAL), split_rates((80, 15, 5))
    factor = {}
    for p in (0.0, 0.05, 0.1, 0.2, 0.3):
        matrix = preset(exits, p)
        alpha = aggregation_weights(matrix, sizes, lam)
        factor[p] = float(np.sum(np.where(matrix > 0, alpha ** 2 * (1 - matrix) / np.where(matrix > 0, matrix, 1), 0)))
    values = [factor[p] for p in (0.05, 0.1, 0.2, 0.3)]
    checks = [paired_difference("eps_true(p = 0) - eps_true(p = 0.2), Serving Rate", curves[0.0], curves[0.2],
                                note="same datasets and seeds; lower eps_true is better"),
              trend("(D.50)'s sampling factor sum alpha^2 (1-p)/p at p = 0.05, 0.1, 0.2, 0.3", values,
                    bool(np.all(np.diff(values) < 0)) and factor[0.0] == 0.0, "decreasing in p, 0 at p = 0",
                    None, basis="closed_form", note=f"exact; at p = 0 it is {factor[0.0]:g} since p_(i,E_i) = 1"),
              printed("Table 5.4 CIFAR10: Serving Rate p = 0.2 - p = 0 (p.p.)", 49.2 - 41.3, "7.9",
                      note="the thesis' text vs its own table"),
              printed("Table 5.4 CIFAR100: Serving Rate p = 0.2 - p = 0 (p.p.)", 30.1 - 17.9, "12.2",
                      note="the thesis' text vs its own table")]
    return Evidence(checks, figure=str(draw(data, ctx.figure_path("thesis-fig-d1-quick"))), notes=[
        "mean eps_true by p: " + ", ".join(f"{p:g}: {v.mean():.3g}" for p, v in curves.items())
        + f"; Equal Weight (p = 0): {data[(80, 15, 5)]['equal'].mean():.3g} (on this testbed Equal Weight beats "
        "Serving Rate here, unlike Table 5.3: exit 1 holds 5 samples and Serving Rate puts 80% of the weight on it)",
        "small p > 0 gives heavy-tailed errors (importance weights alpha/p up to 1/p): the Monte Carlo means at "
        "p = 0.1 are shown, the ordering against p = 0.2 is checked through the exact factor of (D.50)",
        "Tables 5.3 and 5.4 print different dispersions for the same runs (CIFAR10 +-2.7 vs +-2.6; CIFAR100 +-1.0 "
        "vs +-0.2; digest §7 item 9)"],
        deviations=["nested linear testbed, 150 samples, eps_true instead of CIFAR test accuracy (figures/"
                    "thesis_fig_d1.py)"])


def _cross_entropy(margin: np.ndarray) -> np.ndarray:
    """log(1 + exp(-margin)), stable."""
    return np.logaddexp(0.0, -margin)


@claim("thesis.ch5.assumptions", "seed 001 Ch. 5 §5.3 A15-A19; digest 001 ch4-6 §3.3, §6 C11",
       "Theorem 5.3.1's assumptions cover early-exit training as run in the thesis: each F_{i,e} is mu-strongly "
       "convex on W (A18) and the loss is bounded in [0, M] (A15).", kind="scope", expect="violated",
       because="an exit's loss is flat in the parameters after that exit, so A18 needs a ridge term on every "
                "parameter, and cross-entropy is unbounded on any unbounded W")
@one_thread
def assumptions(ctx) -> Evidence:
    pop = population(THESIS_LIKE)
    eig_ridgeless = float(np.linalg.eigvalsh(pop.hess[0] - THESIS_LIKE.ridge * np.eye(THESIS_LIKE.dim)).min())
    eig_ridge = [float(np.linalg.eigvalsh(h).min()) for h in pop.hess]
    scales = np.array([1.0, 10.0, 100.0, 1000.0])
    ce = _cross_entropy(-scales)  # a sample classified wrongly with margin -t: w = -t y x / ||x||
    checks = [trend("min eigenvalue of the exit-1 population Hessian without ridge", eig_ridgeless,
                    eig_ridgeless > 1e-12, "> 0 (A18)", 0.0, basis="closed_form",
                    note="exit 1 uses only block 1: the Hessian is zero on blocks 2-3"),
              trend("cross-entropy on a misclassified sample along w = -t y x/||x||, t = 1, 10, 100, 1000",
                    ce.tolist(), not bool(np.all(ce >= scales)), "bounded (A15)", scales.tolist(),
                    basis="closed_form", note="log(1 + e^t) >= t for every t (the theory column), so the loss has "
                                              "no bound M on an unbounded W; the measured values follow t")]
    return Evidence(checks, notes=[
        "with the testbed's ridge mu0 = 0.1 every exit is strongly convex: min eigenvalues "
        + ", ".join(f"{v:.3g}" for v in eig_ridge) + " (A18 then holds with mu = mu0)",
        "on the testbed A15 holds on the ball ||w|| <= 3 with bounded Rademacher data (M from loss_bound)",
        "the analysis also assumes every exit serves the population D (D^_e = D), ignoring confidence-based routing: "
        "measured on the image path by thesis.ch5.routing"])
