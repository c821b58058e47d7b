r"""FedStale: a convex combination of fresh and stale client updates (seed 001 Ch. 3, Alg. 4 and App. Alg. 7;
eqs. (3.5)-(3.9), (B.1)-(B.5); digest 001 §2.7, §2.9, §7.1).

Chapter 3's sign convention: client :math:`i` runs :math:`K` local SGD steps from :math:`w^{(t)}` and returns
:math:`\Delta_i^{(t)} = w^{(t)} - w_i^{(t,K)}`; the server keeps a memory bank :math:`h_i` (:math:`N\times d` per
replica) and, with :math:`\xi_i = \mathbb 1\{i\in\mathcal S^{(t)}\}` and :math:`q_i` the objective weights
(:math:`1/N` in the thesis),

.. math::
    \Delta_{\rm FedAvg}^{(t)} &= \textstyle\sum_i \frac{\xi_i q_i}{p_i}\,\Delta_i^{(t)}, \qquad
    \Delta_{\rm FedVARP}^{(t)} = \textstyle\sum_i q_i h_i^{(t)}
        + \sum_i \frac{\xi_i q_i}{p_i}\,(\Delta_i^{(t)}-h_i^{(t)}),\\
    \Delta^{(t)} &= (1-\beta)\,\Delta_{\rm FedAvg}^{(t)} + \beta\,\Delta_{\rm FedVARP}^{(t)}
                 = \beta\textstyle\sum_i q_ih_i^{(t)} + \sum_i\frac{\xi_i q_i}{p_i}\,(\Delta_i^{(t)}-\beta h_i^{(t)}),\\
    h_i^{(t+1)} &= \Delta_i^{(t)}\ (\xi_i = 1),\quad h_i^{(t+1)} = h_i^{(t)}\ (\xi_i = 0), \qquad
    w^{(t+1)} = w^{(t)} - \eta_s\,\Delta^{(t)}

(the FedOpt server of :mod:`theorylab.kernels.server` applied to the pseudo-gradient :math:`-\Delta^{(t)}`; SGD
with :math:`\eta_s` = ``server.lr``).  For every :math:`\beta\in[0,1]` and every memory
:math:`\mathbb E_\xi[\Delta^{(t)}] = \sum_i q_i\Delta_i^{(t)}` (Remark A.2): :math:`\beta = 0` is U-FedAvg (3.5),
:math:`\beta = 1` U-FedVARP (3.7).  The kernel evaluates (B.3) literally, as the convex combination of the two
aggregates, each computed with the arithmetic of its own kernel, so that the end points reproduce them bit for bit
under common random numbers:

* ``beta=0, weights="known_p"`` == ``fedavg(aggregation="known_p")`` (same ``local_steps``, ``lr``, ``server``; with a
  stateful server (momentum, Adam) also ``empty_round="hold"``, as FedAvg leaves an empty round's whole state alone);
* ``beta=1, weights="active", memory="zeros", empty_round="hold"`` == ``fedvarp`` (same ``local_steps``, ``lr``,
  ``server``), whose memory is :math:`-h_i` (it stores :math:`w_i^{(t,K)} - w^{(t)}`).

Labelled choices (each a switch, none silently chosen):

* ``weights``: ``"known_p"`` — :math:`\xi_i q_i/p_i` with the known :math:`p_i^t` (the thesis' unbiased form) and the
  stale mean :math:`\sum_i q_ih_i`; ``"active"`` — :math:`\xi_i/|\mathcal S^{(t)}|` and the plain mean
  :math:`\frac1N\sum_ih_i`: original FedVARP's uniform-sampling form, equal to the thesis' only when
  :math:`p_i = |\mathcal S^{(t)}|/N` (uniform sampling of a fixed number of clients).
* ``weights="fedau"``: the ``known_p`` form with :math:`p_i` replaced by FedAU's online estimate
  :math:`1/\omega_i^{(t)}` (:mod:`theorylab.participation.estimators`: the mean completed inactivity interval,
  intervals cut at ``cutoff`` rounds; the thesis' §3.5.3 / Fig. 3.5, which gives no cutoff, so it is a parameter
  with the FedAU paper's 50 as default).  The counters live in the state and are read before the round's
  participation updates them; they advance in every round, an empty one included.
* ``memory``: ``"zeros"`` — :math:`h_i^{(1)} = 0` (Alg. 4 line 1); ``"first"`` — :math:`h_i^{(1)} = \Delta_i^{(1)}`,
  the update every client computes at :math:`w^{(1)}` in the first round (SAGA's initialisation; the first round then
  applies the full-participation mean for any :math:`\beta>0`); digest §7.1 asks for both.
* ``empty_round``: ``"apply"`` — a round with no participant still applies :math:`\Delta = \beta\sum_iq_ih_i`
  (Alg. 4 / 7 as written); ``"hold"`` — it leaves the whole state unchanged (the FedVARP kernel's zero update).
* ``all_compute``: Alg. 7 — every client runs ClientUpdate each round (only participants are aggregated); the
  state then also keeps the round's updates of all clients (``"fresh"``, Ch. 3 sign) for variance-exact
  experiments.  On the vectorised quadratic every client is computed anyway, so the iterates are the same.
"""

