r"""Per-round states of a kernel run: the driver behind the pathwise lemma checks of seed 002 (digest 002 §4.8).

The runner records only the metrics of a kernel's points; the lemma checks need the server optimiser's
:math:`m_r, v_r, \hat v_r` and the instrumentation the ``afga`` kernel keeps in its state, round by round.
:func:`states` steps the kernel exactly as :func:`theorylab.runner.run` does (same streams, same draw order).
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Round
from theorylab.runner import build_run
from theorylab.rng import Streams


def states(config: RunConfig, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The state entries ``keys`` after every round, stacked as ``(replicas, rounds, ...)`` numpy arrays."""
    problem, process, algorithm = build_run(config)
    streams = Streams(config.seed, config.replicas, config.device)
    state = algorithm.init(problem, problem.initial_point(config.replicas, streams))
    pstate = process.init(config.replicas, streams)
    trail = {key: [] for key in keys}
    for t in range(config.rounds):
        pstate, active = process.draw(pstate, t, streams)
        state = algorithm.step(state, Round(t, active, process.probabilities(t), streams), problem)
        for key in keys:
            trail[key].append(state[key].detach().to("cpu", torch.float64).numpy())
    return {key: np.stack(values, axis=1) for key, values in trail.items()}
