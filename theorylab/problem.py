"""The contract between a testbed and the algorithm kernels.

A *problem* is a federated objective ``F(x) = sum_i alpha_i F_i(x)`` over
``n_clients`` clients and a flat parameter vector of size ``dim``.  Kernels only
ever touch it through the members below, on tensors shaped
``(replicas, clients, dim)``; that is what lets one kernel run on a float64
quadratic on the CPU and on a float32 CNN on a GPU.

Randomness of the local steps is drawn up front, once per round, by
``sample(streams, steps)`` (Gaussian noise for a quadratic, minibatch indices
for a dataset) and handed back to ``stochastic_grads`` one local step at a time.

A problem that can compute single clients also implements
:class:`theorylab.kernels.client_work.RowProblem` (``sample_rows``, ``grads_rows``): a round then draws and
computes the local steps of its participants only.

A problem whose members never record an autograd graph says so with ``autograd = False``; the runner then runs it
under ``torch.inference_mode`` (:func:`theorylab.runner.autograd_off`: the same floats, less fixed cost per torch
call).  A problem that does not say is run with autograd on.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import torch

from theorylab.rng import Streams


@runtime_checkable
class Problem(Protocol):
    n_clients: int
    dim: int
    weights: torch.Tensor  # (n_clients,) objective weights alpha, summing to one
    dtype: torch.dtype
    device: torch.device

    def initial_point(self, replicas: int, streams: Streams) -> torch.Tensor:
        """The starting model, shape ``(replicas, dim)``."""

    def sample(self, streams: Streams, steps: int) -> Sequence[Any]:
        """Randomness for ``steps`` local steps of every replica and client; item ``k`` feeds step ``k``."""

    def stochastic_grads(self, x: torch.Tensor, sample_k: Any, active: torch.Tensor | None = None) -> torch.Tensor:
        """Per-client stochastic gradients at ``x`` of shape ``(R, m, dim)``; same shape out, in a *fresh*
        tensor the caller may overwrite.  Rows of clients with ``active[r, i] == False`` may be left
        uncomputed (any finite value); ``active=None`` means every client."""

    def metrics(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Per-replica metrics of a model ``x`` of shape ``(R, dim)``; each value has shape ``(R,)``."""
