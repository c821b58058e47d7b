r"""Exact staleness facts of the clocks (seed 004 §3.1, §6; digest 004 §1.4).

**Mode B, Little's law.**  Count, for every server step :math:`u<T`, the jobs *in flight* while its buffer fills
(started from a version :math:`v\le u`, applied at a step :math:`a\ge u`).  With all clients available, R2 has
exactly :math:`M_c` of them at every step (the refill restores :math:`M_c` before the buffer fills, and no job
starts during it); R1 has :math:`M_c+S` (the :math:`M_c` running when the buffer starts to fill, plus the :math:`S`
started from :math:`\theta^u` at its arrivals).  A job counted at steps :math:`v,\dots,\min(a,T-1)` contributes
:math:`\tau+1=a-v+1` if it is applied before :math:`T` and :math:`T-v` otherwise, so, exactly and per replica,

.. math::
    \sum_{\text{applied}}(\tau+1) + \sum_{\text{in flight at }T}(T-v) = T\,(M_c + S\,[\text{R1}]),

hence with :math:`TS` applied updates :math:`\bar\tau = (M_c-S)/S - \text{residual}/(TS)` under R2 and
:math:`M_c/S - \text{residual}/(TS)` under R1, whatever the delay law.  The residual is at least the number of
jobs in flight at the end, so the finite-run mean sits slightly below the steady-state value
:func:`steady_mean_staleness`.  (Valid when an idle client is always there to start: :math:`N\ge M_c`, and
:math:`N\ge M_c+S` for R1.)

**Mode A with fixed durations.**  Client :math:`i` with duration :math:`d_i` completes a job every
:math:`L_i=\max(\lceil d_i/P\rceil,1)` server steps; its jobs start from versions :math:`0,L_i,2L_i,\dots` and the
one started at :math:`kL_i` completes at step :math:`(k+1)L_i-1`.  Its slot at step :math:`t` therefore holds
the job started at :math:`(\lfloor (t+1)/L_i\rfloor-1)L_i`, or :math:`c_i^0` (version 0) before the first
completion, which gives the age :func:`all_busy_fixed_staleness`.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.validation import integer, real


def steady_mean_staleness(concurrency: int, buffer: int, refill: str = "R2") -> float:
    r"""Mode B's steady-state :math:`\bar\tau`: :math:`(M_c-S)/S` under R2, :math:`M_c/S` under R1."""
    concurrency, buffer = integer("concurrency", concurrency, 1), integer("buffer", buffer, 1, concurrency)
    if refill not in ("R1", "R2"):
        raise ValueError(f"refill must be one of ('R1', 'R2'); got {refill!r}")
    return (concurrency - (buffer if refill == "R2" else 0)) / buffer


def jobs_in_flight_total(concurrency: int, buffer: int, refill: str, steps: int) -> int:
    r"""The right side of Little's identity, :math:`T(M_c+S\,[\text{R1}])`."""
    return integer("steps", steps, 0) * (concurrency + (buffer if refill == "R1" else 0))


def residual(state: dict[str, torch.Tensor], steps: int) -> np.ndarray:
    r""":math:`\sum(T-v)` over the jobs of a :class:`~theorylab.clocks.buffered.Buffered` clock's final state that
    are still running or wait for step :math:`T` (per replica)."""
    live = torch.isfinite(state["finish"]) | state["pending"]
    return torch.where(live, steps - state["version"], 0).sum(1).cpu().numpy()


def all_busy_fixed_staleness(durations, period: float, steps: int) -> np.ndarray:
    r"""``(N, T)`` ages :math:`\tau_i(t)` of Mode A's slots when client :math:`i`'s jobs always last
    :math:`d_i` (module docstring)."""
    period = real("period", period, 0.0, open_low=True)
    d = np.asarray([real(f"durations[{i}]", v, 0.0) for i, v in enumerate(durations)])
    cycle = np.maximum(np.ceil(d / period), 1).astype(np.int64)[:, None]
    t = np.arange(integer("steps", steps, 0))[None, :]
    last = (t + 1) // cycle - 1
    return np.where(last < 0, t, t - last * cycle)
