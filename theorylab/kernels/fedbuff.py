r"""FedBuff: buffered asynchronous local SGD (Nguyen et al. 2022; seed 004 Table 1 and §6 "FedBuff delay
mechanism"; digest 004 §2.7).  [EXTERNAL]: seed 004 gives no pseudo-code for it; this follows the original.

A client started from the model :math:`x^{t-\tau_i}` it was dispatched with (:mod:`theorylab.kernels.stale_start`)
runs :math:`K` local SGD steps (:func:`theorylab.kernels.local_sgd.local_sgd`) and sends
:math:`\Delta_i = x_i^{(K)} - x^{t-\tau_i}`; the server applies the buffered arrivals :math:`\mathcal S_t`,

.. math::
    \Delta^t = \sum_{i\in\mathcal S_t} w_i\, s(\tau_i)\,\Delta_i, \qquad x^{t+1} = \mathrm{ServerUpdate}(x^t,\Delta^t),

with :math:`w` the objective-weighted mean over the arrived clients (:math:`1/S` for equal weights), the optional
staleness factor :math:`s(\tau) = 1/\sqrt{1+\tau}` (``staleness_weight=True``, as in the original; else
:math:`s = 1`), and the FedOpt server of :mod:`theorylab.kernels.server` (``sgd`` with :math:`\eta_g`).

Without a clock every active client arrives fresh and everyone is re-dispatched, and FedBuff is FedAvg over the
active clients with the same server, bit for bit (``tests/test_async_baselines.py``).
"""

from __future__ import annotations

import torch

from theorylab.kernels.aggregation import aggregation_weights
from theorylab.kernels.algorithm import Algorithm, Arrivals, hold_empty
from theorylab.kernels.local_sgd import check_local_steps, local_sgd
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.kernels.stale_start import arrivals, dispatch, mean_delta, snapshot
from theorylab.registry import register


def stale_local_sgd(problem, state: dict, rnd, steps: int, lr: float) -> tuple[Arrivals, torch.Tensor]:
    """The round's arrivals and every client's local SGD end point from its start snapshot ``state["start_x"]``."""
    arr = arrivals(rnd)
    return arr, local_sgd(problem, state["start_x"], steps, lr, rnd.streams, arr.arrived)


def buffered_weights(problem, arr: Arrivals, staleness_weight: bool) -> torch.Tensor:
    r""":math:`w_i s(\tau_i)` ``(R, N)``: the weighted mean over the arrived clients, times :math:`1/\sqrt{1+\tau_i}`
    when ``staleness_weight``."""
    w = aggregation_weights("active", arr.arrived, problem.weights, None)
    if staleness_weight:
        w = w / torch.sqrt(1.0 + arr.staleness.to(w.dtype))
    return w


def with_snapshots(init):
    """Wrap a FedAvg-type ``init`` so that the state also holds every client's start snapshot ``start_x``."""
    return lambda problem, x0: {**init(problem, x0), "start_x": snapshot(x0, problem.n_clients)}


def redispatch(old: dict, new: dict, arr: Arrivals) -> dict:
    """Hold the server state of replicas with no arrival, then send the resulting model to the dispatched clients."""
    server = hold_empty({k: old[k] for k in new}, new, arr.arrived)
    return {**server, "start_x": dispatch(old["start_x"], server["x"], arr.dispatched)}


@register("algorithm", "fedbuff")
def fedbuff(local_steps: int = 5, lr=0.05, staleness_weight: bool = False, server: dict | None = None) -> Algorithm:
    """FedBuff (Nguyen et al. 2022, EXTERNAL): buffered stale local-SGD updates, optional 1/sqrt(1+tau) weights."""
    steps, schedule, opt = check_local_steps(local_steps), make_schedule(lr), make_server(server)

    def step(state, rnd, problem):
        x = state["x"]
        arr, end = stale_local_sgd(problem, state, rnd, steps, schedule(rnd.t))
        w = buffered_weights(problem, arr, bool(staleness_weight))
        x_new, extra = opt.update(state, x, mean_delta(x, state["start_x"], end, w, arr.staleness))
        return redispatch(state, {"x": x_new, **extra}, arr)

    init = with_snapshots(lambda problem, x0: {"x": x0, **opt.init(x0)})
    return Algorithm("fedbuff", init, step, lambda state: {"server": state["x"]})
