r"""Mode A, the theory's model: every client always works, the server steps every :math:`P` seconds on a uniform
sample of the clients' latest updates (seed 004 §3.1, Lemma B.1; digest 004 §1.4 "Mode A").

.. code-block:: text

    start:  every client starts a job from θ^0 at time 0; its buffer slot holds c_i^0 (computed at θ^0)
    step t, at time (t+1)P:
        each client whose job completed in (tP, (t+1)P] puts its update in its slot (overwriting)
        and starts a new job from θ^{t+1}
        S_t: S clients, uniform without replacement (``participation`` stream) among the available ones;
        the server applies their slots; τ_i^t = t − (version the slot's job started from)

The paper says only that the server samples :math:`\mathcal S_t` uniformly and that clients "immediately begin the
next round of local updates based on the latest global model"; when the server steps is left open, so a fixed
period :math:`P` is a parameter (digest 004 §1.4 rule 3, [UNCLEAR]).  **Deviation, labelled:** a client that
completes between two server steps starts its next job at the next broadcast (from :math:`\theta^{t+1}`, having
idled less than :math:`P`) rather than at once from :math:`\theta^t`.  Jobs therefore start only at broadcasts and
each client completes at most one job per period, which makes the buffer's content a function of the server steps
alone.  With a fixed duration :math:`d_i` client :math:`i` completes a job every :math:`L_i=\lceil d_i/P\rceil`
steps (:func:`theorylab.clocks.statistics.all_busy_fixed_staleness`).

A slot whose job the server already applied is a *repeat*.  For MasFL a repeat changes nothing
(:math:`c_i^{t+1}=c_i^t`) but counts in :math:`1/S`; for AdaMasFL re-applying the same :math:`\Delta_i` moves the
model twice (digest 004 §1.4 rule 4, [UNCLEAR]).  ``reuse_consumed_delta=True`` (the literal reading) keeps repeats
in ``arrived``; ``False`` leaves them out.  Each client is selected with probability :math:`S/N` at every step
(when all are available): Lemma B.1's sampling law.

**What the kernel sees** at step :math:`t`: ``dispatched`` the clients whose job completed in
:math:`(tP,(t+1)P]` (they start from :math:`\theta^{t+1}`); ``arrived`` the selected clients (fresh, and repeats
when reused), whose slot holds the upload of a job started from :math:`\theta^{t-\tau_i^t}`; ``time`` :math:`(t+1)P`.
Unlike Mode B a client's slot and its running job differ, so a kernel cannot evaluate an update when it arrives
from the snapshot of the client's latest dispatch: it evaluates a dispatched client's completed job *before*
applying step :math:`t` (the upload is in the slot from step :math:`t` on), then refreshes that client's snapshot;
an arrived client that was not dispatched since its slot was last applied is a repeat.  The clock marks its arrivals
``slotted``; the kernels that evaluate a job when it arrives (:mod:`theorylab.kernels.stale_start`) are exact under
Mode B (:mod:`theorylab.clocks.buffered`) and refuse slotted arrivals rather than approximate them.

Recorded metrics: those of :mod:`theorylab.clocks.events`, and ``tau_all_avg``, the running mean over every client
and step of its slot's age :math:`t-v_i` (the paper's :math:`\bar\tau=\frac1{NT}\sum_{i,t}\tau_i^t`, digest 004 §1.3).
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.clocks import events
from theorylab.clocks.delays import delay_law, durations
from theorylab.kernels.algorithm import Arrivals
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.validation import integer, real


class AllBusy:
    def __init__(self, n_clients: int, sample: int, period: float, delay: dict | None, reuse_consumed_delta: bool):
        self.n_clients = integer("n_clients", n_clients, 1)
        self.sample = integer("sample", sample, 1, self.n_clients)
        self.period = real("period", period, 0.0, open_low=True)
        if not isinstance(reuse_consumed_delta, bool):
            raise ValueError(f"reuse_consumed_delta must be True or False; got {reuse_consumed_delta!r}")
        self.reuse = reuse_consumed_delta
        self.law = delay_law(delay, self.n_clients)

    def init(self, replicas: int, streams: Streams) -> events.State:
        R, N, dev = replicas, self.n_clients, streams.device
        length = durations(self.law, streams, N)
        state = {"finish": length, "start": torch.zeros((R, N), dtype=torch.int64, device=dev),
                 "slot": torch.zeros((R, N), dtype=torch.int64, device=dev),
                 "fresh": torch.zeros((R, N), dtype=torch.bool, device=dev),
                 "age_sum": torch.zeros(R, dtype=torch.float64, device=dev), **events.staleness_state(R, dev)}
        if self.law.per == "client":
            state["speed"] = length
        return state

    def draw(self, state: events.State, t: int, streams: Streams, available: torch.Tensor):
        now = (t + 1) * self.period
        done = state["finish"] <= now
        slot = torch.where(done, state["start"], state["slot"])
        fresh = state["fresh"] | done
        keys = streams.uniform("participation", (self.n_clients,)).cpu().numpy()
        k = np.full(keys.shape[0], self.sample)
        selected = torch.from_numpy(events.uniform_pick(keys, available.cpu().numpy(), k)).to(available.device)
        arrived = selected & (fresh | self.reuse)
        staleness = torch.where(arrived, t - slot, 0)
        length = state["speed"] if self.law.per == "client" else durations(self.law, streams, self.n_clients)
        time = torch.full_like(state["time"], now)
        new = {**state, "slot": slot, "fresh": fresh & ~selected,
               "finish": torch.where(done, now + length, state["finish"]),
               "start": torch.where(done, t + 1, state["start"]),
               "age_sum": state["age_sum"] + (t - slot).to(torch.float64).mean(1)}
        new.update(events.record(state, arrived, staleness, time))
        return new, Arrivals(arrived, staleness, done, time, slotted=True)

    def metrics(self, state: events.State) -> dict[str, torch.Tensor]:
        return {**events.metrics(state, self.n_clients),
                "tau_all_avg": state["age_sum"] / state["steps"].clamp(min=1.0)}


@register("clock", "all_busy")
def all_busy(n_clients: int, sample: int = 10, period: float = 1.0, delay: dict | None = None,
             reuse_consumed_delta: bool = True) -> AllBusy:
    """Mode A: all clients always busy, a server step every P seconds on S uniform latest updates."""
    return AllBusy(n_clients, sample, period, delay, reuse_consumed_delta)
