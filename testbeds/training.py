"""Helpers for training runs of the network testbeds: where to read a model's accuracy, and a progress display.

* :func:`evaluation_point`: the model a trace reports for an algorithm (``server``, or e.g. FedAWE's
  all-client mean);
* :func:`final_accuracy`: accuracy averaged over the last evaluations (FedAWE reports the mean over
  the last 50 rounds, digest 000 §6.1);
* :class:`TrainProgress`: an ``on_record`` callback for :func:`theorylab.runner.run` showing round,
  accuracy and throughput (samples/s) on a tqdm bar, or one line per evaluation off a terminal.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from theorylab.trace import Trace


def evaluation_point(trace: Trace, preferred: str = "server") -> str:
    """``preferred`` if the trace has it, else its only point besides ``server``."""
    points = sorted({name.split(".")[0] for name in trace.metrics})
    if preferred in points:
        return preferred
    others = [p for p in points if p != "server"]
    if len(others) == 1:
        return others[0]
    raise ValueError(f"evaluation point {preferred!r} not in the trace; it has {points}")


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
