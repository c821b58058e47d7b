r"""Per-client gradients of the dense models (``mlp``, ``logistic``) by their closed-form backward pass.

A dense model (:class:`theorylab.testbeds.models.MLP`) flattens its input :math:`h_0=a\in\mathbb R^{D_0}` and applies
:math:`z_l = W_l h_{l-1} + b_l`, :math:`h_l=\max(z_l,0)` for the hidden layers :math:`l<L` and
:math:`z_L=W_Lh_{L-1}+b_L` for the logits.  The loss of a minibatch :math:`(a_b,y_b)_{b\le B}` is the mean
cross-entropy :math:`\frac1B\sum_b\big(\log\sum_k e^{z_{L,bk}}-z_{L,by_b}\big)`, whose gradient is the
backward recursion

.. math::
    \delta_L = \tfrac1B\big(\mathrm{softmax}(z_L)-e_{y}\big),\qquad
    \nabla_{W_l} = \delta_l^\top h_{l-1},\quad \nabla_{b_l}=\textstyle\sum_b\delta_{l,b},\qquad
    \delta_{l-1} = (\delta_l W_l)\odot\mathbb 1[z_{l-1}>0].

The indicator is ``torch.relu``'s own subgradient (0 at 0).  Every product is one ``torch.bmm`` over the active
(replica, client) pairs of a chunk, so a round's gradients cost a few batched matrix products instead of a
``vmap`` of autograd (whose per-call tracing dominated the small models' rounds: 2.5 ms per call for the digits
MLP).  The result is the same gradient up to float rounding (the order of the sums differs from autograd's);
``tests/test_dense_grads.py`` checks it against autograd in float64.
"""

from __future__ import annotations

import torch
from torch import nn


def dense_layers(model: nn.Module) -> list[tuple[str, str]]:
    """Names of the (weight, bias) of each linear layer of a dense model, in order; ``ValueError`` for any other
    model (a layer that is neither ``Flatten``, ``Linear`` nor ``ReLU``, or two linear layers without a ReLU)."""
    kinds = [type(m) for m in model.modules() if not list(m.children())]
    expected = [nn.Flatten] + [nn.Linear, nn.ReLU] * ((len(kinds) - 2) // 2) + [nn.Linear]
    if kinds != expected:
        raise ValueError("the dense gradient strategy needs Flatten, then (Linear, ReLU) blocks, then a Linear "
                         f"output; got {[k.__name__ for k in kinds]}")
    names = [name for name, _ in model.named_parameters()]
    return list(zip(names[0::2], names[1::2]))


def dense_backward(params: dict[str, torch.Tensor], layers: list[tuple[str, str]], inputs: torch.Tensor,
                   labels: torch.Tensor) -> dict[str, torch.Tensor]:
    """Gradients of the mean cross-entropy for ``n`` models at once (module docstring).

    ``params[name]`` holds the ``n`` models' parameter (leading axis ``n``), ``inputs`` is ``(n, B, ...)`` and
    ``labels`` ``(n, B)``; the result maps each parameter name to its ``(n, *shape)`` gradient."""
    n, B = labels.shape
    h = [inputs.reshape(n, B, -1)]
    z = []
    for k, (w, b) in enumerate(layers):
        z.append(torch.baddbmm(params[b].unsqueeze(1), h[-1], params[w].transpose(1, 2)))
        if k < len(layers) - 1:
            h.append(torch.relu(z[-1]))
    delta = torch.softmax(z[-1], dim=-1)
    delta.scatter_add_(-1, labels.unsqueeze(-1), torch.full_like(labels, -1, dtype=delta.dtype).unsqueeze(-1))
    delta /= B
    grads = {}
    for k in range(len(layers) - 1, -1, -1):
        w, b = layers[k]
        grads[w] = torch.bmm(delta.transpose(1, 2), h[k])
        grads[b] = delta.sum(dim=1)
        if k:
            delta = torch.bmm(delta, params[w]) * (z[k - 1] > 0)
    return grads
