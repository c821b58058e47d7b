r"""SCAFFOLD, option II [EXTERNAL, Karimireddy et al. 2020 Alg. 1; digest 002 §1.7].

Every client keeps a control variate :math:`c_i` (zero at start), the server keeps :math:`c` (zero).  Round
:math:`r`, clients :math:`i\in\mathcal S_r`:

.. math::
    y_i \leftarrow y_i - \eta_l\big(g_i(y_i) - c_i + c\big)\ (\mathcal I\text{ times from } x_r),\qquad
    c_i^+ = c_i - c + \frac{x_r - y_i}{\mathcal I\eta_l},

    x_{r+1} = x_r + \eta_g\sum_{i\in\mathcal S_r}w_i(y_i - x_r),\qquad
    c \leftarrow c + \sum_{i\in\mathcal S_r}\alpha_i(c_i^+ - c_i),\qquad c_i\leftarrow c_i^+\ (i\in\mathcal S_r),

with :math:`w_i = 1/M` and :math:`\alpha_i = 1/N` for uniform weights (the :math:`\eta_g` step is the server
optimiser, default :math:`\eta_g = 1`).  Memory: :math:`N d` per replica for the :math:`c_i`.  The local step size
must be constant (the option-II update divides by :math:`\mathcal I\eta_l` of the round).
"""

from __future__ import annotations

import torch

from theorylab.kernels.aggregation import aggregation_weights
from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.corrected_sgd import corrected_sgd
from theorylab.kernels.local_sgd import check_local_steps
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.registry import register


@register("algorithm", "scaffold")
def scaffold(local_steps: int = 5, lr=0.05, server: dict | None = None) -> Algorithm:
    """SCAFFOLD (option II): control variates c_i, c correct every local step; c_i+ = c_i - c + (x - y)/(I eta_l)."""
    steps, schedule, opt = check_local_steps(local_steps), make_schedule(lr), make_server(server)

    def init(problem, x0):
        return {"x": x0, "c": torch.zeros_like(x0), "c_i": x0.new_zeros(x0.shape[0], problem.n_clients, x0.shape[1]),
                **opt.init(x0)}

    def step(state, rnd, problem):
        x, c, c_i, active = state["x"], state["c"], state["c_i"], rnd.active
        eta = schedule(rnd.t)
        end = corrected_sgd(problem, x, steps, eta, rnd.streams, active, shift=c.unsqueeze(1) - c_i)
        c_plus = c_i - c.unsqueeze(1) + (x.unsqueeze(1) - end) / (steps * eta)
        w = aggregation_weights("active", active, problem.weights, rnd.probs)
        delta = torch.bmm(w.unsqueeze(1), end).squeeze(1) - w.sum(1, keepdim=True) * x
        x_new, extra = opt.update(state, x, delta)
        share = active.to(x.dtype) * problem.weights  # alpha_i = 1/N on S_r
        new_c = c + torch.bmm(share.unsqueeze(1), c_plus - c_i).squeeze(1)
        new = {"x": x_new, "c": new_c, "c_i": torch.where(active.unsqueeze(-1), c_plus, c_i), **extra}
        return hold_empty(state, new, active)

    return Algorithm("scaffold", init, step, lambda state: {"server": state["x"]})
