r"""Pieces shared by the clocks: uniform choice of clients and the running staleness statistics (seed 004
Assumption 2.3; digest 004 §1.3).

The statistics a clock records beside the model's metrics (as ``clock.<name>``, every ``(R,)``):

* ``tau_last``: :math:`\frac1{|\mathcal S_t|}\sum_{i\in\mathcal S_t}\tau_i^t`, the mean staleness of the updates
  applied at the latest server step (0 for an empty step);
* ``tau_avg``: the running mean of :math:`\tau` over every update applied so far (the paper's :math:`\bar\tau`
  counted over applied updates only, digest 004 §1.3);
* ``tau_avg_nt``: the same sum over :math:`N` times the number of steps so far, i.e. the paper's
  :math:`\bar\tau=\frac1{NT}\sum_{i,t}\tau_i^t` with :math:`\tau_i^t=0` for clients not applied at step :math:`t`
  (Mode B defines no delay for them; the digest asks for both averages);
* ``tau_max``: :math:`\max\tau` over every update applied so far (Assumption 2.3's :math:`\tau_{\max}`);
* ``time``: the simulated time of the latest server step.
"""

from __future__ import annotations

import numpy as np
import torch

State = dict[str, torch.Tensor]


def uniform_pairs(keys: np.ndarray, eligible: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``k[r]`` clients chosen uniformly without replacement among ``eligible[r]`` (all of them when fewer): the
    eligible clients with the smallest i.i.d. uniform ``keys``, as ``(replica, client)`` index arrays in replica
    order.  Shapes ``(R, N)``, ``(R, N)``, ``(R,)``.

    numpy, not torch: the clocks pick clients once per event on ``(R, N)`` arrays of a few hundred entries, where a
    torch call's fixed cost is several times numpy's.  A launch usually starts one client, so the pick is then an
    ``argmin``; ties among the uniform keys have probability zero (the ineligible clients' key 2.0 ties, but they
    are never kept)."""
    rows = np.arange(keys.shape[0])
    most = int(k.max()) if k.size else 0
    if most == 0:
        return rows[:0], rows[:0]
    masked = np.where(eligible, keys, 2.0)
    if most == 1:
        who = masked.argmin(1)
        keep = (k > 0) & eligible[rows, who]
        return rows[keep], who[keep]
    who = np.argsort(masked, axis=1, kind="stable")[:, :min(most, keys.shape[1])]
    r, c = np.nonzero((np.arange(who.shape[1]) < k[:, None]) & np.take_along_axis(eligible, who, 1))
    return r, who[r, c]


def uniform_pick(keys: np.ndarray, eligible: np.ndarray, k: np.ndarray) -> np.ndarray:
    """:func:`uniform_pairs` as an ``(R, N)`` mask of the chosen clients."""
    chosen = np.zeros(eligible.shape, dtype=bool)
    chosen[uniform_pairs(keys, eligible, k)] = True
    return chosen


def staleness_state(replicas: int, device=None) -> State:
    """The running statistics before any server step."""
    zeros = torch.zeros(replicas, dtype=torch.float64, device=device)
    return {"tau_last": zeros.clone(), "tau_sum": zeros.clone(), "tau_count": zeros.clone(), "steps": zeros.clone(),
            "tau_max": torch.zeros(replicas, dtype=torch.int64, device=device), "time": zeros.clone()}


def record(stats: State, arrived: torch.Tensor, staleness: torch.Tensor, time: torch.Tensor) -> State:
    """The statistics after a server step that applied ``arrived`` with ``staleness`` at ``time``."""
    tau = torch.where(arrived, staleness, torch.zeros_like(staleness))
    count = arrived.sum(1).to(torch.float64)
    total = tau.sum(1).to(torch.float64)
    return {"tau_last": total / count.clamp(min=1.0), "tau_sum": stats["tau_sum"] + total,
            "tau_count": stats["tau_count"] + count, "steps": stats["steps"] + 1,
            "tau_max": torch.maximum(stats["tau_max"], tau.max(1).values), "time": time}


def metrics(stats: State, n_clients: int) -> dict[str, torch.Tensor]:
    """``tau_last``, ``tau_avg``, ``tau_avg_nt``, ``tau_max`` and ``time`` (module docstring)."""
    return {"tau_last": stats["tau_last"], "tau_avg": stats["tau_sum"] / stats["tau_count"].clamp(min=1.0),
            "tau_avg_nt": stats["tau_sum"] / (n_clients * stats["steps"]).clamp(min=1.0),
            "tau_max": stats["tau_max"].to(torch.float64), "time": stats["time"]}
