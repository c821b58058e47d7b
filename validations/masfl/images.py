r"""Seed 004 Figs. 1–2 (§6; digest 004 §4, §5.2 check 15): on images, MasFL and AdaMasFL > CA²FL, FADAS in test
accuracy under the FedBuff delay mechanism, at small scale.

The paper prints no accuracy, so the only targets are the orderings it states (MasFL and AdaMasFL above each
baseline; it does not order AdaMasFL against MasFL, so that difference is only reported); they are tested on paired
per-run
differences of final test accuracy (:func:`theorylab.checks.paired_difference`): the four algorithms of a run see
the same partition, initial model, clock and minibatch stream.  Step sizes: AdaMasFL takes Theorem 4.1's
problem-free :math:`(\beta,\gamma,\eta)` (:func:`theorylab.bounds.masfl.steps_thm41`), as the paper says it does;
Theorem 3.1 needs :math:`L`, unknown for a network (and infeasible at these :math:`T`, ``masfl.experiments_in_scope``),
so MasFL takes the same :math:`\beta` with :math:`\gamma = \eta\cdot 4` of a hand-picked :math:`\eta`; CA²FL takes
local SGD :math:`\eta_l` with :math:`\eta_g = 1`, FADAS a public re-implementation's defaults (digest §2.7) with the
same :math:`\eta_l`.  None is tuned on the test set.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from theorylab.figures.masfl_curves import mode_b
from theorylab.testbeds.training import final_accuracy
from theorylab.bounds.masfl import steps_thm41
from theorylab.checks import paired_difference
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.threads import one_thread


@dataclasses.dataclass(frozen=True)
class Setup:
    problem: dict
    clients: int
    buffer: int
    concurrency: int
    rounds: int
    local_steps: int
    replicas: int
    seeds: tuple[int, ...]
    device: str
    deviation: str


QUICK = Setup({"name": "digits", "model": "logistic", "partition": "dirichlet", "alpha": 0.5, "batch_size": 32,
               "eval_train": None}, clients=20, buffer=5, concurrency=10, rounds=24, local_steps=4, replicas=3,
              seeds=(0,), device="cpu",
              deviation="QUICK-MODE STAND-IN: scikit-learn digits (8x8) with the multinomial-logistic model, 20 "
                        "clients, S = 5, M_c = 10, T = 24, K = 4, 3 replicas of one seed; the paper: FMNIST with a "
                        "3-conv + 2-FC CNN, N = 100, S = 10, M_c = 20, T = 600.")
_CUDA = torch.cuda.is_available()
FULL = Setup({"name": "fmnist", "model": "cnn_cifar" if _CUDA else "mlp", "partition": "dirichlet", "alpha": 0.5,
              "batch_size": 100, "eval_train": 2000}, clients=100, buffer=10, concurrency=20, rounds=600,
             local_steps=12, replicas=1, seeds=(0, 1, 2), device="cuda" if _CUDA else "cpu",
             deviation="SUBSTITUTION: FMNIST with FedAWE's CIFAR CNN on CUDA, an MLP (784-64-10) on a CPU-only "
                       "machine (the CNN's 600 rounds x 4 methods x 3 seeds take hours on two cores); the paper's "
                       "3-conv + 2-FC layout is not given, digest §4; K = 12 minibatches of 100 per job (2 epochs of "
                       "600 samples under an iid split), 3 seeds.")
ORDERINGS = (("MasFL", "CA2FL"), ("MasFL", "FADAS"), ("AdaMasFL", "CA2FL"), ("AdaMasFL", "FADAS"))


def specs(s: Setup) -> dict[str, dict]:
    """The four algorithms of Figs. 1-2 with the step sizes of the module docstring."""
    beta, gamma, eta = steps_thm41(s.buffer, s.local_steps, s.rounds)
    local = {"local_steps": s.local_steps}
    return {"AdaMasFL": {"name": "adamasfl", "beta": beta, "gamma": gamma, "eta": eta, **local},
            "MasFL": {"name": "masfl", "beta": beta, "gamma": 0.4, "eta": 0.1, **local},
            "CA2FL": {"name": "ca2fl", "lr": 0.1, **local},
            "FADAS": {"name": "fadas", "lr": 0.1, "server_lr": 1e-3, **local}}


@claim("masfl.image_ordering", "seed 004 §6 Figs. 1-2, App. E.1; digest 004 §4, §5.2 check 15", "Under the FedBuff "
       "delay mechanism on non-iid images, MasFL and AdaMasFL reach a higher final test accuracy than CA2FL and FADAS.",
       kind="reproduction", expect="inconclusive", where="§6, Fig. 1 and its paragraph",
       quote=r"The results show that our proposed methods, MasFL and AdaMasFL, significantly outperform the baselines, "
             r"CA<sup>2</sup>FL and FADAS, in both convergence speed and test accuracy.",
       because="NO POWER in quick mode: 3 paired runs of 24 server steps on digits; at the family level split over "
               "4 orderings the t-interval (2 degrees of freedom) spans tens of standard errors",
       defence="Nothing is claimed either way: the quick stand-in (digits, logistic model) is too small to separate "
               "the methods. A 'not reproduced' would in any case need the baselines' step sizes tuned as the paper "
               "says ('optimally selected'), which these hand-picked ones are not.", partial=("15",))
@one_thread
def image_ordering(ctx) -> Evidence:
    s = ctx.with_seeds(ctx.pick(QUICK, FULL))
    acc: dict[str, list] = {}
    for seed in s.seeds:
        for label, spec in specs(s).items():
            config = RunConfig(problem={**s.problem, "clients": s.clients, "seed": seed},
                               participation={"name": "bernoulli", "p": [1.0] * s.clients},
                               clock=mode_b(s.clients, s.concurrency, s.buffer), algorithm=spec, rounds=s.rounds,
                               replicas=s.replicas, seed=seed, every=s.rounds // 4, device=s.device, dtype="float32")
            acc.setdefault(label, []).append(final_accuracy(ctx.run(config), "server", 2))
    acc = {k: np.concatenate(v) for k, v in acc.items()}
    checks = [paired_difference(f"{a} > {b} (final test accuracy)", acc[a], acc[b],
                                "Figs. 1-2: MasFL and AdaMasFL 'significantly outperform' CA2FL and FADAS.",
                                unit=" (accuracy points)") for a, b in ORDERINGS]
    summary = "; ".join(f"{k} {v.mean():.2f} ± {v.std(ddof=1):.2f}" for k, v in acc.items())
    gap = acc["AdaMasFL"] - acc["MasFL"]
    return Evidence(checks, notes=[f"Test accuracy % (mean ± sample std over {len(next(iter(acc.values())))} runs, "
                                   f"mean of the last 2 of 5 evaluations): {summary}.",
                                   f"AdaMasFL - MasFL (not ordered by the paper): {gap.mean():+.2f} on average.",
                                   f"Dirichlet(0.5) labels, every client available, U(0, 20) delays per job, R2."],
                    deviations=[s.deviation, "MasFL's gamma, eta and the baselines' step sizes are hand-picked, not "
                                "the paper's (which it does not print)."])
