r"""A run's asynchronous schedule without its model: who arrives at each server step, how stale, who starts a job,
and when (seed 004 §3.1; digest 004 §1.3–1.4).

The clocks draw only from the ``participation`` and ``delay`` streams and never look at the model, so as long as
the run's testbed and kernel draw nothing from these two streams, replaying the run's participation process and
clock with the run's seed gives exactly the schedule the runner fed the kernel (:func:`clock_schedule`, tested
against the runner's recorded ``clock.*`` metrics); :func:`staleness_histogram` counts the staleness of every
applied update.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.validation import integer


class Schedule(NamedTuple):
    arrived: np.ndarray  # (R, T, N) bool: updates applied at server step t
    staleness: np.ndarray  # (R, T, N) int64: tau_i^t of the applied updates (0 elsewhere)
    dispatched: np.ndarray  # (R, T, N) bool: clients starting a job from theta^{t+1}
    time: np.ndarray  # (R, T) simulated time of server step t
    metrics: dict[str, np.ndarray]  # clock metric -> (R, T), after each step
    state: Any  # the clock's state after the last step


def clock_schedule(participation: dict, clock, rounds: int, replicas: int = 1, seed: int = 0,
                   device: str = "cpu") -> Schedule:
    """Replay a run's participation process and clock (the specs, size and seed of its
    :class:`~theorylab.config.RunConfig`) for ``rounds`` server steps; ``clock`` may also be a built clock (a
    reading of a clock that is not registered, e.g. a variant refill policy)."""
    process = build("participation", participation)
    model = build("clock", clock) if isinstance(clock, dict) else clock
    if process.n_clients != model.n_clients:
        raise ValueError(f"clock has {model.n_clients} clients but the participation process has {process.n_clients}")
    streams = Streams(seed, replicas, device)
    pstate, state = process.init(replicas, streams), model.init(replicas, streams)
    steps, recorded = [], []
    for t in range(integer("rounds", rounds, 1)):
        pstate, available = process.draw(pstate, t, streams)
        state, arrivals = model.draw(state, t, streams, available)
        fields = (arrivals.arrived, arrivals.staleness, arrivals.dispatched, arrivals.time)
        steps.append([v.cpu().numpy() for v in fields])
        if hasattr(model, "metrics"):
            recorded.append({k: v.cpu().numpy() for k, v in model.metrics(state).items()})
    arrived, staleness, dispatched, time = (np.stack(field, axis=1) for field in zip(*steps))
    metrics = {k: np.stack([r[k] for r in recorded], axis=1) for k in (recorded[0] if recorded else {})}
    return Schedule(arrived, staleness, dispatched, time, metrics, state)


def staleness_histogram(schedule: Schedule) -> np.ndarray:
    """``counts[r, tau]``: how many updates replica ``r`` applied with staleness ``tau`` (``(R, tau_max + 1)``)."""
    R = schedule.arrived.shape[0]
    top = int(schedule.staleness[schedule.arrived].max(initial=0))
    counts = np.zeros((R, top + 1), dtype=np.int64)
    for r in range(R):
        counts[r] = np.bincount(schedule.staleness[r][schedule.arrived[r]], minlength=top + 1)
    return counts

