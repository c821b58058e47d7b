r"""Helpers for training runs of the network testbeds: step size, evaluation point, progress display.

* :func:`paper_lr0`: the local step size :math:`\eta_0` FedAWE's Table 7 selected for an algorithm;
* :func:`exposed_points` and :func:`choose_point`: the models an algorithm can report, and the one it
  reports by default (the point its theory evaluates);
* :func:`final_accuracy`: accuracy averaged over the last evaluations (FedAWE reports the mean over
  the last 50 rounds, digest 000 §6.1);
* :class:`TrainProgress`: an ``on_record`` callback for :func:`theorylab.runner.run` showing round,
  accuracy and throughput (samples/s) on a tqdm bar, or one line per evaluation off a terminal.
"""

from __future__ import annotations

import sys
import time
from types import SimpleNamespace

import numpy as np
import torch

from theorylab.registry import build
from theorylab.trace import Trace

# FedAWE Table 7 (seed 000 App. J; digest 000 §6.1): eta_0 of the local schedule eta_0 / sqrt(t/10 + 1) selected
# by the paper's grid search, the same for SVHN, CIFAR-10 and CINIC-10 (eta_g = 1 throughout); keyed by kernel name.
TABLE7_LR0 = {"fedavg[active]": 0.05, "fedavg[known_p]": 0.1, "fedavg[all]": 0.05, "fedau": 0.05, "f3ast": 0.05,
              "fedawe": 0.1, "mifa": 0.05, "fedvarp": 0.05}


def paper_lr0(algorithm: dict) -> float | None:
    r"""Table 7's :math:`\eta_0` for the algorithm spec, or ``None`` where the table has no such algorithm."""
    return TABLE7_LR0.get(build("algorithm", algorithm).name)


def exposed_points(algorithm: dict, clients: int) -> list[str]:
    """Names of the evaluation points the algorithm spec exposes with ``clients`` clients.

    They are read from ``points(init(problem, x0))`` on a stand-in problem with one parameter: a kernel's
    point names depend on the number of clients (e.g. FedAWE's ``client<i>``), never on the model, so no
    data or network is needed to know them before training.  The stand-in's client losses and minima are zero
    (CA-Fed's ``init`` reads them)."""
    kernel = build("algorithm", algorithm)
    standin = SimpleNamespace(n_clients=clients, dim=1, weights=torch.full((clients,), 1.0 / clients,
                              dtype=torch.float64), dtype=torch.float64, device=torch.device("cpu"),
                              client_values=lambda x: np.zeros((len(x), clients)), c=np.zeros(clients))
    return sorted(kernel.points(kernel.init(standin, torch.zeros(1, 1, dtype=torch.float64))))


def choose_point(algorithm: dict, clients: int, requested: str | None = None) -> str:
    r"""The model to report: ``requested`` if the algorithm exposes it, else a ``ValueError`` listing the points
    it does expose; by default the point its theory evaluates, the all-client mean
    :math:`\bar x^t = \frac1m\sum_i x_i^t` where the kernel keeps one (FedAWE, whose server model is
    biased toward the more available clients, digest 000 §4), else the server model :math:`x^t`."""
    points = exposed_points(algorithm, clients)
    if requested is None:
        return "mean" if "mean" in points else "server"
    if requested not in points:
        raise ValueError(f"algorithm {algorithm['name']!r} has no evaluation point {requested!r}; "
                         f"its points are {', '.join(points)}")
    return requested


def final_accuracy(trace: Trace, point: str, window: int, split: str = "test") -> np.ndarray:
    """Per-replica accuracy (%) averaged over the last ``window`` evaluations (inf for diverged replicas)."""
    if int(window) != window or window < 1:
        raise ValueError(f"window must be an integer >= 1; got {window}")
    return 100.0 * trace.metrics[f"{point}.{split}_acc"][:, -int(window):].mean(axis=1)


class TrainProgress:
    """``on_record`` callback: round, mean test accuracy of ``point`` and samples/s since the last evaluation
    (wall clock, the evaluation included).

    ``samples_per_participation`` is local steps x batch size, so throughput counts the training samples
    of active clients only.
    """

    def __init__(self, rounds: int, samples_per_participation: int, point: str = "server", desc: str = "",
                 enabled: bool | None = None):
        self.rounds, self.samples, self.point, self.desc = rounds, samples_per_participation, point, desc
        self.bar = None
        if enabled is None:
            enabled = sys.stderr.isatty()
        if enabled:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=rounds, desc=desc, unit="round", file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                pass
        self.last = (0, 0, time.perf_counter())

    def __call__(self, t: int, metrics: dict[str, np.ndarray], participations: int) -> None:
        last_t, last_p, last_time = self.last
        now = time.perf_counter()
        rate = (participations - last_p) * self.samples / max(now - last_time, 1e-9)
        self.last = (t, participations, now)
        accuracy = 100.0 * float(np.mean(metrics[f"{self.point}.test_acc"]))
        text = f"acc={accuracy:.2f}%" + (f" samples/s={rate:,.0f}" if t > last_t else "")
        if self.bar is not None:
            self.bar.update(t - last_t)
            self.bar.set_postfix_str(text)
            if t >= self.rounds:
                self.bar.close()
        else:
            print(f"{self.desc} round {t}/{self.rounds} {text}", file=sys.stderr, flush=True)
