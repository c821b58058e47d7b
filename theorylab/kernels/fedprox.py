r"""FedProx [EXTERNAL, Li et al. 2020; digest 002 §1.7]: local SGD on the proximal objective
:math:`F_i(y) + \frac\mu2\|y - x_r\|^2`, then :math:`\Delta_r = \frac1{|\mathcal S_r|}\sum_{i\in\mathcal S_r}
(y_i^{(\mathcal I)} - x_r)` (objective-weighted over the active set, :math:`1/M` for uniform weights) and the server
step (default :math:`x_{r+1} = x_r + \Delta_r`).  Seed 002 runs it in Tables 1-3 without reporting :math:`\mu`
[UNCLEAR]; :math:`\mu = 0` is FedAvg.
"""

from __future__ import annotations

import torch

from theorylab.kernels.aggregation import aggregation_weights
from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.corrected_sgd import check_nonnegative, corrected_sgd
from theorylab.kernels.local_sgd import check_local_steps
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.registry import register


@register("algorithm", "fedprox")
def fedprox(local_steps: int = 5, lr=0.05, mu: float = 0.01, server: dict | None = None) -> Algorithm:
    """FedProx: local SGD on F_i(y) + (mu/2)||y - x_r||^2, average over the active set, server step."""
    steps, schedule, opt, mu = check_local_steps(local_steps), make_schedule(lr), make_server(server), \
        check_nonnegative("mu", mu)

    def step(state, rnd, problem):
        x = state["x"]
        end = corrected_sgd(problem, x, steps, schedule(rnd.t), rnd.streams, rnd.active, pull=mu)
        w = aggregation_weights("active", rnd.active, problem.weights, rnd.probs)
        delta = torch.bmm(w.unsqueeze(1), end).squeeze(1) - w.sum(1, keepdim=True) * x
        x_new, extra = opt.update(state, x, delta)
        return hold_empty(state, {"x": x_new, **extra}, rnd.active)

    return Algorithm(f"fedprox[mu={mu:g}]", lambda problem, x0: {"x": x0, **opt.init(x0)}, step,
                     lambda state: {"server": state["x"]})
