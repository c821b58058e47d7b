"""The participation-process contract and parameter checks shared by all processes.

A process is an object with

* ``n_clients``;
* ``memoryless``: ``True`` when the indicators ``1{i in A^t}`` are independent
  across clients and rounds with marginals ``probabilities(t)`` (the setting of
  FedAWE A1 and of the exact-moment engine);
* ``probabilities(t)``: the marginals :math:`p_i^t = P(i \\in \\mathcal A^t)`, shape ``(m,)``;
* ``init(replicas, streams) -> state`` and ``draw(state, t, streams) -> (state, mask)``,
  rounds numbered from 0 and drawn in order.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from theorylab.rng import Streams
from theorylab.validation import integer, floats


@runtime_checkable
class Participation(Protocol):
    n_clients: int
    memoryless: bool

    def probabilities(self, t: int) -> np.ndarray: ...

    def init(self, replicas: int, streams: Streams) -> Any: ...

    def draw(self, state: Any, t: int, streams: Streams) -> tuple[Any, torch.Tensor]: ...


def check_clients(n_clients: int) -> int:
    """``n_clients`` as an ``int`` >= 1 (a participation process needs at least one client)."""
    return integer("n_clients (at least one client)", n_clients, 1)


def check_probabilities(name: str, values, low: float = 0.0, high: float = 1.0,
                        open_low: bool = False, open_high: bool = False) -> np.ndarray:
    """Return ``values`` as a float array, or raise a ValueError naming the first entry outside the range."""
    arr = floats(name, values)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence (one entry per client); got shape {arr.shape}")
    bad_low = arr <= low if open_low else arr < low
    bad_high = arr >= high if open_high else arr > high
    bad = ~np.isfinite(arr) | bad_low | bad_high
    if bad.any():
        i = int(np.argmax(bad))
        interval = f"{'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
        raise ValueError(f"{name}[{i}] = {arr[i]:g} is outside the allowed range {interval}")
    return arr


def availability_bounds(process: Participation, rounds: int) -> tuple[float, float]:
    """:math:`(\\delta, \\delta_{\\max}) = (\\min, \\max)` of :math:`p_i^t` over clients and rounds ``t < rounds``."""
    table = np.stack([process.probabilities(t) for t in range(rounds)])
    return float(table.min()), float(table.max())


def bernoulli_mask(probs: np.ndarray, streams: Streams) -> torch.Tensor:
    """Independent Bernoulli(p_i) indicators for every replica: ``u < p`` with ``u`` from the participation stream."""
    u = streams.uniform("participation", (len(probs),))
    return u < torch.as_tensor(probs, device=u.device, dtype=u.dtype)
