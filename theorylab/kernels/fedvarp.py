r"""FedVARP: SAGA-style variance reduction with stored client updates (Jhunjhunwala et al. [20]; digest 000 §2.4).

Clients start from the server model and return :math:`\Delta_i^t = x_i^{(t,s)}-x^t`; the server stores
:math:`y_i` (zero at start).  With the table average taken **before** this round's overwrites,

.. math::
    v^t = \frac{1}{|\mathcal A^t|}\sum_{i\in\mathcal A^t}(\Delta_i^t - y_i) + \frac1m\sum_{j=1}^m y_j,\qquad
    x^{t+1} = x^t + \eta_g v^t,\qquad y_i \leftarrow \Delta_i^t\ (i\in\mathcal A^t).

An empty round leaves everything unchanged (the code's zero update).  Memory: :math:`O(md)` per replica.
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.local_sgd import check_local_steps, local_deltas
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.registry import register


@register("algorithm", "fedvarp")
def fedvarp(local_steps: int = 5, lr=0.05, server: dict | None = None) -> Algorithm:
    """FedVARP: active clients' corrections Delta_i - y_i over |A^t| plus the stored table's mean over m."""
    steps, schedule, opt = check_local_steps(local_steps), make_schedule(lr), make_server(server)

    def init(problem, x0):
        return {"x": x0, "table": x0.new_zeros(x0.shape[0], problem.n_clients, x0.shape[1]), **opt.init(x0)}

    def step(state, rnd, problem):
        x, active, table = state["x"], rnd.active, state["table"]
        delta = local_deltas(problem, x, steps, schedule(rnd.t), rnd.streams, active)
        a = active.to(x.dtype)
        w = a / a.sum(1, keepdim=True).clamp(min=1.0)
        v = torch.bmm(w.unsqueeze(1), delta - table).squeeze(1) + table.mean(1)
        x_new, extra = opt.update(state, x, v)
        new = {"x": x_new, "table": torch.where(active.unsqueeze(-1), delta, table), **extra}
        return hold_empty(state, new, active)

    return Algorithm("fedvarp", init, step, lambda state: {"server": state["x"]})
