r"""MIFA: memory-augmented aggregation of the latest update of every client (Gu et al. [14]; digest 000 §2.4).

Clients start from the server model and return :math:`\Delta_i^t = x_i^{(t,s)}-x^t`.  The server stores
:math:`Y_i` (zero at start), overwrites :math:`Y_i\leftarrow\Delta_i^t` for :math:`i\in\mathcal A^t` and averages
over **all** clients,

.. math:: x^{t+1} = x^t + \frac{\eta_g}{m}\sum_{i=1}^m Y_i ,

also when :math:`\mathcal A^t=\emptyset` (the stored updates are applied again), as in the official code.
Memory: :math:`O(md)` per replica.
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Algorithm
from theorylab.kernels.local_sgd import check_local_steps, local_deltas
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.registry import register


@register("algorithm", "mifa")
def mifa(local_steps: int = 5, lr=0.05, server: dict | None = None) -> Algorithm:
    """MIFA: keep every client's latest update (zero initialised) and apply their average over all m clients."""
    steps, schedule, opt = check_local_steps(local_steps), make_schedule(lr), make_server(server)

    def init(problem, x0):
        return {"x": x0, "table": x0.new_zeros(x0.shape[0], problem.n_clients, x0.shape[1]), **opt.init(x0)}

    def step(state, rnd, problem):
        x, active = state["x"], rnd.active
        delta = local_deltas(problem, x, steps, schedule(rnd.t), rnd.streams, active)
        table = torch.where(active.unsqueeze(-1), delta, state["table"])
        x_new, extra = opt.update(state, x, table.mean(1))
        return {"x": x_new, "table": table, **extra}

    return Algorithm("mifa", init, step, lambda state: {"server": state["x"]})
