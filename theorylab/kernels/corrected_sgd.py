r"""Local SGD with an affine gradient correction: the client routine of SCAFFOLD, FedProx and FedDyn.

Digest 002 §1.7 [EXTERNAL definitions].  From :math:`y_i^{(0)} = x` every client runs

.. math:: y_i^{(k+1)} = y_i^{(k)} - \eta_l\big(\nabla F_i(y_i^{(k)};\xi_i^{(k)}) + \mu\,(y_i^{(k)} - x) + s_i\big),
    \quad k = 0,\dots,\mathcal I-1,

the gradient of :math:`F_i(y) + \frac\mu2\|y-x\|^2 + \langle s_i, y\rangle`: FedProx is :math:`\mu>0, s=0`,
SCAFFOLD :math:`\mu = 0, s_i = c - c_i`, FedDyn :math:`\mu = \alpha, s_i = -\nabla_i^{\rm prev}`.  With
:math:`\mu = 0, s = 0` it is :func:`theorylab.kernels.local_sgd.local_sgd`, and it draws the ``gradient`` stream in the
same layout (every client, every step), so these baselines share FedAvg's noise.
"""

from __future__ import annotations

import torch

from theorylab.kernels.client_work import client_work
from theorylab.rng import Streams


def check_nonnegative(name: str, value: float) -> float:
    """``value`` as a float, or a ValueError naming ``name`` unless it is finite and >= 0."""
    if not 0 <= float(value) < float("inf"):
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    return float(value)


def corrected_sgd(problem, x: torch.Tensor, steps: int, lr: float, streams: Streams, active: torch.Tensor,
                  pull: float = 0.0, shift: torch.Tensor | None = None) -> torch.Tensor:
    """End points ``(R, N, d)`` of ``steps`` corrected SGD steps from the server model ``x`` ``(R, d)``."""
    full = x.unsqueeze(1).expand(-1, problem.n_clients, -1)
    work = client_work(problem, streams, steps, active)
    anchor = work.gather(full)
    shift = None if shift is None else work.gather(shift)
    y = anchor
    for k in range(steps):
        g = work.grads(y, k)
        if pull:
            g = g.add_(y - anchor, alpha=pull)
        if shift is not None:
            g = g.add_(shift)
        y = g.mul_(-lr).add_(y)
    return work.scatter(full, y)
