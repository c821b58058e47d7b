"""Independent Bernoulli participation with a (possibly non-stationary) schedule :math:`p_i^t`.

:math:`\\mathbb 1\\{i\\in\\mathcal A^t\\} \\sim \\mathrm{Bernoulli}(p_i^t)`, independent across
clients and rounds: FedAWE's A1 (seed 000 §3) and the thesis' Assumption 9 (seed 001 Ch. 3).
"""

from __future__ import annotations

import numpy as np

from theorylab.participation.base import bernoulli_mask, check_probabilities
from theorylab.participation.dynamics import Schedule
from theorylab.registry import register


class Bernoulli:
    memoryless = True

    def __init__(self, schedule: Schedule):
        self.schedule = schedule
        self.n_clients = len(schedule.base)

    def probabilities(self, t: int) -> np.ndarray:
        return self.schedule(t)

    def init(self, replicas, streams):
        return None

    def draw(self, state, t, streams):
        return None, bernoulli_mask(self.probabilities(t), streams)


@register("participation", "bernoulli")
def bernoulli(p, dynamics: str = "stationary", gamma: float = 0.3, period: int = 20, low: float = 0.4,
              delta0: float = 0.1) -> Bernoulli:
    """Independent Bernoulli(p_i^t) with stationary / staircase / sine / interleaved-sine dynamics."""
    return Bernoulli(Schedule(check_probabilities("p", p), dynamics, gamma, period, low, delta0))
