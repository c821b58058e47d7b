r"""Thesis ch. 5 §5.4.3 (seed 001, Tables 5.3-5.4, Fig. D.1) and §5.3 assumptions A15-A19: the p-ablation on the
highly biased partition, and an audit of where Theorem 5.3.1's assumptions fail (digest 001_thesis_ch4-6 §3.3,
§3.6, §6 C9, C11).

C9 runs on the nested linear testbed (the Fig. D.1 analogue of :mod:`theorylab.figures.thesis_fig_d1`), a labelled
substitution for ResNet-18 on CIFAR: the thesis' accuracies become :math:`\epsilon_{\rm true}` (lower is better).
The assumptions are audited inside the theorem's own domain (a convex compact :math:`\mathcal W`) on the trained
early-exit MLP of :mod:`theorylab.validations.thesis.fedcis.images`: relabelling a block's hidden units leaves every exit loss
unchanged, so a convex :math:`\mathcal W` holding a model and its relabelled copy holds their midpoint, where
convexity (A18 with :math:`\mu = 0`) can be tested exactly.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from theorylab.figures.thesis_ch5_runs import TOTAL
from theorylab.figures.thesis_fig_d1 import compute, draw
from theorylab.testbeds.early_exit import PARTITIONS, layer_sizes
from theorylab.testbeds.early_exit_net import exit_logits, unflatten
from theorylab.cis.aggregation import SAMPLING_READINGS, aggregation_weights, sampling_factor
from theorylab.cis.rates import SEVEN_NODE, split_rates
from theorylab.cis.sampling import preset
from theorylab.checks import across, at_most, auxiliary, equal, paired_difference, printed, trend
from theorylab.claims import Evidence, claim
from theorylab.threads import one_thread
from theorylab.validations.thesis.fedcis.images import HIDDEN, image_runs

SOURCE = "seed 001 Ch. 5 §5.4.3 Tables 5.3-5.4, App. D Fig. D.1; digest 001 ch4-6 §3.6, §6 C9"
GRID = (0.05, 0.1, 0.2, 0.3)  # p > 0, where (D.50)'s sampling term lives
RIDGE = {"weight decay outside F_{i,e} (its definition, §5.3.3)": 0.0,
         "weight decay 5e-4 inside F_{i,e} as a ridge (§5.4.1)": 5e-4}


@claim("thesis.ch5.p_ablation", SOURCE,
       "On the highly biased partition at 80-15-5, letting stronger nodes also train the small exits (p = 0.2) beats "
       "p = 0 (Table 5.4: +7.9 p.p. CIFAR10, +12.2 p.p. CIFAR100).", kind="statement",
       where="§5.4.3 'Enabling Node Collaboration through Probabilities p', Table 5.4",
       quote="These experiments clearly show that increasing p significantly improves the overall inference accuracy "
             "by enabling stronger nodes to support weaker ones during training.", checks=("C9",))
@one_thread
def p_ablation(ctx) -> Evidence:
    data = compute(ctx, splits=((80, 15, 5),), p_grid=(0.0, 0.1, 0.2))
    curves = data[(80, 15, 5)]["serving"]
    _, exits = SEVEN_NODE
    sizes, lam = layer_sizes(exits, PARTITIONS["highly_biased"], TOTAL), split_rates((80, 15, 5))
    factor = {}
    for reading in SAMPLING_READINGS:
        for p in (0.0, *GRID):
            matrix = preset(exits, p)
            factor[reading, p] = float(np.sum(aggregation_weights(matrix, sizes, lam) ** 2
                                              * sampling_factor(matrix, reading)))
    checks = [paired_difference("eps_true(p = 0) - eps_true(p = 0.2), Serving Rate", curves[0.0], curves[0.2],
                                note="same datasets and seeds; lower eps_true is better"),
              auxiliary(across("(D.50)'s sampling factor sum alpha^2 f(p) at p = " + ", ".join(map(str, GRID)),
                               {f"f = {label}": trend(f"f = {label}", [round(factor[reading, p], 4) for p in GRID],
                                                      bool(np.all(np.diff([factor[reading, p] for p in GRID]) < 0)),
                                                      "decreasing in p", None, basis="closed_form")
                                for reading, label in (("printed", "(1-p)/p as printed"),
                                                       ("fixed", "1/p (Lemma D.3 repaired)"))})),
              printed("Table 5.4 CIFAR10: Serving Rate p = 0.2 - p = 0 (p.p.)", 49.2 - 41.3, "7.9", basis="digest",
                      note="the digest's difference of the table's cells (§6 C9)"),
              printed("Table 5.4 CIFAR100: Serving Rate p = 0.2 - p = 0 (p.p.)", 30.1 - 17.9, "12.2", basis="digest",
                      note="the digest's difference of the table's cells (§6 C9)")]
    return Evidence(checks, figure=str(draw(data, ctx.figure_path("thesis-fig-d1-quick"))), notes=[
        "mean eps_true by p: " + ", ".join(f"{p:g}: {v.mean():.3g}" for p, v in curves.items())
        + f"; Equal Weight (p = 0): {data[(80, 15, 5)]['equal'].mean():.3g} (on this testbed Equal Weight beats "
        "Serving Rate here, unlike Table 5.3: exit 1 holds 5 samples and Serving Rate puts 80% of the weight on it)",
        "small p > 0 gives heavy-tailed errors (importance weights alpha/p up to 1/p): the Monte Carlo means at "
        "p = 0.1 are shown; the variance term of (D.50) grows as p -> 0+ under both readings of its factor (the "
        "digest's C9 trade-off; at p = 0 the printed factor is "
        f"{factor['printed', 0.0]:g} since p_(i,E_i) = 1, the repaired one {factor['fixed', 0.0]:.3g})",
        "Tables 5.3 and 5.4 print different dispersions for the same runs (CIFAR10 +-2.7 vs +-2.6; CIFAR100 +-1.0 "
        "vs +-0.2; digest §7 item 9)"],
        deviations=["nested linear testbed, 150 samples, eps_true instead of CIFAR test accuracy (figures/"
                    "thesis_fig_d1.py)"])


def exit1_loss(theta: torch.Tensor, data, shapes, ridge: float) -> float:
    """Exit 1's mean cross-entropy on ``data`` at the flat model ``theta`` (float64), plus ``ridge``/2 ||theta||^2."""
    x, y = data
    theta = theta.double()
    logits = exit_logits(theta[None], x.double()[None], shapes)[0][0]
    return float(torch.nn.functional.cross_entropy(logits, y)) + ridge / 2 * float(theta @ theta)


