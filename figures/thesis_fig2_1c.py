r"""Thesis Fig. 2.1c stand-in (seed 001 §2.5.2, L870–877; digest 001 §5.1–5.2, §8 V27): test accuracy vs round of
CA-Fed (:math:`\bar\kappa^2 = 1`), AdaFed, Unbiased, More available and F3AST — the thesis' CIFAR-10 panel, where
CA-Fed leads the second best, AdaFed, by +1.32 pp — on scikit-learn's digits (quick) or Fashion-MNIST (full).

The runs are Fig. 2.1a's (:mod:`theorylab.figures.thesis_fig2_1`) with the testbed swapped (:func:`swap`): the
configurations of :func:`~theorylab.figures.thesis_fig2_1.leaf_config` for the specs of
:func:`~theorylab.figures.thesis_fig2_1.method_specs`, so the same four availability blocks (:math:`\pi = 0.9 / 0.1`,
:math:`\lambda_2 = 0.9` or :math:`\sim\mathcal N(0, 0.01^2)`), :math:`N = 20` quick / 100 full, :math:`T = 100` quick /
200 full, an evaluation every 10 rounds, one common step setting (:math:`K = 5`, :math:`\eta_c = 0.05`,
:math:`\eta_s = 1`), Unbiased / AdaFed / More available with :math:`q = \alpha/\pi` (0 on the less available for More
available), F3AST with budget :math:`0.45N` and :math:`\beta = 1/T`, CA-Fed with oracle :math:`(\pi, \lambda)`,
:math:`\beta = 1`, :math:`\tau = 0`, bias factor 4.  What changes (labelled in the title):

* SUBSTITUTION for CIFAR-10, which cannot be obtained here (shared/spec/deps_and_data.md §1.3): in quick mode
  scikit-learn's digits (no download, as every quick stand-in), in full mode Fashion-MNIST (Debian
  ``dataset-fashion-mnist``, ``make data``); labels over clients by Dirichlet(0.5) (the thesis' :math:`\varsigma = 0.5`),
  batch 32 (thesis App. G.A.2), :math:`\alpha_i = |D_i|/|D|` (the author's code, digest §5.1 [?]; Synthetic LEAF's
  weights in Fig. 2.1a);
* model: on CUDA FedAWE's Table 6 CIFAR CNN (2 conv + 3 FC) on the images zero-padded to 32x32 and tiled to 3
  channels (the thesis' CIFAR CNN, "two convolutional and one fully connected layers", has unstated widths, digest
  §5.1); an MLP (one hidden layer of 64) on a CPU-only machine and in quick mode;
* quick: the digits' train and test splits, 3 replicas; full: Fashion-MNIST's 60k / 10k splits and the thesis' 10
  runs (the MLP full run takes hours on a CPU);
* CA-Fed's :math:`\hat F_i^\star` is the running minimum of Alg. 3 line 4 (Fig. 2.1a's
  :data:`~theorylab.figures.thesis_fig2_1.RUNNING_MIN` mode) on the network's own one-minibatch losses (the first
  local step's minibatch): a network has no known minima for the oracle mode, and its losses are noisy without the
  noise Fig. 2.1a adds to exact losses;
* the metric is the server model's test accuracy (the thesis: the :math:`\alpha`-weighted mean of the clients' test
  accuracies); the step sizes are Fig. 2.1a's common ones, not Table A.2's CIFAR10 row (0.03 with server steps
  1 / 3 / 0.3, tuned on CIFAR-10).
"""

from __future__ import annotations

import dataclasses

import torch

from theorylab.config import RunConfig
from theorylab.figures.thesis_fig2_1 import COLORS, accuracy_curves, clients, draw, horizon, method_specs, replicas
from theorylab.registry import build, register
from theorylab.threads import one_thread

METHODS = tuple(COLORS)  # Fig. 2.1's legend: CA-Fed, AdaFed, Unbiased, More available, F3AST


@dataclasses.dataclass(frozen=True)
class StandIn:
    problem: dict  # image testbed spec with clients(ctx) clients and dataset seed 0 (Fig. 2.1a's replicas share it)
    replicas: int
    device: str
    label: str  # the deviations, as the title prints them


def stand_in(ctx) -> StandIn:
    """Quick: the digits MLP (CPU); full: Fashion-MNIST with the CIFAR CNN on CUDA, else the MLP."""
    base = {"name": "fmnist", "clients": clients(ctx), "partition": "dirichlet", "alpha": 0.5, "batch_size": 32,
            "weights": "size", "seed": 0}
    if ctx.quick:
        return StandIn({**base, "name": "digits", "model": "mlp", "eval_train": None, "eval_test": None}, 3, "cpu",
                       "QUICK STAND-IN: scikit-learn digits (8x8), MLP 64-64-10")
    cuda = torch.cuda.is_available()
    model = "cnn_cifar" if cuda else "mlp"
    return StandIn({**base, "model": model, "eval_train": 2000, "eval_test": None}, replicas(ctx),
                   "cuda" if cuda else "cpu",
                   "SUBSTITUTION: Fashion-MNIST (60k / 10k), " + ("FedAWE's CIFAR CNN" if cuda else "MLP 784-64-10 "
                                                                  "(CPU-only machine)"))


def swap(config: RunConfig, s: StandIn) -> RunConfig:
    """Fig. 2.1a's run ``config`` on the stand-in: testbed, replicas, device and float32 replaced, nothing else."""
    return dataclasses.replace(config, problem=s.problem, replicas=s.replicas, device=s.device, dtype="float32")


def compute(ctx, run=None) -> dict:
    """``{"rounds": eval rounds, label: (replicas, evals) test accuracy in %}`` for Fig. 2.1's five methods on the
    stand-in; ``run`` (default ``ctx.run``) maps a config to a trace."""
    s, rounds, run = stand_in(ctx), horizon(ctx), run or ctx.run
    alpha = build("testbed", s.problem).weights.double().cpu().numpy()
    specs = method_specs(alpha, rounds, {"f_star": "running_min"}, others=METHODS[1:])
    return accuracy_curves(ctx, rounds, specs, lambda config: run(swap(config, s)))


@register("figure", "thesis-fig2-1c")
@one_thread
def render(ctx):
    """Thesis Fig. 2.1c stand-in: Fig. 2.1a's five methods and availability classes on digits / Fashion-MNIST for
    CIFAR-10."""
    s = stand_in(ctx)
    title = (f"Thesis Fig. 2.1c (CIFAR-10, CNN, N = 100, T = 200, 10 runs) on a stand-in:\n{s.label},\nN = "
             f"{clients(ctx)}, T = {horizon(ctx)}, {s.replicas} replicas, Dir(0.5) labels, Fig. 2.1a's steps "
             "(K = 5, eta = 0.05)")
    return draw(compute(ctx), ctx.figure_path("thesis-fig2-1c"), title,
                "test accuracy (%) of the server model")
