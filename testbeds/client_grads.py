r"""Per-client minibatch gradients of the network testbed (:class:`theorylab.testbeds.network.Network`): the
gradient strategies, the round's local SGD one client at a time, and the randomness of a local step.

Per-client gradients are computed by a pluggable *strategy* on the active clients only:

* ``loop``: one ``autograd.grad`` per client through :func:`torch.func.functional_call`;
* ``vmap``: :func:`torch.func.vmap` of :func:`torch.func.grad` over the active clients, in chunks of
  ``chunk_size`` clients;
* ``dense``: the closed-form backward pass of the dense models (``mlp``, ``logistic``) as batched matrix products
  over chunks of ``chunk_size`` clients (:mod:`theorylab.testbeds.dense_grads`);
* ``auto`` (default): ``dense`` for the dense models, else ``loop`` for conv models on a CPU and for models with
  dropout, ``vmap`` otherwise.

Dropout (``cnn_cinic``) draws its masks from a generator seeded, for every (replica, client, local
step), from the ``data`` stream, so a client's masks do not depend on which other clients are
active and algorithms run with the same seed see the same masks (common random numbers).  ``vmap``
cannot keep that: one generator state serves a whole chunk, so a client's masks would depend on the
chunk's composition.  It is therefore refused for models with dropout, and runs with randomness
forbidden (``randomness="error"``) for the others.

``vmap`` is refused for conv models in float32 on a CPU.  There it is 3-10x slower than the loop and
its conv backward is unreliable: deps_and_data.md §2.4 found wrong conv-weight gradients for 3 of 100
clients with oneDNN on (fixed by turning oneDNN off); on the FedAWE CIFAR CNN here (torch 2.13, 100
clients, B = 64) oneDNN *on* was right and oneDNN *off* gave one client a 2.2% relative error in the
conv and first FC gradients, with ``chunk_size`` 1 too, while the forward pass agreed to 1e-5.  In
float64 (the strategy test) both strategies agree to 1e-15.

On CUDA every forward and backward pass of the testbed runs in :func:`exact_cudnn`: cuDNN's deterministic
algorithms, no autotuning, and no TF32.  TF32 (cuDNN's default for float32 convolutions) rounds inputs to a
10-bit mantissa; on an H100 it gave per-client gradient errors of 1.8% (``loop``) and 4.3% (``vmap``) relative
to float64 on the CIFAR CNN, so a ``dtype="float32"`` run would not be float32.  The nondeterministic
algorithms would break "the same seed gives the same trace" (:mod:`theorylab.rng`).  A CPU run is unaffected.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from theorylab.testbeds.dense_grads import dense_backward, dense_layers

if TYPE_CHECKING:
    from theorylab.testbeds.network import Network

STRATEGIES = ("auto", "loop", "vmap", "dense")


def exact_cudnn():
    """cuDNN in float32 as float32 and reproducible: deterministic algorithms, no benchmark search, no TF32
    (module docstring); the previous flags come back on exit."""
    return torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=True, allow_tf32=False)


class Draw(NamedTuple):
    """The randomness of one local step: for every replica and client, a minibatch and its transforms."""

    index: torch.Tensor  # (R, m, B) dataset indices
    crop: torch.Tensor | None  # (R, m, 2) crop offsets in [0, 2 * network.CROP_PADDING]
    flip: torch.Tensor | None  # (R, m) bool
    seed: torch.Tensor | None  # (R, m) dropout seeds


@contextlib.contextmanager
def _dropout_rng(device: torch.device, seed):
    """Dropout draws from a generator seeded by the data stream; the global RNG state is restored on exit."""
    if seed is None:
        yield
        return
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        if device.type == "cuda":
            torch.cuda.manual_seed(int(seed))
        else:
            torch.random.default_generator.manual_seed(int(seed))
        yield


def _per_pair(draw: Draw, pairs: torch.Tensor) -> Draw:
    """The draw's entries of the (replica, client) ``pairs``, each with a leading axis over pairs."""
    r, i = pairs[:, 0], pairs[:, 1]
    return Draw(*(None if t is None else t[r, i] for t in draw))


def _part(t: torch.Tensor | None, part: slice) -> torch.Tensor | None:
    return None if t is None else t[part]