def relabel(theta: torch.Tensor, shapes, perm: torch.Tensor) -> torch.Tensor:
    """The same network with block 1's hidden units relabelled by ``perm`` (W0's columns, b0, H0's and W1's rows)."""
    p = {name: v[0].clone() for name, v in unflatten(theta[None], shapes).items()}
    p["W0"], p["b0"], p["H0"], p["W1"] = p["W0"][:, perm], p["b0"][perm], p["H0"][perm], p["W1"][perm]
    return torch.cat([p[name].reshape(-1) for name, _ in shapes])


def later_blocks(theta: torch.Tensor, shapes) -> torch.Tensor:
    """A unit direction on every parameter after exit 1 (blocks 2-3 and their heads)."""
    mask = torch.cat([torch.full((math.prod(shape),), float(name[1:] != "0")) for name, shape in shapes])
    return mask.to(theta.dtype) / mask.norm()


@claim("thesis.ch5.assumptions", "seed 001 Ch. 5 §5.3 A16, A18, §5.4; digest 001 ch4-6 §3.3, §6 C11",
       "The experiments that the thesis says validate its analysis (early-exit networks trained with cross-entropy "
       "and weight decay 5e-4) satisfy Theorem 5.3.1's A16 and A18: every exit loss F_{i,e} is mu-strongly convex "
       "on a convex compact W that contains the minimisers.", kind="scope",
       where="§5.3.3 Assumptions 16 and 18; §5.4 (introduction) and §5.4.1",
       quote=r"Assumption 16. *The hypothesis space $\mathcal{W} \subset \mathbb{R}^d$ is convex and compact with "
             r"diameter $\text{diam}(\mathcal{W})$, and contains the minimizers … are μ -strongly convex: for all "
             r"\mathbf{v} and \mathbf{w} in \mathcal{W} … we present experimental results that validate our "
             r"theoretical analysis in Section 5.3.3 … employing the ResNet-18 model architecture",
       expect="violated", severity="scope",
       because="exit 1's loss of the trained early-exit MLP (the image-path stand-in) takes the same value 0.29 at "
               "the model and at its copy with block 1's hidden units relabelled, and 0.98 at their midpoint, "
               "inside any convex W that holds both (e.g. the ball of the model's norm): not convex, under both "
               "readings of weight decay. Every network with interchangeable hidden units or channels, ResNet-18's "
               "blocks included, has such relabelled copies of each minimiser, so no W that contains the minimisers "
               "admits A18. The flat directions of an exit's loss (parameters after the exit) break A18 only if "
               "weight decay is not part of F_{i,e}: that check depends on the reading",
       defence="The thesis calls A16-A19 standard in federated optimisation and offers the theorem as guidance for "
               "choosing the exit weights, not as a guarantee for ResNet-18; the cross-entropy bound A15 does hold on "
               "a compact W with bounded images. The verdict stands as a scope finding: §5.4 presents the ResNet-18 "
               "experiments as validating the analysis and explains them by its error terms, while A18 fails for "
               "every such network inside the theorem's own domain; unlike Ch. 4, which calls its MNIST CNN "
               "non-convex, Ch. 5 does not say so", checks=("C11",))
