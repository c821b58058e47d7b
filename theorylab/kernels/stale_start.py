r"""Stale start snapshots: what an asynchronous kernel remembers about each client's running job (seed 004 §3.1,
Assumption 2.3; digest 004 §1.3–1.4).

A client that arrives at server step :math:`t` with staleness :math:`\tau_i^t` started its job from the server's
version :math:`t-\tau_i^t`.  Every asynchronous kernel keeps, per replica and client, the vectors it was sent when
its job started (``(R, N, d)`` tensors: the model :math:`\theta^{t-\tau_i^t}`, and for MasFL the broadcast
:math:`u^{t-\tau_i^t}`), and refreshes them for the clients the clock *dispatches* after the server update.

The client's local computation is evaluated when its update *arrives*, from the stored snapshot.  That is the same
computation as one done at dispatch time: the gradient oracle's randomness comes from the replica's ``gradient``
stream, never from the clock, so which server step evaluates the job changes which noise draw it uses but not its
law (each job still sees fresh, independent noise).

**Scope.**  Evaluating a job when it arrives is exact when every arrival is the completion of the job started at the
client's latest dispatch: synchronous rounds and Mode B (:mod:`theorylab.clocks.buffered`, where only idle clients
are dispatched).  Under Mode A (:mod:`theorylab.clocks.all_busy`) an arrival re-reads a buffer slot filled by an
*earlier* job while the client's current job still runs, which one snapshot per client cannot represent; the clock
marks such arrivals ``slotted`` and :func:`arrivals` refuses them with a ValueError instead of approximating.

Without a clock (``rnd.arrivals is None``) the round is synchronous: every active client arrives fresh
(:math:`\tau = 0`) and every client is dispatched with the new model (:func:`synchronous`).
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Arrivals, Round


def synchronous(active: torch.Tensor) -> Arrivals:
    """The arrivals of a synchronous round: the active clients, all fresh, everyone dispatched afterwards."""
    zeros = torch.zeros(active.shape, dtype=torch.int64, device=active.device)
    time = torch.zeros(active.shape[0], dtype=torch.float64, device=active.device)
    return Arrivals(active, zeros, torch.ones_like(active), time)


def arrivals(rnd: Round) -> Arrivals:
    """The round's arrivals, or :func:`synchronous` ones when the run has no clock; slotted arrivals are refused."""
    if rnd.arrivals is None:
        return synchronous(rnd.active)
    if rnd.arrivals.slotted:
        raise ValueError("this kernel evaluates a job when it arrives, from one start snapshot per client, which is "
                         "exact only when every arrival completes the job of the client's latest dispatch; the clock "
                         "delivers slotted updates (Mode A, all_busy): use the buffered clock (Mode B) or a "
                         "synchronous kernel")
    return rnd.arrivals


def snapshot(value: torch.Tensor, n_clients: int) -> torch.Tensor:
    """A fresh ``(R, N, d)`` snapshot table holding the server vector ``value`` ``(R, d)`` for every client."""
    return value.unsqueeze(1).expand(-1, n_clients, -1).clone()


def dispatch(table: torch.Tensor, value: torch.Tensor, dispatched: torch.Tensor) -> torch.Tensor:
    """Refresh the snapshot ``table`` ``(R, N, d)`` with the new server vector ``value`` ``(R, d)`` for the
    ``dispatched`` clients ``(R, N)``; the others keep the version their running job started from."""
    return torch.where(dispatched.unsqueeze(-1), value.unsqueeze(1), table)


def mean_delta(x: torch.Tensor, start: torch.Tensor, end: torch.Tensor, weights: torch.Tensor,
               staleness: torch.Tensor) -> torch.Tensor:
    r""":math:`\sum_i w_i\,(x_i^{\rm end} - x_i^{\rm start})` ``(R, d)`` over clients with weights ``w`` ``(R, N)``.

    A fresh client (:math:`\tau_i = 0`) started from the current model ``x``, so its start enters as
    :math:`(\sum_{\tau_i=0} w_i)\,x` and the stale ones through their snapshots.  With every client fresh this is
    FedAvg's own arithmetic :math:`\sum_iw_ix_i^{\rm end} - (\sum_iw_i)\,x` bit for bit
    (:func:`theorylab.kernels.fedavg.fedavg`)."""
    fresh = staleness == 0
    w_fresh = torch.where(fresh, weights, torch.zeros_like(weights))
    w_stale = weights - w_fresh
    out = torch.bmm(weights.unsqueeze(1), end).squeeze(1) - w_fresh.sum(1, keepdim=True) * x
    return out - torch.bmm(w_stale.unsqueeze(1), start).squeeze(1)


def uniform_over(arrived: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    r"""Weights :math:`\mathbb 1\{i\in\mathcal S_t\}/|\mathcal S_t|` ``(R, N)`` (zero rows for an empty set)."""
    a = arrived.to(dtype)
    return a / a.sum(1, keepdim=True).clamp(min=1.0)
