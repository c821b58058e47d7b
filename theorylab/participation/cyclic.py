"""Cyclic participation: clients split into ``groups`` contiguous blocks; block ``t mod groups`` is active.

Deterministic, so it is a (degenerate) independent Bernoulli process with
:math:`p_i^t \\in \\{0, 1\\}`; every client is active once every ``groups`` rounds.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.participation.base import check_clients
from theorylab.memory import require
from theorylab.registry import register


class Cyclic:
    memoryless = True

    def __init__(self, n_clients: int, groups: int):
        self.n_clients = check_clients(n_clients)
        require(8 * self.n_clients, f"cyclic participation with n_clients={n_clients} (a group label per client)")
        if int(groups) != groups or not 1 <= groups <= self.n_clients:
            raise ValueError(f"groups must be an integer in [1, n_clients={self.n_clients}]; got {groups}")
        self.groups = int(groups)
        self.group_of = np.concatenate([np.full(len(b), g) for g, b in
                                        enumerate(np.array_split(np.arange(self.n_clients), self.groups))])

    def probabilities(self, t: int) -> np.ndarray:
        return (self.group_of == t % self.groups).astype(np.float64)

    def init(self, replicas, streams):
        return None

    def draw(self, state, t, streams):
        mask = torch.as_tensor(self.probabilities(t) > 0, device=streams.device)
        return None, mask.expand(streams.replicas, self.n_clients).clone()


@register("participation", "cyclic")
def cyclic(n_clients: int, groups: int) -> Cyclic:
    """Deterministic cyclic participation over contiguous client groups."""
    return Cyclic(n_clients, groups)