@one_thread
def assumptions(ctx) -> Evidence:
    runs = image_runs(ctx.seed, ctx.quick, ctx.extra_seeds)
    shapes, data = runs["shapes"], runs["train"]
    theta = runs["models"][f"Serving Rate {runs['splits'][0]}"][0].double()
    twin = relabel(theta, shapes, torch.roll(torch.arange(HIDDEN), 1))
    v = later_blocks(theta, shapes)
    convex, flat = {}, {}
    for label, ridge in RIDGE.items():
        value, mid = exit1_loss(theta, data, shapes, ridge), exit1_loss((theta + twin) / 2, data, shapes, ridge)
        convex[label] = at_most(label, mid, (value + exit1_loss(twin, data, shapes, ridge)) / 2, basis="closed_form",
                                note="A18 with mu = 0 at the midpoint of the model and its relabelled copy")
        curvature = (exit1_loss(theta + v, data, shapes, ridge) + exit1_loss(theta - v, data, shapes, ridge)
                     - 2 * value)
        flat[label] = trend(label, curvature, curvature > 1e-9, "> 0 (A18: some mu > 0)", 0.0, basis="closed_form",
                            note="second difference of F_{i,1} along a unit direction on the parameters after exit 1")
    plain = exit1_loss(theta, data, shapes, 0.0)
    checks = [across("F_{i,1}((w + Pw)/2) <= (F_{i,1}(w) + F_{i,1}(Pw))/2, P relabelling block 1's hidden units",
                     convex),
              auxiliary(equal("F_{i,1}(Pw) - F_{i,1}(w): relabelling leaves the network unchanged",
                              exit1_loss(twin, data, shapes, 0.0) - plain, 0.0, 1e-12 * plain, basis="closed_form",
                              note="tolerance: rounding of the summation order")),
              across("curvature of F_{i,1} along the parameters after exit 1", flat)]
    return Evidence(checks, notes=[
        f"trained early-exit MLP ({HIDDEN} hidden units per block, Serving Rate 80-15-5, seed {ctx.seed}), exit-1 "
        f"cross-entropy on the training set; ||w|| = {float(theta.norm()):.4g}, ||w - Pw|| = "
        f"{float((theta - twin).norm()):.4g}; P is a cyclic shift of block 1's units",
        "A15 is not tested: on a compact W with bounded inputs the cross-entropy is bounded by its maximum over "
        "W x Z, so it holds inside the theorem's domain",
        "the nested linear testbed of the other Ch. 5 claims adds a ridge mu0 = 0.1 to every exit, so there A18 holds",
        "the analysis also assumes every exit serves the population D (D^_e = D): thesis.ch5.routing"],
        deviations=["the early-exit MLP of thesis.ch5.table_orderings on digits (quick) / Fashion-MNIST (full) "
                    "stands in for ResNet-18 on CIFAR; the relabelling argument applies to any network with two "
                    "interchangeable units"])
