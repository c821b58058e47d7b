r"""Bursty packet losses: a Gilbert–Elliott channel on each link of each client.

The thesis models losses as independent over rounds (seed 001 Ch. 4 §4.2, Assumption 14) and leaves correlated
losses — fading, interference — to future work, pointing to Markov-chain tools (§4.5; digest 001 ch. 4–6 §2.1,
§7).  The Gilbert–Elliott channel is the classical such model.  Each link :math:`\ell\in\{\text{down},\text{up}\}`
of client :math:`i` has a hidden state :math:`s^{(t)}\in\{G, B\}`, a Markov chain with

.. math::
    \mathbb P(s^{(t+1)}=B\mid s^{(t)}=G) = b,\qquad \mathbb P(s^{(t+1)}=G\mid s^{(t)}=B) = g,

and in round :math:`t` the packet is lost with probability :math:`e_G` or :math:`e_B` given the state.  Its
stationary law and the law of its losses :math:`L^{(t)}` are closed forms (:func:`stationary_loss`,
:func:`loss_covariance`):

.. math::
    \pi_B = \frac{b}{b+g},\qquad \bar q = \mathbb P(L^{(t)}=1) = (1-\pi_B)e_G + \pi_Be_B,\qquad
    \operatorname{Cov}(L^{(t)}, L^{(t+k)}) = \pi_B(1-\pi_B)(e_B-e_G)^2(1-b-g)^k \quad (k\ge1),

so the losses have the marginal of an i.i.d. channel with :math:`q=\bar q` but are positively correlated when
:math:`1-b-g>0` (mean burst of the bad state :math:`1/g` rounds).  The state starts in its stationary law, so every
round's marginal is :math:`\bar q`: UPGA-PL's weights :math:`\alpha_i/(1-\bar q_i)` stay unbiased round by round,
while the rounds are no longer independent.  ``b = 1 - g`` (:math:`1-b-g = 0`) gives i.i.d. losses with
:math:`q = \bar q`; :math:`e_G = 0, e_B = 1` is Gilbert's original channel.

Draw layout (``channel`` stream, per replica): ``init`` draws ``(2, m)`` uniforms (row 0 downlink, row 1 uplink) and
sets :math:`s=B` where :math:`U<\pi_B`; each round draws the two delivery rows exactly as
:func:`theorylab.channels.bernoulli_loss.deliver` does, then ``(2, m)`` uniforms that move the state
(:math:`G\to B` where :math:`U<b`, :math:`B\to G` where :math:`U<g`).  The runner records ``channel.bad_down`` and
``channel.bad_up``, the fraction of clients in the bad state.

The exact engine :func:`theorylab.exact.lossy_moments.lossy_moments` assumes rounds independent and refuses this
channel (``memoryless`` is false).
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.channels.bernoulli_loss import DeliveryLaw, deliver
from theorylab.participation.base import check_probabilities
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.validation import integer

LINK_KEYS = ("to_bad", "to_good", "good", "bad")


def stationary_bad(to_bad, to_good) -> np.ndarray:
    r""":math:`\pi_B = b/(b+g)`."""
    b, g = np.asarray(to_bad, dtype=np.float64), np.asarray(to_good, dtype=np.float64)
    return b / (b + g)


def stationary_loss(to_bad, to_good, good, bad) -> np.ndarray:
    r"""The stationary loss probability :math:`\bar q = (1-\pi_B)e_G + \pi_Be_B`."""
    pi = stationary_bad(to_bad, to_good)
    return (1.0 - pi) * np.asarray(good, dtype=np.float64) + pi * np.asarray(bad, dtype=np.float64)


def loss_covariance(to_bad, to_good, good, bad, lag: int) -> np.ndarray:
    r""":math:`\operatorname{Cov}(L^{(t)},L^{(t+k)})` in the stationary regime: :math:`\bar q(1-\bar q)` at
    :math:`k=0`, else :math:`\pi_B(1-\pi_B)(e_B-e_G)^2(1-b-g)^k`."""
    lag = integer("lag", lag, 0)
    if lag == 0:
        q = stationary_loss(to_bad, to_good, good, bad)
        return q * (1.0 - q)
    pi = stationary_bad(to_bad, to_good)
    b, g = np.asarray(to_bad, dtype=np.float64), np.asarray(to_good, dtype=np.float64)
    return pi * (1.0 - pi) * (np.asarray(bad) - np.asarray(good)) ** 2 * (1.0 - b - g) ** lag


def _link(name: str, spec, m: int | None) -> dict[str, np.ndarray]:
    """A link's four parameters as ``(m,)`` arrays (a scalar is broadcast), validated; ``None`` = lossless."""
    if spec is None:
        return {key: np.zeros(m or 1) for key in LINK_KEYS} | {"to_good": np.ones(m or 1)}
    if not isinstance(spec, dict) or set(spec) != set(LINK_KEYS):
        raise ValueError(f"{name} must be a dict with keys {', '.join(LINK_KEYS)} (each a probability or one per "
                         f"client); got {spec!r}")
    sizes = {len(np.atleast_1d(v)) for v in spec.values()} - {1}
    if len(sizes) > 1:
        raise ValueError(f"{name}'s per-client lists must all have one entry per client; got lengths {sorted(sizes)}")
    if m is not None and sizes and sizes != {m}:
        raise ValueError(f"{name}'s per-client lists have {sizes.pop()} entries, which does not match n_clients = {m}")
    n = m or (sizes.pop() if sizes else 1)
    link = {key: check_probabilities(f"{name}.{key}", np.broadcast_to(np.atleast_1d(np.asarray(spec[key], dtype=float)),
                                                                      (n,)).copy())
            for key in LINK_KEYS}
    stuck = link["to_bad"] + link["to_good"] == 0
    if stuck.any():
        raise ValueError(f"{name}: to_bad + to_good = 0 for client {int(np.argmax(stuck))}: the state never moves, "
                         "so the channel has no stationary law")
    q = stationary_loss(**link)
    if (q >= 1.0).any():
        raise ValueError(f"{name}: the stationary loss probability is 1 for client {int(np.argmax(q >= 1.0))}: it "
                         "never delivers, and the unbiased aggregators' weight alpha_i / (1 - q_i) is infinite")
    return link


