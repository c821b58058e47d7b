r"""The kernel contract.

An :class:`Algorithm` is three pure functions over a *state*, a flat ``dict`` of
tensors whose leading axis is the replica:

* ``init(problem, x0) -> state`` with ``x0`` of shape ``(R, d)``;
* ``step(state, rnd, problem) -> state`` for one round described by :class:`Round`;
* ``points(state) -> {name: (R, d) tensor}``: the model(s) the theory evaluates
  (``"server"`` for the global model; FedAWE also exposes the all-client mean).

Rounds with an empty active set leave the whole state unchanged, replica by
replica (:func:`hold_empty`), for every algorithm of the FedAvg family.

Two world models beyond participation reach a kernel through optional fields of the round, ``None`` unless the
run configures them, so the synchronous kernels read neither and stay unchanged:

* ``links`` (:class:`Links`): a lossy channel's two masks, the downlink :math:`d_i` (client :math:`i` received the
  broadcast :math:`x^t`) and the uplink :math:`u_i` (the server received client :math:`i`'s update); seed 001 Ch. 4,
  :math:`\xi_i = d_iu_i`.
* ``arrivals`` (:class:`Arrivals`): an asynchronous server step on a virtual clock: which clients' updates arrive,
  how stale each is (the number of server steps since the model it started from), which clients start a new job from
  the model this step produces, and the simulated time.  ``active`` then equals ``arrivals.arrived``, so a synchronous
  kernel applied to an asynchronous run aggregates exactly the arrived clients.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np
import torch

from theorylab.rng import Streams

State = dict[str, torch.Tensor]


class Links(NamedTuple):
    downlink: torch.Tensor  # (R, m) bool: d_i^t, client i received the server's broadcast of round t
    uplink: torch.Tensor  # (R, m) bool: u_i^t, the server received client i's update of round t


class Arrivals(NamedTuple):
    arrived: torch.Tensor  # (R, m) bool: updates the server applies at this step
    staleness: torch.Tensor  # (R, m) int64: server steps since the version each arrived update started from (0 if none)
    dispatched: torch.Tensor  # (R, m) bool: clients that start a new job from the model this step produces
    time: torch.Tensor  # (R,) float64: simulated wall-clock time of this server step
    slotted: bool = False  # an arrival may be a slot filled by an earlier job while the client's next job runs


class Round(NamedTuple):
    t: int  # round (server step) index, from 0
    active: torch.Tensor  # (R, m) bool: the active set A^t of every replica
    probs: np.ndarray  # (m,) the law p_i^t; only "known p" algorithms may read it
    streams: Streams
    links: Links | None = None  # lossy channel masks, when the run has a channel
    arrivals: Arrivals | None = None  # asynchronous arrivals, when the run has a clock


class Algorithm(NamedTuple):
    name: str
    init: Callable[[Any, torch.Tensor], State]
    step: Callable[[State, Round, Any], State]
    points: Callable[[State], dict[str, torch.Tensor]]


def hold_empty(old: State, new: State, active: torch.Tensor) -> State:
    """Keep ``old`` for every replica whose active set is empty this round (on a CPU, ``new`` itself when none is;
    on a GPU that test would wait for the device every round)."""
    empty = ~active.any(dim=1)
    if empty.device.type == "cpu" and not bool(empty.any()):
        return new
    out = {}
    for key, value in new.items():
        shape = (-1,) + (1,) * (value.dim() - 1)
        out[key] = torch.where(empty.view(shape), old[key], value)
    return out
