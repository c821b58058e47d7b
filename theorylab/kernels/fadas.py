r"""FADAS: federated adaptive asynchronous optimisation — AMSGrad on buffered stale updates, with a delay-adaptive
server step (Wang et al., ICML 2024, arXiv 2407.18365; seed 004 Table 1, §6 baselines; digest 004 §2.7).
[EXTERNAL]: seed 004 gives no pseudo-code; this follows the digest's reading of the original, and the defaults
(:math:`\beta_1 = 0.9,\ \beta_2 = 0.99,\ \epsilon = 10^{-8},\ \eta = 10^{-3},\ \tau_c = 1`) are a public
re-implementation's, not seed 004's.

With FedBuff's clients and mean :math:`\Delta^t = \sum_{i\in\mathcal S_t}w_i\Delta_i` (:mod:`theorylab.kernels.fedbuff`):

.. math::
    m^t = \beta_1m^{t-1} + (1-\beta_1)\Delta^t,\quad v^t = \beta_2v^{t-1} + (1-\beta_2)(\Delta^t)^2,\quad
    \hat v^t = \max(\hat v^{t-1}, v^t),\quad x^{t+1} = x^t + \eta_t\,\frac{m^t}{\sqrt{\hat v^t}+\epsilon},

    \eta_t = \eta\ \ \text{if}\ \tau^t_{\max}\le\tau_c,\qquad \eta_t = \min(\eta, 1/\tau^t_{\max})\ \ \text{otherwise}
    \quad(\tau^t_{\max} = \max_{i\in\mathcal S_t}\tau_i;\ \text{``delay_adaptive=False``: } \eta_t = \eta).

The AMSGrad direction is :func:`theorylab.kernels.server.adam` (``amsgrad=True``) evaluated with unit step from
the origin, :math:`0 + 1\cdot m/(\sqrt{\hat v}+\epsilon)`, which is exactly the direction; seed 004 does not say
whether its runs used the delay-adaptive step (digest §2.7, [UNCLEAR]), hence the toggle.
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Algorithm
from theorylab.kernels.fedbuff import buffered_weights, redispatch, stale_local_sgd, with_snapshots
from theorylab.kernels.local_sgd import check_local_steps
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import adam
from theorylab.kernels.stale_start import mean_delta
from theorylab.registry import register
from theorylab.validation import real


def delay_adaptive_lr(eta: float, tau_c: float, staleness: torch.Tensor, arrived: torch.Tensor) -> torch.Tensor:
    r""":math:`\eta_t` per replica ``(R, 1)``: :math:`\eta` while the largest arrived staleness is at most
    :math:`\tau_c`, else :math:`\min(\eta, 1/\tau^t_{\max})`."""
    tau = torch.where(arrived, staleness, torch.zeros_like(staleness)).max(1, keepdim=True).values.to(torch.float64)
    return torch.where(tau <= tau_c, torch.full_like(tau, eta), (1.0 / tau.clamp(min=1.0)).clamp(max=eta))


@register("algorithm", "fadas")
def fadas(local_steps: int = 5, lr=0.05, server_lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.99,
          eps: float = 1e-8, delay_adaptive: bool = True, tau_c: float = 1.0) -> Algorithm:
    """FADAS (Wang et al. 2024, EXTERNAL): AMSGrad server on buffered stale updates with a delay-adaptive step."""
    steps, schedule = check_local_steps(local_steps), make_schedule(lr)
    eta, opt = real("server_lr", server_lr, 0.0, open_low=True), adam(lr=1.0, beta1=beta1, beta2=beta2, eps=eps, amsgrad=True)
    tau_c = real("tau_c", tau_c, 0.0)

    def step(state, rnd, problem):
        x = state["x"]
        arr, end = stale_local_sgd(problem, state, rnd, steps, schedule(rnd.t))
        delta = mean_delta(x, state["start_x"], end, buffered_weights(problem, arr, False), arr.staleness)
        direction, extra = opt.update(state, torch.zeros_like(x), delta)
        rate = delay_adaptive_lr(eta, tau_c, arr.staleness, arr.arrived).to(x.dtype) if delay_adaptive else eta
        return redispatch(state, {"x": x + rate * direction, **extra}, arr)

    init = with_snapshots(lambda problem, x0: {"x": x0, **opt.init(x0)})
    return Algorithm("fadas", init, step, lambda state: {"server": state["x"]})