class GilbertElliott:
    """Gilbert–Elliott losses on the downlink and the uplink of every client (module docstring)."""

    memoryless = False  # losses are correlated over rounds: engines that assume independent rounds refuse it

    def __init__(self, downlink: dict[str, np.ndarray], uplink: dict[str, np.ndarray]):
        self.links = (downlink, uplink)
        self.n_clients = len(uplink["bad"])

    def _param(self, key: str, device) -> torch.Tensor:
        """``(2, m)``: the parameter ``key`` of the downlink (row 0) and the uplink (row 1)."""
        return torch.as_tensor(np.stack([link[key] for link in self.links]), dtype=torch.float64, device=device)

    def stationary(self) -> DeliveryLaw:
        """The stationary per-round delivery law (the marginal of every round, not a law of independent rounds)."""
        down, up = (1.0 - stationary_loss(**link) for link in self.links)
        return DeliveryLaw(down, up, down * up)

    def init(self, replicas: int, streams: Streams) -> torch.Tensor:
        """The ``(R, 2, m)`` bad-state indicators, drawn from the stationary law."""
        pi = torch.as_tensor(np.stack([stationary_bad(link["to_bad"], link["to_good"]) for link in self.links]),
                             device=streams.device)
        return streams.uniform("channel", (2, self.n_clients)) < pi

    def draw(self, state: torch.Tensor, t: int, streams: Streams):
        """Deliver with the state's loss probabilities, then move the state one step (module docstring)."""
        dev = state.device
        loss = torch.where(state, self._param("bad", dev), self._param("good", dev))
        links = deliver(loss[:, 0], loss[:, 1], streams)
        u = streams.uniform("channel", (2, self.n_clients))
        moved = torch.where(state, u < self._param("to_good", dev), u < self._param("to_bad", dev))
        return state ^ moved, links

    def metrics(self, state: torch.Tensor) -> dict[str, torch.Tensor]:
        """Fractions of clients whose downlink / uplink is in the bad state, per replica."""
        bad = state.to(torch.float64).mean(-1)
        return {"bad_down": bad[:, 0], "bad_up": bad[:, 1]}


@register("channel", "gilbert_elliott")
def gilbert_elliott(downlink=None, uplink=None, n_clients: int | None = None) -> GilbertElliott:
    """Bursty (Markov) packet losses: per link {to_bad, to_good, good, bad} (seed 001 §4.5's correlated losses).

    ``to_bad``/``to_good`` are the state's switching probabilities per round, ``good``/``bad`` the loss
    probabilities in each state; each a probability or one per client.  An omitted link is lossless."""
    if downlink is None and uplink is None:
        raise ValueError("gilbert_elliott needs a downlink or an uplink (a dict with keys "
                         f"{', '.join(LINK_KEYS)})")
    m = None if n_clients is None else integer("n_clients", n_clients, 1)
    first = _link("uplink" if downlink is None else "downlink", uplink if downlink is None else downlink, m)
    m = len(first["bad"]) if m is None else m
    other = _link("downlink" if downlink is None else "uplink", downlink if downlink is None else uplink, m)
    down, up = (other, first) if downlink is None else (first, other)
    return GilbertElliott(down, up)
