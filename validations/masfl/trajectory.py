r"""Shared set-up of the MasFL claims (seed 004; digest 004 §1.4, §3.6): the asynchronous heterogeneous quadratic
(defined beside the figure that draws it, :mod:`theorylab.figures.masfl_curves`) and a round-by-round driver exposing the
kernel's whole state.

The runner records metrics of the evaluated points only; the invariant and geometry claims need every round's state
(the control-variate table, the start snapshots, the arrivals), so :func:`rounds` replays a run config round by round
with the same construction and random streams as :func:`theorylab.runner.run`.
"""

from __future__ import annotations

from typing import Iterator

from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Round
from theorylab.rng import Streams
from theorylab.runner import build_run, build_world


def rounds(config: RunConfig) -> Iterator[tuple[Round, dict, dict]]:
    """Yield ``(round, state before, state after)`` for every round of ``config`` (``clock`` required)."""
    problem, process, algorithm = build_run(config)
    clock = build_world(config, problem.n_clients)["clock"]
    streams = Streams(config.seed, config.replicas, config.device)
    state = algorithm.init(problem, problem.initial_point(config.replicas, streams))
    pstate, cstate = process.init(config.replicas, streams), clock.init(config.replicas, streams)
    for t in range(config.rounds):
        pstate, active = process.draw(pstate, t, streams)
        cstate, arrivals = clock.draw(cstate, t, streams, active)
        rnd = Round(t, arrivals.arrived, process.probabilities(t), streams, arrivals=arrivals)
        before, state = state, algorithm.step(state, rnd, problem)
        yield rnd, before, state
