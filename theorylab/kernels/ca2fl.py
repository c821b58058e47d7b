r"""CA²FL: cached update calibration for buffered asynchronous FL (Wang et al., ICLR 2024, Alg. 2; seed 004 Table 1,
§6 baselines; digest 004 §2.7).  [EXTERNAL]: seed 004 gives no pseudo-code; this follows the digest's reading of
the original, to be checked against it before publishing numbers.

Clients run stale local SGD as in FedBuff (:func:`theorylab.kernels.fedbuff.stale_local_sgd`) and send
:math:`\Delta_i = x_i^{(K)} - x^{t-\tau_i}`.  The server keeps each client's latest update :math:`h_i` (zero at the
start) and, for the arrived set :math:`\mathcal S_t` with mean weights :math:`w_i` (:math:`1/S` for equal objective
weights :math:`\alpha = 1/N`),

.. math::
    v^t = \textstyle\sum_i\alpha_ih_i^t + \sum_{i\in\mathcal S_t} w_i(\Delta_i - h_i^t), \qquad
    x^{t+1} = \mathrm{ServerUpdate}(x^t, v^t), \qquad h_i^{t+1} = \Delta_i\ (i\in\mathcal S_t),\ h_i^t\ \text{else},

the cache mean taken *before* this step's overwrites; ``ServerUpdate`` is :mod:`theorylab.kernels.server`'s (``sgd``
with the global step :math:`\eta_g`).
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Algorithm
from theorylab.kernels.fedbuff import buffered_weights, redispatch, stale_local_sgd, with_snapshots
from theorylab.kernels.local_sgd import check_local_steps
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.registry import register


@register("algorithm", "ca2fl")
def ca2fl(local_steps: int = 5, lr=0.05, server: dict | None = None) -> Algorithm:
    """CA2FL (Wang et al. 2024, EXTERNAL): FedBuff calibrated by every client's cached latest update."""
    steps, schedule, opt = check_local_steps(local_steps), make_schedule(lr), make_server(server)

    def init(problem, x0):
        return {"x": x0, "h": x0.new_zeros(x0.shape[0], problem.n_clients, x0.shape[1]), **opt.init(x0)}

    def step(state, rnd, problem):
        x, h = state["x"], state["h"]
        arr, end = stale_local_sgd(problem, state, rnd, steps, schedule(rnd.t))
        fresh = end - state["start_x"]
        w = buffered_weights(problem, arr, False)
        v = torch.einsum("n,rnd->rd", problem.weights, h) + torch.bmm(w.unsqueeze(1), fresh - h).squeeze(1)
        x_new, extra = opt.update(state, x, v)
        return redispatch(state, {"x": x_new, "h": torch.where(arr.arrived.unsqueeze(-1), fresh, h), **extra}, arr)

    return Algorithm("ca2fl", with_snapshots(init), step, lambda state: {"server": state["x"]})
