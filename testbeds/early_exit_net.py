r"""A small early-exit MLP trained by Fed-CIS on images, batched over replicas (seed 001 Ch. 5 §5.4, at small scale).

Labelled substitution for the thesis' ResNet-18 with exits after residual blocks (2, 5) on CIFAR (digest
001_thesis_ch4-6 §3.6): a trunk of ``E`` fully connected ReLU blocks of width ``hidden``, exit :math:`e` a linear
head on block :math:`e`'s output, trained on flattened images.  All parameters form one flat vector per replica
(layout :func:`layout`), so Algorithm 6's server step is :func:`theorylab.cis.aggregation.aggregate` itself.

One round of :func:`train_fedcis`: every node draws its exit from :math:`p` (``participation`` stream), runs
:math:`K` steps of minibatch SGD on the cross-entropy of that exit only (batch indices from the ``gradient``
stream; heavy-ball momentum reset every round and weight decay, as in the thesis' optimiser, §5.4.3), and the
server aggregates.  Each replica draws its own data partition (``data`` stream) and initial model (``init``).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from theorylab.cis.aggregation import aggregate
from theorylab.cis.sampling import draw
from theorylab.rng import Streams


def flat_standardised(images) -> tuple[torch.Tensor, torch.Tensor]:
    """A single-channel :class:`~theorylab.testbeds.data.ImageSet` as ``(n, H*W)`` float32 inputs scaled and
    standardised by its first channel's mean and std, and its labels (the early-exit MLP's inputs)."""
    x = torch.as_tensor(images.images.reshape(len(images.labels), -1) / images.scale, dtype=torch.float32)
    return (x - images.mean[0]) / images.std[0], torch.as_tensor(images.labels)


def layout(in_dim: int, hidden: int, classes: int, n_exits: int) -> list[tuple[str, tuple[int, ...]]]:
    """Names and shapes of the flat parameter vector: trunk blocks ``W{b}``, ``b{b}`` and heads ``H{e}``, ``c{e}``."""
    if min(in_dim, hidden, classes, n_exits) < 1:
        raise ValueError(f"in_dim, hidden, classes and n_exits must be >= 1; got {in_dim}, {hidden}, {classes}, "
                         f"{n_exits}")
    out = []
    for b in range(n_exits):
        out += [(f"W{b}", (in_dim if b == 0 else hidden, hidden)), (f"b{b}", (hidden,)),
                (f"H{b}", (hidden, classes)), (f"c{b}", (classes,))]
    return out


def unflatten(theta: torch.Tensor, shapes) -> dict[str, torch.Tensor]:
    """Views of ``theta`` ``(R, P)`` as ``{name: (R, *shape)}``."""
    out, start = {}, 0
    for name, shape in shapes:
        size = math.prod(shape)
        out[name] = theta[:, start:start + size].reshape(theta.shape[0], *shape)
        start += size
    return out


def init_params(shapes, streams: Streams) -> torch.Tensor:
    """He-normal weights (std sqrt(2 / fan_in)), zero biases, from the ``init`` stream: ``(R, P)`` float32."""
    parts = []
    for name, shape in shapes:
        if len(shape) == 1:
            parts.append(torch.zeros(streams.replicas, shape[0]))
        else:
            z = streams.normal("init", shape, dtype=torch.float32, scale=math.sqrt(2.0 / shape[0]))
            parts.append(z.reshape(streams.replicas, -1))
    return torch.cat(parts, dim=1)


def exit_logits(theta: torch.Tensor, x: torch.Tensor, shapes) -> list[torch.Tensor]:
    """Logits ``(R, B, C)`` of every exit for inputs ``x`` ``(R, B, in_dim)``."""
    p, h, out = unflatten(theta, shapes), x, []
    for b in range(len(shapes) // 4):
        h = torch.relu(torch.einsum("rbi,rih->rbh", h, p[f"W{b}"]) + p[f"b{b}"][:, None])
        out.append(torch.einsum("rbh,rhc->rbc", h, p[f"H{b}"]) + p[f"c{b}"][:, None])
    return out


def train_fedcis(images: torch.Tensor, labels: torch.Tensor, node_sizes, p, alpha, rounds: int, local_steps: int,
                 batch: int, lr: Callable[[int], float], streams: Streams, shapes, momentum: float = 0.9,
                 weight_decay: float = 5e-4) -> torch.Tensor:
    r"""Fed-CIS on the early-exit MLP; ``alpha`` is ``(N, E)`` or per replica ``(R, N, E)``; ``node_sizes`` split
    each replica's random permutation of the training set among the nodes.  Returns the final ``(R, P)`` model."""
    sizes = np.asarray(node_sizes)
    if sizes.sum() > len(labels) or (sizes < 1).any():
        raise ValueError(f"node_sizes must be >= 1 and sum to at most {len(labels)}; got {sizes.tolist()}")
    if rounds < 1 or local_steps < 1 or batch < 1:
        raise ValueError(f"rounds, local_steps and batch must be >= 1; got {rounds}, {local_steps}, {batch}")
    p = np.asarray(p)
    replicas, n_nodes = streams.replicas, len(sizes)
    alpha = np.broadcast_to(np.asarray(alpha), (replicas, *p.shape))
    order = torch.argsort(streams.uniform("data", (len(labels),)), dim=1)  # each replica's partition
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    theta = init_params(shapes, streams)
    rows, first = torch.arange(replicas)[:, None, None], torch.as_tensor(starts)[None, :, None]
    for t in range(1, rounds + 1):
        chosen = draw(p, streams.uniform("participation", (n_nodes,)).numpy())  # (R, N)
        picks = streams.uniform("gradient", (local_steps, n_nodes, batch))
        mask = torch.nn.functional.one_hot(torch.as_tensor(np.maximum(chosen, 0)), p.shape[1]).float()
        mask = (mask * torch.as_tensor(chosen >= 0)[..., None].float()).reshape(replicas * n_nodes, -1)
        v = theta.repeat_interleave(n_nodes, dim=0)  # every node's local model, (R * N, P)
        velocity = torch.zeros_like(v)
        for k in range(local_steps):
            index = order[rows, first + (picks[:, k] * torch.as_tensor(sizes)[None, :, None]).long()]  # (R, N, B)
            index = index.reshape(replicas * n_nodes, batch)
            v.requires_grad_(True)
            losses = torch.stack([torch.nn.functional.cross_entropy(z.transpose(1, 2), labels[index],
                                                                    reduction="none").mean(1)
                                  for z in exit_logits(v, images[index], shapes)], dim=1)  # (R * N, E)
            grad, = torch.autograd.grad((losses * mask).sum(), v)
            with torch.no_grad():
                velocity = momentum * velocity - lr(t) * (grad + weight_decay * v)
                v = v.detach() + velocity
        deltas = (v.detach().reshape(replicas, n_nodes, -1) - theta[:, None]).numpy()
        theta = torch.as_tensor(np.concatenate([aggregate(theta[r:r + 1].numpy(), deltas[r:r + 1], chosen[r:r + 1], p,
                                                          alpha[r]) for r in range(replicas)]), dtype=torch.float32)
    return theta


def exit_predictions(theta: torch.Tensor, images: torch.Tensor, shapes) -> tuple[np.ndarray, np.ndarray]:
    """``(logits (R, E, n, C), predicted labels (R, E, n))`` of every exit on ``images`` ``(n, in_dim)``."""
    with torch.no_grad():
        x = images[None].expand(theta.shape[0], -1, -1)
        logits = torch.stack(exit_logits(theta, x, shapes), dim=1)
    return logits.numpy(), logits.argmax(-1).numpy()
