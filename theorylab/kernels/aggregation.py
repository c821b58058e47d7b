r"""Server aggregation weights of the FedAvg family: :math:`\Delta^t = \sum_i w_i(\mathcal A^t)\,\Delta_i^t`.

With objective weights (or user weights) :math:`q` and :math:`a_i = \mathbb 1\{i\in\mathcal A^t\}`:

============  ===================================================  ==================================================
``active``    :math:`w_i = a_iq_i / \sum_j a_jq_j` (0 if empty)      FedAvg over active clients (seed 000 [32]);
                                                                     thesis (3.2); AdaFed when :math:`q=\alpha/\pi`
``all``       :math:`w_i = a_iq_i`                                   FedAvg over all clients (:math:`q=1/m`); the
                                                                     thesis' generic unnormalised scheme (2.2)–(2.3)
``known_p``   :math:`w_i = a_iq_i/p_i^t`                             FedAvg with known :math:`p_i^t` (seed 000 [42]);
                                                                     U-FedAvg, thesis (3.5)
============  ===================================================  ==================================================

``q`` defaults to the problem's objective weights :math:`\alpha`.  The thesis'
unbiased choice is ``all`` with :math:`q_i = \alpha_i/\pi_i` (:func:`unbiased_weights`).  Its Ch. 2 baselines
(seed 001 §2.5.1; digest 001 §2.5) are all expressed by the kinds above: Unbiased = ``all`` with
:math:`q=\alpha/\pi`; AdaFed = ``active`` with :math:`q=\alpha/\pi`; More available = ``all`` with
:math:`q_i=\alpha_i/\pi_i` on the more available clients and 0 on the others (the thesis leaves the included
clients' weights open; digest §2.5 item 2).  CA-Fed is its own kernel (:mod:`theorylab.kernels.cafed`).
"""

from __future__ import annotations

import numpy as np
import torch

AGGREGATIONS = ("active", "all", "known_p")


def check_aggregation(kind: str) -> str:
    if kind not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}; got {kind!r}")
    return kind


def aggregation_weights(kind: str, active: torch.Tensor, q: torch.Tensor, probs: np.ndarray | None) -> torch.Tensor:
    """The weights :math:`w_i(\\mathcal A)` for a batch of active sets ``active`` of shape ``(..., m)``."""
    a = active.to(q.dtype) * q
    if kind == "active":
        total = a.sum(-1, keepdim=True)
        return a / torch.where(total > 0, total, torch.ones_like(total))
    if kind == "all":
        return a
    if kind == "known_p":
        p = torch.as_tensor(probs, dtype=q.dtype, device=q.device)
        return a / torch.where(p > 0, p, torch.ones_like(p))
    raise ValueError(f"aggregation must be one of {AGGREGATIONS}; got {kind!r}")


def unbiased_weights(alpha, pi) -> np.ndarray:
    """:math:`q_i = \\alpha_i/\\pi_i`, which makes the thesis' biased objective equal the true one."""
    alpha, pi = np.asarray(alpha, dtype=np.float64), np.asarray(pi, dtype=np.float64)
    if np.any(pi <= 0):
        raise ValueError("unbiased weights need every participation probability pi_i > 0")
    return alpha / pi