def _client_grad(problem: Network, flat: torch.Tensor, rows: Draw, j: int, out: torch.Tensor) -> None:
    """The minibatch gradient of one client at its flat parameters ``flat`` on pair ``j``'s draw of ``rows``,
    written into ``out`` ``(d,)``.  The parameters are leaf views of ``flat`` and each parameter's gradient is
    copied straight into its slice of ``out``: no flat gradient is assembled (the backward of a split of a flat leaf
    would concatenate one) and copied again.  The same floats as the gradient of :meth:`Network.loss` in its flat
    argument, bit for bit."""
    part = slice(j, j + 1)
    inputs = problem.inputs("train", rows.index[part], _part(rows.crop, part), _part(rows.flip, part))[0]
    params = {name: view.detach().requires_grad_(True) for name, view in problem.unflatten(flat).items()}
    with _dropout_rng(problem.device, _part(rows.seed, j)), torch.enable_grad():
        logits = problem.forward(params, inputs)
        grads = torch.autograd.grad(F.cross_entropy(logits, problem._labels["train"][rows.index[j]]),
                                    tuple(params.values()))
    for row, grad in zip(problem.unflatten(out).values(), grads):
        row.copy_(grad)


def loop_grads(problem: Network, x: torch.Tensor, pairs: torch.Tensor, draw: Draw, out: torch.Tensor) -> None:
    """Strategy ``loop``: one reverse pass per active client (:func:`_client_grad`).  Every strategy reads pair
    ``j``'s parameters in row ``j`` of ``x`` ``(P, d)`` and writes its gradient to row ``j`` of ``out``."""
    rows = _per_pair(draw, pairs)
    for j in range(len(pairs)):
        _client_grad(problem, x[j], rows, j, out[j])


@exact_cudnn()
def client_major_sgd(problem: Network, start: torch.Tensor, draws, lr: float,
                     active: torch.Tensor | None) -> torch.Tensor:
    r"""A round's local SGD for strategy ``loop``, one client at a time: every local step of a client before the
    next client, :math:`x_i\leftarrow x_i+(-\eta\,g_i)` in place on its row, the draws of each step as the
    step-major path uses them.  Each client's arithmetic is that of the step-major path (``g.mul_(-lr).add_(x)``:
    IEEE addition commutes), so the result is the same bit for bit; but a client's parameters stay in the CPU's
    caches through its steps, and no ``(R, m, d)`` gradient table is allocated per step (the research loop's order,
    which the step-major path lost 4-20% to on the CIFAR CNN).  Rows of inactive clients keep ``start``."""
    x = start.clone()
    mask = torch.ones(x.shape[:2], dtype=torch.bool, device=x.device) if active is None else active
    pairs = mask.nonzero()
    steps = [_per_pair(draw, pairs) for draw in draws]
    grad = torch.empty(x.shape[-1], dtype=x.dtype, device=x.device)
    for j, (r, i) in enumerate(pairs.tolist()):
        row = x[r, i]
        for rows in steps:
            _client_grad(problem, row, rows, j, grad)
            row.add_(grad.mul_(-lr))
    return x


def _chunks(problem: Network, pairs: torch.Tensor, draw: Draw):
    """``(part, inputs, labels)`` of the active ``pairs`` in chunks of ``problem.chunk_size`` (``part``: the chunk's
    slice of the pairs)."""
    rows = _per_pair(draw, pairs)
    for start in range(0, len(pairs), problem.chunk_size):
        part = slice(start, start + problem.chunk_size)
        inputs = problem.inputs("train", rows.index[part], _part(rows.crop, part), _part(rows.flip, part))
        yield part, inputs, problem._labels["train"][rows.index[part]]


def vmap_grads(problem: Network, x: torch.Tensor, pairs: torch.Tensor, draw: Draw, out: torch.Tensor) -> None:
    """Strategy ``vmap``: ``vmap(grad(loss))`` over chunks of ``chunk_size`` active clients (models without
    dropout only: any random operation inside raises)."""
    grad = torch.func.vmap(torch.func.grad(problem.loss), randomness="error")
    for part, inputs, labels in _chunks(problem, pairs, draw):
        out[part] = grad(x[part].detach(), inputs, labels)


def dense_grads(problem: Network, x: torch.Tensor, pairs: torch.Tensor, draw: Draw, out: torch.Tensor) -> None:
    """Strategy ``dense``: the closed-form backward pass over chunks of ``chunk_size`` active clients
    (:func:`theorylab.testbeds.dense_grads.dense_backward`)."""
    for part, inputs, labels in _chunks(problem, pairs, draw):
        flat = x[part]
        params = {name: piece.reshape(len(flat), *shape) for name, piece, shape
                  in zip(problem._names, flat.split(problem._numels, dim=-1), problem._shapes)}
        grads = dense_backward(params, problem._dense, inputs, labels)
        torch.cat([grads[name].flatten(1) for name in problem._names], dim=1, out=out[part])


def dense_layers_or_none(model: nn.Module):
    """The dense model's layer names (:func:`theorylab.testbeds.dense_grads.dense_layers`), ``None`` for others."""
    try:
        return dense_layers(model)
    except ValueError:
        return None


GRADIENTS = {"loop": loop_grads, "vmap": vmap_grads, "dense": dense_grads}
