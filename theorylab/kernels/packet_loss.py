r"""Aggregation under packet losses: DMA, PGA, DMA-PL, UDMA-PL, UPGA-PL and the naive PGA-PL ablation.

Seed 001 Ch. 4 §4.2-4.3, eqs. (4.2), (4.4), (4.5), Algorithm 5; digest 001 §2.2.  Every client with
:math:`d_i=1` runs :math:`K` local SGD steps from :math:`w^{(t)}`
(:func:`theorylab.kernels.local_sgd.local_sgd`); the server receives :math:`\mathcal S^{(t)} = \{i: a_i d_i u_i = 1\}`
(:math:`a_i` the participation mask, all ones in the thesis; :math:`d, u` the channel's
:class:`~theorylab.kernels.algorithm.Links`).  With :math:`\xi_i = \mathbb 1\{i\in\mathcal S\}`, objective weights
:math:`\alpha` and the known loss probabilities :math:`q_i` every aggregator is

.. math::
    w^{(t+1)} = c\,w^{(t)} + \sum_i\omega_i\Delta_i^{(t)},\qquad \Delta_i^{(t)} = w_i^{(t,K)}-w^{(t)},

===========  ======================================================  ====================  ==========================
name         :math:`\omega_i`                                          :math:`c`              source
===========  ======================================================  ====================  ==========================
``dma``      :math:`\alpha_i` (every client, losses ignored)           :math:`\sum\omega`     §4.2 Option 1 (lossless)
``pga``      :math:`\alpha_i` (every client, losses ignored)           1                      Option 2 (lossless)
``dma_pl``   :math:`\xi_i\alpha_i/\sum_j\xi_j\alpha_j`                 :math:`\sum\omega`     (4.2), Chen et al. 2021
``udma_pl``  :math:`\xi_i\alpha_i/(1-q_i)`                             :math:`\sum\omega`     (4.4)
``upga_pl``  :math:`\xi_i\alpha_i/(1-q_i)`                             1                      (4.5), Alg. 5 line 8
``pga_pl``   :math:`\xi_i\alpha_i`                                     1                      digest ablation (biased)
===========  ======================================================  ====================  ==========================

:math:`c = \sum_i\omega_i` is *direct model aggregation*, :math:`w^{(t+1)} = \sum_i\omega_iw_i^{(t,K)}`;
:math:`c = 1` is *pseudo-gradient aggregation*.  ``dma`` with :math:`q\equiv0` is lossless FedAvg (the ``fedavg``
kernel with ``aggregation="all"``), and at :math:`q\equiv0` all six coincide; with dyadic weights (e.g.
:math:`\alpha_i = 1/4`) they coincide bit for bit, because every one then evaluates the same floating-point
expression as ``fedavg``.

**Empty set** (digest §7 item 6).  A pseudo-gradient aggregator keeps :math:`w^{(t)}` when
:math:`\mathcal S=\emptyset` (its sum is empty).  A model aggregator has an ``empty`` policy: ``"hold"`` keeps
:math:`w^{(t)}`, ``"zero"`` returns :math:`c\,w^{(t)} = 0`, the printed formula's value.  Defaults: ``dma_pl`` and
``dma`` hold (the printed 0/0 is undefined), ``udma_pl`` returns zero as (4.4) is printed.

**Channel.** The lossy aggregators read ``rnd.links`` and refuse a run without a channel (``ValueError``): treating a
missing channel as lossless would run UDMA-PL / UPGA-PL with weights :math:`\alpha_i/(1-q_i)` on every client, a
biased scheme nobody asked for.  ``dma`` and ``pga`` ignore the channel: they are the lossless references.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.kernels.aggregation import aggregation_weights
from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.local_sgd import check_local_steps, local_sgd
from theorylab.kernels.schedules import make_schedule
from theorylab.participation.base import check_probabilities
from theorylab.registry import register

# name -> (weights over the received set, model aggregation?, default empty-set policy)
AGGREGATORS = {
    "dma": ("lossless", True, "hold"),
    "pga": ("lossless", False, "hold"),
    "dma_pl": ("normalised", True, "hold"),
    "udma_pl": ("unbiased", True, "zero"),
    "upga_pl": ("unbiased", False, "hold"),
    "pga_pl": ("plain", False, "hold"),
}
EMPTY_POLICIES = ("hold", "zero")


def check_aggregator(aggregator: str, empty: str | None) -> tuple[str, bool, str]:
    """``(weights, model aggregation?, empty policy)`` of ``aggregator``, or a ValueError naming the bad argument."""
    if aggregator not in AGGREGATORS:
        raise ValueError(f"aggregator must be one of {tuple(AGGREGATORS)}; got {aggregator!r}")
    weights, model, default = AGGREGATORS[aggregator]
    empty = default if empty is None else empty
    if empty not in EMPTY_POLICIES:
        raise ValueError(f"empty must be one of {EMPTY_POLICIES}; got {empty!r}")
    if empty == "zero" and not model:
        raise ValueError(f"empty='zero' applies to model aggregators only; {aggregator!r} aggregates pseudo-gradients "
                         "and keeps w^t on an empty round")
    return weights, model, empty


def check_loss(loss, n_clients: int) -> np.ndarray:
    """The known loss probabilities :math:`q_i\\in[0,1)`, one per client."""
    q = check_probabilities("loss", loss, 0.0, 1.0, open_high=True)
    if q.shape != (n_clients,):
        raise ValueError(f"loss must have one probability per client ({n_clients}); got {len(q)}")
    return q


def aggregate(aggregator: str, x: torch.Tensor, end: torch.Tensor, received: torch.Tensor, alpha: torch.Tensor,
              loss: torch.Tensor | None, empty: str | None = None) -> torch.Tensor:
    r"""The aggregators' :math:`w^{(t+1)}` ``(R, d)`` from the server model ``x`` ``(R, d)``, the local models ``end``
    ``(R, m, d)`` and the received mask ``received`` ``(R, m)`` (module docstring; the lossless ``dma``/``pga``
    are given the participation mask, all ones in the thesis)."""
    kind, model, policy = check_aggregator(aggregator, empty)
    if kind == "unbiased" and loss is None:
        raise ValueError(f"{aggregator} needs the loss probabilities (argument loss)")
    scale = alpha / (1.0 - loss) if kind == "unbiased" else alpha
    omega = aggregation_weights("active" if kind == "normalised" else "all", received, scale, None)
    total = omega.sum(1, keepdim=True)
    delta = torch.bmm(omega.unsqueeze(1), end).squeeze(1) - total * x  # sum_i omega_i (end_i - x), as in fedavg
    new = (total * x if model else x) + delta
    if policy == "hold":
        return hold_empty({"x": x}, {"x": new}, received)["x"]
    return new


@register("algorithm", "packet_loss")
def packet_loss(aggregator: str = "upga_pl", loss=None, local_steps: int = 5, lr=0.05,
                empty: str | None = None) -> Algorithm:
    """DMA / PGA / DMA-PL / UDMA-PL / UPGA-PL / PGA-PL under a lossy channel (seed 001 Ch. 4); ``loss`` = known q_i."""
    kind, _, _ = check_aggregator(aggregator, empty)
    steps, schedule = check_local_steps(local_steps), make_schedule(lr)

    def known_loss(problem) -> torch.Tensor | None:
        if loss is None:
            if kind == "unbiased":
                raise ValueError(f"{aggregator} needs the loss probabilities q_i (argument loss)")
            return None
        return torch.as_tensor(check_loss(loss, problem.n_clients), dtype=problem.dtype, device=problem.device)

    def init(problem, x0):
        known_loss(problem)
        return {"x": x0}

    def step(state, rnd, problem):
        x = state["x"]
        if kind == "lossless":
            received = rnd.active
        elif rnd.links is None:
            raise ValueError(f"{aggregator} needs a lossy channel: configure RunConfig(channel=...)")
        else:
            received = rnd.active & rnd.links.downlink & rnd.links.uplink
        start = x.unsqueeze(1).expand(-1, problem.n_clients, -1)
        end = local_sgd(problem, start, steps, schedule(rnd.t), rnd.streams, received)
        return {"x": aggregate(aggregator, x, end, received, problem.weights, known_loss(problem), empty)}

    return Algorithm(f"packet_loss[{aggregator}]", init, step, lambda state: {"server": state["x"]})