from __future__ import annotations

from typing import Callable

import torch

from theorylab.kernels.aggregation import aggregation_weights
from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.local_sgd import check_local_steps, local_sgd
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.participation.estimators import check_cutoff, fedau_weights, init_fedau, update_fedau
from theorylab.registry import register

WEIGHTS = ("known_p", "active", "fedau")
MEMORY = ("zeros", "first")
EMPTY_ROUND = ("apply", "hold")


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def check_beta(beta) -> float:
    """``beta`` as a float, or a ValueError unless it lies in [0, 1]."""
    if not 0.0 <= float(beta) <= 1.0:
        raise ValueError(f"beta must lie in [0, 1]; got {beta}")
    return float(beta)


def fresh_weights(kind: str, active: torch.Tensor, q: torch.Tensor, probs) -> tuple[torch.Tensor, Callable]:
    """The weights of the fresh updates ``(R, N)`` and the stale mean ``h -> (R, d)`` of weighting ``kind``
    (``"fedau"`` passes its estimated probabilities as ``probs``)."""
    if kind in ("known_p", "fedau"):
        return aggregation_weights("known_p", active, q, probs), lambda h: torch.einsum("n,rnd->rd", q, h)
    a = active.to(q.dtype)
    return a / a.sum(1, keepdim=True).clamp(min=1.0), lambda h: h.mean(1)


def fedstale_aggregate(x: torch.Tensor, end: torch.Tensor, fresh: torch.Tensor, h: torch.Tensor, w: torch.Tensor,
                       stale: torch.Tensor, beta: float) -> torch.Tensor:
    r""":math:`\Delta^{(t)} = (1-\beta)\Delta_{\rm FedAvg} + \beta\Delta_{\rm FedVARP}` (B.3) in Ch. 3's sign, from
    the server model ``x`` ``(R, d)``, the clients' end points ``end`` and updates ``fresh = x - end`` ``(R, N, d)``,
    the memory ``h``, the fresh weights ``w`` ``(R, N)`` and the stale mean ``stale`` ``(R, d)``.  Each aggregate is
    written as its own kernel writes it (FedAvg: :math:`\sum_iw_i\,x - \sum_iw_i\,w_i^{(t,K)}`), so that
    :math:`\beta\in\{0, 1\}` reproduces that kernel's arithmetic exactly."""
    fedavg = w.sum(1, keepdim=True) * x - torch.bmm(w.unsqueeze(1), end).squeeze(1)
    fedvarp = torch.bmm(w.unsqueeze(1), fresh - h).squeeze(1) + stale
    return (1.0 - beta) * fedavg + beta * fedvarp


THESIS_BETAS = (0.0, 0.2, 0.5, 0.8, 1.0)  # the thesis' grid of beta (seed 001 §3.5.1; digest 001 §2.7, §5.3)


@register("algorithm", "fedstale")
def fedstale(beta: float = 0.5, local_steps: int = 5, lr=0.05, weights: str = "known_p", memory: str = "zeros",
             empty_round: str = "apply", all_compute: bool = False, server: dict | None = None,
             cutoff: int = 50) -> Algorithm:
    """FedStale (seed 001 Alg. 4): beta-weighted stale updates h_i added to unbiased fresh updates."""
    beta, steps = check_beta(beta), check_local_steps(local_steps)
    kind, memory = _choice("weights", weights, WEIGHTS), _choice("memory", memory, MEMORY)
    empty_round = _choice("empty_round", empty_round, EMPTY_ROUND)
    schedule, opt, cutoff = make_schedule(lr), make_server(server), check_cutoff(cutoff)

    def init(problem, x0):
        state = {"x": x0, "h": x0.new_zeros(x0.shape[0], problem.n_clients, x0.shape[1]), **opt.init(x0)}
        if kind == "fedau":
            state.update(init_fedau(x0.shape[0], problem.n_clients, x0.dtype, x0.device))
        return {**state, "fresh": torch.zeros_like(state["h"])} if all_compute else state

    def step(state, rnd, problem):
        x, active = state["x"], rnd.active
        first = memory == "first" and rnd.t == 0
        start = x.unsqueeze(1).expand(-1, problem.n_clients, -1)
        end = local_sgd(problem, start, steps, schedule(rnd.t), rnd.streams, active, compute_all=all_compute or first)
        fresh = x.unsqueeze(1) - end
        if first:
            state = {**state, "h": fresh}
        h = state["h"]
        probs = 1.0 / fedau_weights(state) if kind == "fedau" else rnd.probs
        w, stale_mean = fresh_weights(kind, active, problem.weights, probs)
        delta = fedstale_aggregate(x, end, fresh, h, w, stale_mean(h), beta)
        x_new, extra = opt.update(state, x, -delta)
        new = {"x": x_new, "h": torch.where(active.unsqueeze(-1), fresh, h), **extra}
        if all_compute:
            new["fresh"] = fresh
        new = hold_empty(state, new, active) if empty_round == "hold" else new
        return {**new, **update_fedau(state, active, cutoff)} if kind == "fedau" else new

    return Algorithm(f"fedstale[{beta:g}]", init, step, lambda state: {"server": state["x"]})
