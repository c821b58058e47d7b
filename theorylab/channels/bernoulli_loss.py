r"""Independent packet losses on the downlink and the uplink (seed 001 Ch. 4 §4.2, Assumption 14; digest 001 §2.1).

In round :math:`t` client :math:`i` receives the broadcast :math:`w^{(t)}` with probability :math:`1-q_{si}`
(:math:`d_i^{(t)}=1`) and the server receives its update with probability :math:`1-q_{is}` (:math:`u_i^{(t)}=1`),
independently across clients, links and rounds.  The server therefore sees client :math:`i` when
:math:`\xi_i^{(t)} = d_i^{(t)}u_i^{(t)} = 1`, with

.. math:: \mathbb P(\xi_i = 1) = (1-q_{si})(1-q_{is}) = 1 - q_i,\qquad q_i = 1-(1-q_{si})(1-q_{is}),

the thesis' total loss probability :math:`q_i` (with ARQ/FEC, the residual loss after retransmission).  A loss
probability of 1 is refused: such a client never delivers, and the unbiased aggregators' weight
:math:`\alpha_i/(1-q_i)` would be infinite.

Draw layout: each round takes ``(2, m)`` uniforms per replica from the ``channel`` stream, row 0 for the downlink and
row 1 for the uplink (:math:`d_i = \mathbb 1\{U_{0i} < 1-q_{si}\}`), so a run's participation and gradient draws do
not change when a channel is added, and replica :math:`r`'s losses do not depend on the other replicas.

**Correlated losses.**  The thesis leaves them (fading, interference) to future work (§4.5);
:mod:`theorylab.channels.gilbert_elliott` is the Markov channel with the same marginal law and :func:`deliver`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from theorylab.kernels.algorithm import Links
from theorylab.participation.base import check_probabilities
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.validation import integer


class DeliveryLaw(NamedTuple):
    """Per-client delivery probabilities, each ``(m,)``: :math:`P(d_i)`, :math:`P(u_i)` and :math:`P(\\xi_i)`."""

    downlink: np.ndarray
    uplink: np.ndarray
    received: np.ndarray

    @property
    def loss(self) -> np.ndarray:
        """The total loss probabilities :math:`q_i = 1-P(\\xi_i)`."""
        return 1.0 - self.received


def deliver(down_loss: torch.Tensor, up_loss: torch.Tensor, streams: Streams) -> Links:
    """One round's :class:`~theorylab.kernels.algorithm.Links` for ``(R, m)`` (or ``(m,)``) loss probabilities:
    :math:`d_i=\\mathbb 1\\{U_{0i}<1-q_{si}\\}`, :math:`u_i=\\mathbb 1\\{U_{1i}<1-q_{is}\\}` from the ``channel``
    stream."""
    u = streams.uniform("channel", (2, down_loss.shape[-1]))
    return Links(u[:, 0] < 1.0 - down_loss, u[:, 1] < 1.0 - up_loss)


class BernoulliLoss:
    """I.i.d. Bernoulli losses with per-client downlink :math:`q_{si}` and uplink :math:`q_{is}` probabilities."""

    memoryless = True  # losses independent over rounds (the exact engines rely on it)

    def __init__(self, downlink, uplink):
        self.down = check_probabilities("downlink", downlink, 0.0, 1.0, open_high=True)
        self.up = check_probabilities("uplink", uplink, 0.0, 1.0, open_high=True)
        if self.down.shape != self.up.shape:
            raise ValueError("downlink and uplink need one loss probability per client each; got "
                             f"{len(self.down)} and {len(self.up)}")
        self.n_clients = len(self.down)

    def probabilities(self) -> DeliveryLaw:
        """The delivery law the exact engines read (constant over rounds)."""
        return DeliveryLaw(1.0 - self.down, 1.0 - self.up, (1.0 - self.down) * (1.0 - self.up))

    def init(self, replicas: int, streams: Streams):
        return None

    def draw(self, state, t: int, streams: Streams) -> tuple[object, Links]:
        as_tensor = lambda q: torch.as_tensor(q, dtype=torch.float64, device=streams.device)  # noqa: E731
        return state, deliver(as_tensor(self.down), as_tensor(self.up), streams)


@register("channel", "bernoulli_loss")
def bernoulli_loss(downlink=None, uplink=None, n_clients: int | None = None) -> BernoulliLoss:
    """I.i.d. packet losses: per-client downlink q_si and uplink q_is in [0, 1) (seed 001 Ch. 4, A14).

    Either list may be omitted (no loss on that link) when the other is given or ``n_clients`` is."""
    if downlink is None and uplink is None and n_clients is None:
        raise ValueError("bernoulli_loss needs downlink, uplink or n_clients")
    if n_clients is not None:
        n_clients = integer("n_clients", n_clients, 1)
    m = n_clients if downlink is None and uplink is None else len(np.atleast_1d(downlink if downlink is not None
                                                                                  else uplink))
    if n_clients is not None and n_clients != m:
        raise ValueError(f"n_clients = {n_clients} does not match the {m} loss probabilities given")
    zeros = np.zeros(int(m))
    return BernoulliLoss(zeros if downlink is None else downlink, zeros if uplink is None else uplink)
