r"""Mode B, the FedBuff delay mechanism: :math:`M_c` concurrent jobs, the server steps after every :math:`S` arrivals
(seed 004 §3.1, §6, App. E.1; digest 004 §1.4 "Mode B"; used in all of the paper's experiments).

A discrete-event simulation on a virtual clock, run for all replicas at once (each replica pops its own earliest
event in lockstep):

.. code-block:: text

    start:  M_c clients, uniform without replacement, start jobs from θ^0 at time 0
    step t: pop the earliest job completions until S of them wait in the buffer
            (R1: at each completion, start one idle client from the current model θ^t at that time)
            server step t applies the S buffered updates; τ_i^t = t − (version the job started from)
            (R2: start idle clients, uniform without replacement, from θ^{t+1} until M_c jobs run again)

A job's duration comes from its :mod:`~theorylab.clocks.delays` law (``delay`` stream); the clients to start are
chosen among the idle ones (neither running nor waiting in the buffer, so a buffer never holds a client twice) by
uniform keys from the ``participation`` stream.  R2 (refill at aggregation) is the default: it reproduces the
:math:`\tau_{\max}=4` the paper quotes for :math:`M_c=20`, :math:`S=10`, :math:`\mathcal U(0,20)`; R1 (refill at
every arrival) keeps exactly :math:`M_c` jobs running and gives about twice the staleness (digest 004 §1.4 table).

**What the kernel sees** (:class:`~theorylab.kernels.algorithm.Arrivals` of server step :math:`t`): ``arrived`` the
buffered clients, ``staleness`` :math:`\tau_i^t` (their job started from :math:`\theta^{t-\tau_i^t}`), ``time`` the
simulated time of the :math:`S`-th completion, and ``dispatched`` every client that starts a job from
:math:`\theta^{t+1}`: R2's refill after step :math:`t`, and R1's starts while the buffer of step :math:`t+1` fills
(they happen after step :math:`t` and before step :math:`t+1`, so :math:`\theta^{t+1}` is the current model; the
clock simulates that buffer one step ahead to know them).  Jobs started before step 0 start from :math:`\theta^0`,
which kernels hold for every client at ``init``.  A client holds at most one job, and is dispatched again only
after its update arrived, so a kernel may evaluate a job when it arrives from the snapshot taken when it was
dispatched.

``available`` (the participation mask of step :math:`t`) restricts which idle clients may be started after step
:math:`t`; the first :math:`M_c` are drawn from all clients.  When no job runs, a step applies the arrivals it has
(possibly none) at the time of the last completion.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.clocks import events
from theorylab.clocks.delays import delay_law, durations
from theorylab.kernels.algorithm import Arrivals
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.validation import integer

REFILLS = ("R1", "R2")


class Buffered:
    def __init__(self, n_clients: int, concurrency: int, buffer: int, refill: str, delay: dict | None):
        self.n_clients = integer("n_clients", n_clients, 1)
        self.concurrency = integer("concurrency", concurrency, 1, self.n_clients)
        self.buffer = integer("buffer", buffer, 1, self.concurrency)
        if refill not in REFILLS:
            raise ValueError(f"refill must be one of {REFILLS}; got {refill!r}")
        self.refill = refill
        self.law = delay_law(delay, self.n_clients)

    def init(self, replicas: int, streams: Streams) -> events.State:
        R, N, dev = replicas, self.n_clients, streams.device
        state = {"finish": torch.full((R, N), torch.inf, dtype=torch.float64, device=dev),
                 "version": torch.zeros((R, N), dtype=torch.int64, device=dev),
                 "pending": torch.zeros((R, N), dtype=torch.bool, device=dev),
                 "now": torch.zeros(R, dtype=torch.float64, device=dev), **events.staleness_state(R, dev)}
        if self.law.per == "client":
            state["speed"] = durations(self.law, streams, N)
        everyone = torch.ones((R, N), dtype=torch.bool, device=dev)
        state, _ = self._launch(state, streams, everyone, 0, self.concurrency)
        return self._fill(state, streams, everyone, 0)[0]

    def draw(self, state: events.State, t: int, streams: Streams, available: torch.Tensor):
        arrived, staleness = state["pending"], torch.where(state["pending"], t - state["version"], 0)
        time = state["now"]
        state = {**state, "pending": torch.zeros_like(arrived)}
        dispatched = torch.zeros_like(arrived)
        if self.refill == "R2":
            state, dispatched = self._launch(state, streams, available, t + 1, self.concurrency)
        state, started = self._fill(state, streams, available, t + 1)
        state.update(events.record(state, arrived, staleness, time))
        return state, Arrivals(arrived, staleness, dispatched | started, time)

    def metrics(self, state: events.State) -> dict[str, torch.Tensor]:
        return events.metrics(state, self.n_clients)

    def _draws(self, streams, launches: int) -> tuple[np.ndarray, np.ndarray | None]:
        """Keys ``(R, launches, N)`` and job lengths (``None`` for one duration per client) of ``launches``
        consecutive launches, drawn at once: the same numbers, in the same order, as one draw per launch."""
        keys = streams.uniform("participation", (launches, self.n_clients)).cpu().numpy()
        if self.law.per == "client":
            return keys, None
        return keys, durations(self.law, streams, (launches, self.n_clients)).cpu().numpy()

    def _launch(self, state, streams, available, version: int, target):
        """Start idle ``available`` clients from model ``version`` at each replica's current time until ``target``
        (an int, or one per replica) jobs run, with this launch's keys and lengths drawn now."""
        keys, lengths = self._draws(streams, 1)
        jobs = _arrays(state)
        target = target.cpu().numpy() if isinstance(target, torch.Tensor) else target
        chosen = _start(jobs, keys[:, 0], None if lengths is None else lengths[:, 0], available.cpu().numpy(),
                        version, target)
        return _tensors(state, jobs), torch.from_numpy(chosen).to(available.device)

    def _fill(self, state, streams, available, version: int):
        """Pop completions until the next buffer holds ``S`` updates (or no job runs); R1 starts clients from model
        ``version`` at each completion (the ``S`` launches' numbers drawn at once).  Under R2 no job starts
        meanwhile, so the ``S`` earliest completions are popped at once.  Simultaneous completions (possible
        under the ``fixed`` law only) are popped in client order."""
        jobs, free = _arrays(state), available.cpu().numpy()
        if self.refill == "R2":
            _pop(jobs, self.buffer)
            started = np.zeros(free.shape, dtype=bool)
        else:
            started = _pop_and_restart(jobs, *self._draws(streams, self.buffer), free, version, self.concurrency)
        return _tensors(state, jobs), torch.from_numpy(started).to(available.device)


