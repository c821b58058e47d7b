r"""FedAU: FedAvg with online inverse-participation weights (Wang & Ji [55]; seed 000 §7; digest 000 §2.4).

Clients start from the server model :math:`x^t` and return :math:`\Delta_i^t = x_i^{(t,s)}-x^t`;
the server divides by all :math:`m` clients:

.. math:: x^{t+1} = x^t + \frac{\eta_g}{m}\sum_{i\in\mathcal A^t}\omega_i^t\,\Delta_i^t .

Per client the server keeps a gap counter :math:`c_i` (initially 0) and the completed intervals
:math:`I_i` (here their sum and number).  In round :math:`t` (official code, ``IBM/fedau/main.py``):

* :math:`i\in\mathcal A^t`: :math:`\omega_i^t = \mathrm{mean}(I_i)`, or 1 while :math:`I_i` is empty; *then*
  append :math:`c_i+1` to :math:`I_i` and set :math:`c_i\leftarrow 0`;
* :math:`i\notin\mathcal A^t`: :math:`c_i\leftarrow c_i+1`; if :math:`c_i\ge K`, append :math:`K` and reset
  :math:`c_i\leftarrow0` (cut-off, :math:`K = 50` in the paper).

:math:`\omega_i\to\approx 1/p_i` when :math:`K\gg 1/p_i`.  An empty round leaves :math:`x` unchanged (zero update)
while the counters advance, as in the code.
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Algorithm
from theorylab.kernels.local_sgd import check_local_steps, local_deltas
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.participation.estimators import check_cutoff, fedau_weights, init_fedau, update_fedau
from theorylab.registry import register


@register("algorithm", "fedau")
def fedau(local_steps: int = 5, lr=0.05, cutoff: int = 50, server: dict | None = None) -> Algorithm:
    """FedAU: updates weighted by the mean observed participation interval (cut-off K), divided by m."""
    steps, schedule, opt = check_local_steps(local_steps), make_schedule(lr), make_server(server)
    K = check_cutoff(cutoff)

    def init(problem, x0):
        return {"x": x0, **init_fedau(x0.shape[0], problem.n_clients, x0.dtype, x0.device), **opt.init(x0)}

    def step(state, rnd, problem):
        x, active = state["x"], rnd.active
        delta = local_deltas(problem, x, steps, schedule(rnd.t), rnd.streams, active)
        w = active.to(x.dtype) * fedau_weights(state) / problem.n_clients
        x_new, extra = opt.update(state, x, torch.bmm(w.unsqueeze(1), delta).squeeze(1))
        return {"x": x_new, **update_fedau(state, active, K), **extra}

    return Algorithm("fedau", init, step, lambda state: {"server": state["x"]})
