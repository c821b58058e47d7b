r"""F3AST: availability-aware selection with EMA participation rates (Ribero et al. [44]; digest 000 §2.4).

**Provenance.** The FedAWE paper gives only :math:`\beta = 0.001` (tuned over
{0.1, 0.05, 0.01, 0.005, 0.001, 0.0005}); F3AST is absent from the official code.  The rule below is the
digest's *recollection* of the original paper [R], and several parts are unknown [U]; each of those is a
parameter here, so a user can match the original once checked:

* [R] selection: from the available set, keep the top-:math:`K_t` clients by :math:`\pi_k/r_k(t)`
  (maximising :math:`\sum_{k\in S}\pi_k^2/r_k^2`), :math:`\pi_k = 1/m`;
* [R] aggregation :math:`x^{t+1} = x^t + \eta_g\sum_{k\in S_t}\frac{\pi_k}{r_k(t)}\Delta_k^t`;
* [R] rates :math:`r_k(t+1) = (1-\beta)r_k(t) + \beta\,\mathbb 1\{k\in S_t\}` (EMA of the selection rate);
* [U] ``budget`` :math:`K_t` is never stated; ``None`` (default) means no communication constraint,
  :math:`S_t = \mathcal A^t`, where F3AST reduces to inverse-EMA-rate weighting;
* [U] ``initial_rate`` :math:`r_k(0)` is unknown (default 1: the first rounds weight like FedAvg over all);
* [U] whether the update is divided by :math:`m` is unknown: ``divide_by_m=True`` uses :math:`\pi_k = 1/m`
  as above, ``False`` uses :math:`\pi_k = 1`.

Clients start from the server model and return :math:`\Delta_k^t = x_k^{(t,s)}-x^t`.  The rates keep
decaying in an empty round (nobody is selected) while :math:`x` is unchanged.
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Algorithm
from theorylab.kernels.local_sgd import check_local_steps, local_deltas
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.registry import register


def select_top(active: torch.Tensor, score: torch.Tensor, budget: int | None) -> torch.Tensor:
    """The ``budget`` available clients of largest ``score`` (all available ones when ``budget`` is None)."""
    if budget is None or budget >= active.shape[1]:
        return active
    masked = torch.where(active, score, torch.full_like(score, -torch.inf))
    top = torch.topk(masked, budget, dim=1).indices
    chosen = torch.zeros_like(active).scatter_(1, top, True)
    return chosen & active


@register("algorithm", "f3ast")
def f3ast(local_steps: int = 5, lr=0.05, beta: float = 0.001, budget: int | None = None, initial_rate: float = 1.0,
          divide_by_m: bool = True, server: dict | None = None) -> Algorithm:
    """F3AST [R]/[U]: top-K available clients by pi_k/r_k, weights pi_k/r_k, EMA selection rates r_k."""
    steps, schedule, opt = check_local_steps(local_steps), make_schedule(lr), make_server(server)
    if not 0 < beta <= 1:
        raise ValueError(f"beta must lie in (0, 1]; got {beta}")
    if budget is not None and (int(budget) != budget or budget < 1):
        raise ValueError(f"budget must be None (no constraint) or an integer >= 1; got {budget}")
    if not 0 < initial_rate <= 1:
        raise ValueError(f"initial_rate must lie in (0, 1]; got {initial_rate}")

    def init(problem, x0):
        rate = torch.full((x0.shape[0], problem.n_clients), float(initial_rate), dtype=x0.dtype, device=x0.device)
        return {"x": x0, "rate": rate, **opt.init(x0)}

    def step(state, rnd, problem):
        x, rate = state["x"], state["rate"]
        pi = 1.0 / problem.n_clients if divide_by_m else 1.0
        chosen = select_top(rnd.active, pi / rate, None if budget is None else int(budget))
        delta = local_deltas(problem, x, steps, schedule(rnd.t), rnd.streams, chosen)
        w = chosen.to(x.dtype) * pi / rate
        x_new, extra = opt.update(state, x, torch.bmm(w.unsqueeze(1), delta).squeeze(1))
        return {"x": x_new, "rate": (1 - beta) * rate + beta * chosen.to(x.dtype), **extra}

    return Algorithm("f3ast", init, step, lambda state: {"server": state["x"]})
