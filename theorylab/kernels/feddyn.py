r"""FedDyn [EXTERNAL, Acar et al. 2021 Alg. 1; digest 002 §1.7], with the client problem solved inexactly by
:math:`\mathcal I` SGD steps from :math:`x_r`.

Clients :math:`i\in\mathcal S_r` minimise :math:`F_i(\theta) - \langle\nabla_i^{\rm prev},\theta\rangle +
\frac\alpha2\|\theta-x_r\|^2` (:math:`\nabla_i^{\rm prev} = 0` at start) and update
:math:`\nabla_i^{\rm prev}\leftarrow\nabla_i^{\rm prev} - \alpha(\theta_i - x_r)`; the server keeps :math:`h`
(zero at start):

.. math::
    h \leftarrow h - \alpha\sum_{i\in\mathcal S_r}\alpha_i(\theta_i - x_r),\qquad
    x_{r+1} = \sum_{i\in\mathcal S_r}w_i\theta_i - \frac1\alpha h,

with :math:`\alpha_i = 1/N` and :math:`w_i = 1/M` for uniform weights.  Seed 002 does not report
:math:`\alpha` [UNCLEAR].  Memory: :math:`Nd` per replica for the :math:`\nabla_i^{\rm prev}`.
"""

from __future__ import annotations

import torch

from theorylab.kernels.aggregation import aggregation_weights
from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.corrected_sgd import corrected_sgd
from theorylab.kernels.local_sgd import check_local_steps
from theorylab.kernels.schedules import make_schedule
from theorylab.registry import register


@register("algorithm", "feddyn")
def feddyn(local_steps: int = 5, lr=0.05, alpha: float = 0.01) -> Algorithm:
    """FedDyn: dynamic regulariser -<grad_prev_i, theta> + (alpha/2)||theta - x_r||^2, server correction h."""
    steps, schedule = check_local_steps(local_steps), make_schedule(lr)
    if not 0 < float(alpha) < float("inf"):
        raise ValueError(f"alpha must be a finite number > 0; got {alpha!r}")
    alpha = float(alpha)

    def init(problem, x0):
        return {"x": x0, "h": torch.zeros_like(x0), "prev": x0.new_zeros(x0.shape[0], problem.n_clients, x0.shape[1])}

    def step(state, rnd, problem):
        x, h, prev, active = state["x"], state["h"], state["prev"], rnd.active
        theta = corrected_sgd(problem, x, steps, schedule(rnd.t), rnd.streams, active, pull=alpha, shift=-prev)
        moved = theta - x.unsqueeze(1)
        share = active.to(x.dtype) * problem.weights  # alpha_i = 1/N on S_r
        new_h = h - alpha * torch.bmm(share.unsqueeze(1), moved).squeeze(1)
        w = aggregation_weights("active", active, problem.weights, rnd.probs)
        new = {"x": torch.bmm(w.unsqueeze(1), theta).squeeze(1) - new_h / alpha, "h": new_h,
               "prev": torch.where(active.unsqueeze(-1), prev - alpha * moved, prev)}
        return hold_empty(state, new, active)

    return Algorithm(f"feddyn[alpha={alpha:g}]", init, step, lambda state: {"server": state["x"]})
