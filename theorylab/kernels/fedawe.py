r"""FedAWE: adaptive innovation echoing and implicit gossiping (seed 000 Algorithm 1; digest 000 §2.1).

Round :math:`t` with active set :math:`\mathcal A^t`; every client :math:`i` keeps its own model
:math:`x_i^t` and last-active round :math:`\tau_i(t)` (:mod:`theorylab.staleness`):

.. math::
    G_i^t &= x_i^t - x_i^{(t,s)} \quad (s \text{ local SGD steps from the client's own } x_i^t),\\
    x_i^{t\dagger} &= x_i^t - \eta_g\,(t-\tau_i(t))\,G_i^t \quad (i\in\mathcal A^t,\ \text{echo}),\\
    x^{t+1} &= \frac{1}{|\mathcal A^t|}\sum_{i\in\mathcal A^t} x_i^{t\dagger},\qquad
    x_i^{t+1} = x^{t+1}\ (i\in\mathcal A^t),\quad x_i^{t+1} = x_i^t\ (i\notin\mathcal A^t),

i.e. :math:`X^{t+1} = X^{t\dagger}W^{(t)}` with :math:`W^{(t)}` of eq. (4) (:mod:`theorylab.mixing`).
An empty round changes nothing (paper line 862).  Evaluation points: ``"server"`` (:math:`x^t`) and
``"mean"`` (:math:`\bar x^t = \frac1m\sum_i x_i^t`, where the theory and the official code evaluate).

Options:

* ``clip_norm`` (default off): the official code's server step (digest §2.1 item 1),
  :math:`x^{t+1} = \frac{1}{|\mathcal A|}\sum_{\mathcal A}x_i^t + \eta_g\,\mathrm{clip}_c\big(-\frac{1}{|\mathcal A|}
  \sum_{\mathcal A}(t-\tau_i(t))G_i^t\big)` with :math:`\mathrm{clip}_c(v) = v\min(1, c/\|v\|_2)`; without a clip this
  is the line above.
* ``echo=False`` fixes the multiplier to 1; ``broadcast="all"`` sends :math:`x^{t+1}` to every client (immediate
  broadcast).  Together, with :math:`\eta_g = 1`, FedAWE is FedAvg over active clients: the switches exist for that
  equivalence test and for ablations.
* ``client_points=True`` also exposes every client model as a point ``"client<i>"``, so a run records
  :math:`\|x_i^t-x^\star\|^2` and the consensus error :math:`\frac1m\sum_i\|x_i^t-\bar x^t\|^2 =
  \frac1m\sum_i\|x_i^t-x^\star\|^2 - \|\bar x^t-x^\star\|^2` (Corollary 3).
* ``keep_innovation=True`` stores the round's :math:`\mathbb 1\{i\in\mathcal A^t\}G_i^t` as ``state["innovation"]``
  for the analysis of the auxiliary sequence (eq. (19); :mod:`theorylab.bounds.fedawe_terms`).

The state is ``x`` ``(R, d)``, ``xi`` ``(R, m, d)``, ``tau`` ``(R, m)`` (int64): :math:`O(Rmd)` memory.
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.local_sgd import check_local_steps, local_sgd
from theorylab.kernels.schedules import make_schedule
from theorylab.registry import register
from theorylab.staleness import echo_multiplier, initial_last_active, update_last_active

BROADCASTS = ("active", "all")


def clip_rows(v: torch.Tensor, max_norm: float) -> torch.Tensor:
    """:math:`v\\min(1, c/\\|v\\|_2)` for every row of ``v`` ``(R, d)``."""
    norm = torch.linalg.vector_norm(v, dim=-1, keepdim=True)
    return v * torch.clamp(max_norm / norm.clamp(min=torch.finfo(v.dtype).tiny), max=1.0)


@register("algorithm", "fedawe")
def fedawe(local_steps: int = 5, lr=0.05, server_lr: float = 1.0, clip_norm: float | None = None, echo: bool = True,
           broadcast: str = "active", client_points: bool = False, keep_innovation: bool = False) -> Algorithm:
    """FedAWE (Alg. 1): clients restart from their own model, echo t - tau_i(t), only active clients get x^{t+1}."""
    steps, schedule = check_local_steps(local_steps), make_schedule(lr)
    if not server_lr > 0:
        raise ValueError(f"server_lr must be > 0; got {server_lr}")
    if clip_norm is not None and not clip_norm > 0:
        raise ValueError(f"clip_norm must be > 0 or None (no clip); got {clip_norm}")
    if broadcast not in BROADCASTS:
        raise ValueError(f"broadcast must be one of {BROADCASTS}; got {broadcast!r}")

    def init(problem, x0):
        R, m = x0.shape[0], problem.n_clients
        state = {"x": x0.clone(), "xi": x0.unsqueeze(1).expand(R, m, -1).clone(),
                 "tau": initial_last_active(R, m, x0.device)}
        if keep_innovation:
            state["innovation"] = torch.zeros_like(state["xi"])
        return state

    def step(state, rnd, problem):
        xi, tau, active = state["xi"], state["tau"], rnd.active
        a = active.to(xi.dtype)
        G = local_sgd(problem, xi, steps, schedule(rnd.t), rnd.streams, active).sub_(xi).neg_()  # x_i - x_i^(t,s)
        mult = echo_multiplier(tau, rnd.t).to(xi.dtype) if echo else torch.ones_like(a)
        w = a / a.sum(1, keepdim=True).clamp(min=1.0)  # 1{i in A}/|A|
        base = torch.bmm(w.unsqueeze(1), xi).squeeze(1)
        update = -torch.bmm((w * mult).unsqueeze(1), G).squeeze(1)
        if clip_norm is not None:
            update = clip_rows(update, clip_norm)
        x_new = base + server_lr * update
        receive = active if broadcast == "active" else torch.ones_like(active)
        new = hold_empty(state, {"x": x_new, "xi": torch.where(receive.unsqueeze(-1), x_new.unsqueeze(1), xi),
                                 "tau": update_last_active(tau, active, rnd.t)}, active)
        if keep_innovation:
            new["innovation"] = G * a.unsqueeze(-1)  # zero in an empty round
        return new

    def points(state):
        out = {"server": state["x"], "mean": state["xi"].mean(1)}
        if client_points:
            out.update({f"client{i}": state["xi"][:, i] for i in range(state["xi"].shape[1])})
        return out

    name = "fedawe" + ("" if echo else "[no-echo]") + ("" if broadcast == "active" else "[broadcast-all]")
    return Algorithm(name, init, step, points)
