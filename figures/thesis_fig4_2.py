r"""Thesis Fig. 4.2 (seed 001 §4.4, MNIST; digest 001 §2.7): training loss and test accuracy vs round of lossless
FedAvg, DMA-PL, UDMA-PL and UPGA-PL, label-skewed clients (two classes each, Achituve et al. 2021).

SUBSTITUTIONS (labelled in the title): quick mode runs scikit-learn's 8x8 digits with the multinomial-logistic model
(CPU, float32); full mode the 10k MNIST digits of ``mnist10k`` with FedAWE's CNN on CUDA (an MLP on a CPU-only
machine) — the thesis' 2-conv + 2-FC CNN has unstated widths.  Otherwise as Fig. 4.1 (:mod:`theorylab.figures.thesis_fig4_1`):
:math:`N = 10`, :math:`\alpha_i = |D_i|/|D|`, :math:`K = 5`, batch 32, one constant step :math:`10^{-1}` (the grid's
largest) for every method.  Loss :math:`q = 0.9` on clients :data:`LOSSY` = 0, 1, 2, 5, 6 and 0.1 on the others:
the ``classes`` partition gives clients :math:`i` and :math:`i+5` the same two labels, so this 5/5 split puts four
labels entirely behind lossy links (which clients the thesis made lossy is unstated; with clients 5-9 lossy every
label keeps a reliable copy and DMA-PL's bias costs little).  Quick: :math:`T = 30`, 4 replicas
of one seed; full: :math:`T = 150`, 10 seeds.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.figures.thesis_fig4_1 import curves, draw
from theorylab.registry import register
from theorylab.threads import one_thread

LOSSY = (0, 1, 2, 5, 6)
SPREAD = (5, 6, 7, 8, 9)  # the other reading of "a group": every label keeps a reliable copy


def losses(lossy=LOSSY) -> list[float]:
    """Total loss probability per client: 0.9 on the clients ``lossy``, 0.1 on the others."""
    return [0.9 if i in lossy else 0.1 for i in range(10)]


def setup(ctx) -> dict:
    """The image problem, step and run size of the figure in ``ctx``'s mode."""
    cuda = torch.cuda.is_available()
    if ctx.quick:
        problem = {"name": "digits", "model": "logistic", "eval_train": None}
        return {"problem": problem, "rounds": 30, "replicas": 4, "seeds": ctx.seeds((ctx.seed,)), "device": "cpu",
                "label": "QUICK STAND-IN: sklearn digits, logistic"}
    problem = {"name": "mnist10k", "model": "cnn_cifar" if cuda else "mlp", "eval_train": 2000}
    return {"problem": problem, "rounds": 150, "replicas": 1, "seeds": ctx.seeds(range(10)),
            "device": "cuda" if cuda else "cpu", "label": f"10k MNIST, {problem['model']} (substitution)"}


def compute(ctx, lossy=LOSSY) -> tuple[dict, dict]:
    """``({method: [trace per seed]}, setup)`` with the clients ``lossy`` behind q = 0.9 links."""
    s = setup(ctx)
    runs: dict[str, list] = {}
    for seed in s["seeds"]:
        problem = {**s["problem"], "clients": 10, "partition": "classes", "classes_per_client": 2, "batch_size": 32,
                   "weights": "size", "seed": seed}
        for label, trace in curves(ctx, problem, 0.1, s["rounds"], s["replicas"], seed, "float32", s["device"],
                                   losses(lossy)).items():
            runs.setdefault(label, []).append(trace)
    return runs, s


def final(runs: dict, metric: str = "test_acc", window: int = 3) -> dict[str, np.ndarray]:
    """Per-run value of ``metric`` averaged over the last ``window`` evaluations, runs of all seeds stacked."""
    return {label: np.concatenate([t.metrics[f"server.{metric}"][:, -window:].mean(1) for t in traces])
            for label, traces in runs.items()}


@register("figure", "thesis-fig4-2")
@one_thread
def render(ctx):
    """Thesis Fig. 4.2: loss and test accuracy of FedAvg (lossless), DMA-PL, UDMA-PL, UPGA-PL on label-skewed digits."""
    runs, s = compute(ctx)
    title = (f"{s['label']}, N = 10 (2 classes each), q = 0.9 on clients {LOSSY}, else 0.1, K = 5, eta = 0.1, "
             f"T = {s['rounds']}")
    return draw(runs, (("train_loss", "training loss"), ("test_acc", "test accuracy")), title,
                ctx.figure_path("thesis-fig4-2"))
