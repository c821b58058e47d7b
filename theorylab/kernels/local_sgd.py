r"""Local SGD, the client routine shared by the FedAvg family (seed 001 Alg. 1; seed 000 Alg. 1 lines 5–8).

.. math:: x_i^{(t,k+1)} = x_i^{(t,k)} - \eta_l\, \nabla\ell_i(x_i^{(t,k)};\xi_i^{(t,k)}),\quad k = 0,\dots,s-1,

for every replica and client at once, or for the active ones only: ``active`` (``(R, m)`` bool) tells which
clients' results will be used, and :func:`theorylab.kernels.client_work.client_work` then computes (and draws the
noise of) those rows alone when the problem can (the quadratic), while a looped problem (a network) skips the
inactive ones itself; the returned rows of inactive clients are meaningless either way.  A problem that computes
clients one at a time may run the round client by client (``client_major_sgd``, the network testbed's ``loop``
strategy): the same floats, with each client's parameters kept in cache through its steps.

:func:`local_deltas` is the FedAvg-type client of FedAWE's baselines (digest 000 §2.4): every client
starts from the server model :math:`x^t` and returns :math:`\Delta_i^t = x_i^{(t,s)} - x^t`.  Digest 001 §6 item 14:
seed 001's (1.5) omits :math:`\eta_c` from the update; our :math:`\Delta_i` includes the local step size.
"""

from __future__ import annotations

import torch

from theorylab.kernels.client_work import DenseWork, PairWork, client_work
from theorylab.rng import Streams
from theorylab.validation import integer


def check_local_steps(local_steps) -> int:
    """``local_steps`` as an ``int``, or a ValueError unless it is an integer >= 1."""
    return integer("local_steps", local_steps, 1)


def local_sgd(problem, start: torch.Tensor, steps: int, lr: float, streams: Streams,
              active: torch.Tensor | None = None, compute_all: bool = False) -> torch.Tensor:
    """Run ``steps`` SGD steps from ``start`` of shape ``(R, m, d)``; returns the end points (the rows of idle
    clients are meaningless when ``active`` is given, unless ``compute_all``: :mod:`theorylab.kernels.client_work`)."""
    work = client_work(problem, streams, steps, active, compute_all)
    if isinstance(work, (DenseWork, PairWork)) and hasattr(problem, "client_major_sgd"):
        end = problem.client_major_sgd(start, work.samples, lr, work.active)  # the same floats, client by client
        if end is not None:
            return end
    x = work.gather(start)
    for k in range(steps):
        x = work.grads(x, k).mul_(-lr).add_(x)  # fresh gradient buffer, reused
    return work.scatter(start, x)


def local_deltas(problem, x: torch.Tensor, steps: int, lr: float, streams: Streams,
                 active: torch.Tensor | None = None) -> torch.Tensor:
    """:math:`\\Delta_i = x_i^{(t,s)} - x` for every client, starting from the server model ``x`` ``(R, d)``;
    returns ``(R, m, d)``."""
    start = x.unsqueeze(1).expand(-1, problem.n_clients, -1)
    return local_sgd(problem, start, steps, lr, streams, active).sub_(x.unsqueeze(1))