JOBS = ("finish", "version", "pending", "now")  # the clock's job table; the rest of its state is torch


def _arrays(state: events.State) -> dict[str, np.ndarray]:
    """A copy of the job table as numpy arrays, which the event loop updates in place: it runs a few small array
    operations per completion, where numpy's fixed cost per call is a fraction of torch's."""
    return {k: state[k].cpu().numpy().copy() for k in JOBS} | ({"speed": state["speed"].cpu().numpy()}
                                                                if "speed" in state else {})


def _tensors(state: events.State, jobs: dict[str, np.ndarray]) -> events.State:
    device = state["finish"].device
    return {**state, **{k: torch.from_numpy(jobs[k]).to(device) for k in JOBS}}


def _pop(jobs, pops: int) -> None:
    """Move each replica's ``pops`` earliest running jobs (all, when fewer run) to the buffer, in place, and its
    clock to the last of them; simultaneous completions go in client order."""
    finish, rows = jobs["finish"], np.arange(len(jobs["now"]))[:, None]
    who = np.argsort(finish, axis=1, kind="stable")[:, :pops]
    first = finish[rows, who]
    live = np.isfinite(first)
    r, c = np.nonzero(live)
    jobs["pending"][r, who[r, c]], finish[r, who[r, c]] = True, np.inf
    any_live = live.any(1)
    jobs["now"][any_live] = np.where(live, first, -np.inf).max(1)[any_live]


def _pop_and_restart(jobs, keys, lengths, available, version: int, concurrency: int) -> np.ndarray:
    """R1, in place: at each of the buffer's completions (launch ``j`` of ``keys`` ``(R, S, N)`` and ``lengths``),
    pop the earliest running job, then start idle ``available`` clients until ``concurrency`` run, as
    :func:`_pop` with one pop and :func:`_start` would, with the same choices and floats.  The running count and
    the busy mask (running or buffered) are kept up to date rather than recomputed, and the chosen clients come
    as index pairs (:func:`theorylab.clocks.events.uniform_pairs`), so a completion costs a few array operations.
    Returns the started clients."""
    finish, pending, now, versions = jobs["finish"], jobs["pending"], jobs["now"], jobs["version"]
    rows = np.arange(len(now))
    busy = np.isfinite(finish)
    running = busy.sum(1)
    busy |= pending
    started = np.zeros(busy.shape, dtype=bool)
    for j in range(keys.shape[1]):
        who = finish.argmin(1)
        first = finish[rows, who]
        live = np.isfinite(first)
        r, w = rows[live], who[live]
        pending[r, w], finish[r, w], now[r] = True, np.inf, first[live]
        running -= live
        need = np.maximum(concurrency - running, 0)
        r, w = events.uniform_pairs(keys[:, j], available & ~busy, need)
        length = jobs["speed"] if lengths is None else lengths[:, j]
        finish[r, w] = now[r] + length[r, w]
        versions[r, w] = version
        busy[r, w] = started[r, w] = True
        running += np.bincount(r, minlength=len(rows))
    return started


def _start(jobs, keys, length, available, version: int, target) -> np.ndarray:
    """Start (in place in ``jobs``) idle ``available`` clients, chosen by the uniform ``keys``, from model
    ``version`` at each replica's current time until ``target`` jobs run; a job lasts ``length`` (``None``: the
    client's fixed ``speed``).  Returns the started clients."""
    finish = jobs["finish"]
    running = np.isfinite(finish)
    need = np.maximum(target - running.sum(1), 0)
    chosen = events.uniform_pick(keys, available & ~running & ~jobs["pending"], need)
    length = jobs["speed"] if length is None else length
    finish[chosen] = (jobs["now"][:, None] + length)[chosen]
    jobs["version"][chosen] = version
    return chosen


@register("clock", "buffered")
def buffered(n_clients: int, concurrency: int = 20, buffer: int = 10, refill: str = "R2",
             delay: dict | None = None) -> Buffered:
    """Mode B (FedBuff): M_c concurrent jobs, a server step per S arrivals, refill R1 / R2 (default R2)."""
    return Buffered(n_clients, concurrency, buffer, refill, delay)
