r"""The FedAvg family: local SGD from the server model, weighted aggregation, FedOpt server step.

Seed 001 Alg. 1–2 and eqs. (2.2)–(2.3), (3.2), (3.5); seed 000 §2.4 baselines.  Round :math:`t`:

.. math::
    \Delta_i^t = x_i^{(t,s)} - x^t \ \ (s \text{ local SGD steps from } x^t), \qquad
    \Delta^t = \sum_i w_i(\mathcal A^t)\,\Delta_i^t, \qquad
    x^{t+1} = \mathrm{ServerUpdate}(x^t, \Delta^t),

with :math:`w` from :mod:`theorylab.kernels.aggregation` and the server step from
:mod:`theorylab.kernels.server`.  An empty round leaves the state unchanged.
Special cases: FedAvg over active / over all / with known :math:`p_i^t` (FedAWE's baselines),
the thesis' generic weighted scheme (``aggregation="all"`` with weights ``q``), FedAdam, FedAMS.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.kernels.aggregation import aggregation_weights, check_aggregation
from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.local_sgd import check_local_steps, local_sgd
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.registry import register
from theorylab.validation import floats


def resolve_weights(q, problem) -> torch.Tensor:
    """``q`` as a tensor on the problem's device (default: the objective weights)."""
    if q is None:
        return problem.weights
    arr = floats("q", q)
    if arr.shape != (problem.n_clients,) or np.any(arr < 0):
        raise ValueError(f"q must be {problem.n_clients} non-negative weights; got {q!r}")
    return torch.as_tensor(arr, dtype=problem.dtype, device=problem.device)


@register("algorithm", "fedavg")
def fedavg(local_steps: int = 5, lr=0.05, aggregation: str = "active", q=None, server: dict | None = None) -> Algorithm:
    """FedAvg family: s local SGD steps, weighted aggregation (active / all / known_p), FedOpt server step."""
    steps, kind = check_local_steps(local_steps), check_aggregation(aggregation)
    schedule, opt = make_schedule(lr), make_server(server)

    def init(problem, x0):
        resolve_weights(q, problem)
        return {"x": x0, **opt.init(x0)}

    def step(state, rnd, problem):
        x = state["x"]
        start = x.unsqueeze(1).expand(-1, problem.n_clients, -1)
        end = local_sgd(problem, start, steps, schedule(rnd.t), rnd.streams, rnd.active)
        w = aggregation_weights(kind, rnd.active, resolve_weights(q, problem), rnd.probs)
        delta = torch.bmm(w.unsqueeze(1), end).squeeze(1) - w.sum(1, keepdim=True) * x  # sum_i w_i (end_i - x)
        x_new, extra = opt.update(state, x, delta)
        return hold_empty(state, {"x": x_new, **extra}, rnd.active)

    return Algorithm(f"fedavg[{kind}]", init, step, lambda state: {"server": state["x"]})
