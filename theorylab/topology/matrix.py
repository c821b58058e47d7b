r"""A gossip topology: a validated mixing matrix :math:`W` and its contraction factor :math:`\rho`.

Seed 002 Assumption 4.5 and App. D Assumption D.2 (digest 002 §1.8, §2.1): :math:`W\in[0,1]^{N\times N}`,
:math:`W\mathbf 1 = \mathbf 1`, :math:`\mathbf 1^\top W = \mathbf 1^\top`, :math:`\operatorname{null}(I-W) =
\operatorname{span}(\mathbf 1)` and

.. math::
    \rho = \Big\|W - \tfrac1N\mathbf 1\mathbf 1^\top\Big\|_2 < 1

(the largest singular value; for symmetric :math:`W` it is :math:`\max(|\lambda_2|, |\lambda_N|)`).  The paper calls
:math:`\rho` the "spectral gap", but it is the contraction factor of one gossip step: smaller is better mixing, the
usual spectral gap is :math:`1-\rho` (digest §0.2).

A clustered :math:`W = \operatorname{blockdiag}(W_1,\dots,W_K)` (CAFGA, seed 002 Alg. 2) is disconnected across
clusters on purpose, so its global :math:`\rho` is 1; the properties above are then required of every block
:math:`W_k`, and :math:`\rho_{\max} = \max_k\|W_k - \frac1n\mathbf 1\mathbf 1^\top\|_2` (Assumption D.2) is
:attr:`Topology.rho_max`.  For an unclustered :math:`W`, ``rho_max == rho``.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import torch

MAX_CLIENTS = 2000  # W is dense and validated by SVDs: 32 MB and a few seconds at this size
STOCHASTIC_ATOL = 1e-12  # row and column sums must equal 1 within this (digest §4.5)
CONNECTIVITY_TOL = 1e-10  # the second-smallest singular value of I - W_k must exceed this


class Topology(NamedTuple):
    """A validated mixing matrix with its contraction factors and its cluster (block) structure."""

    name: str
    W: np.ndarray  # (N, N) float64, doubly stochastic, non-negative
    rho: float  # ||W - 11^T/N||_2 (1 for K > 1 clusters)
    clusters: tuple[tuple[int, ...], ...]  # blocks of W; a single block of all clients for an unclustered W
    rho_max: float  # max_k ||W_k - 11^T/n_k||_2 over the clusters (Assumption D.2)

    @property
    def n(self) -> int:
        return self.W.shape[0]

    def tensor(self, dtype: torch.dtype = torch.float64, device=None) -> torch.Tensor:
        """:math:`W` as a torch tensor, for :func:`gossip`."""
        return torch.tensor(self.W, dtype=dtype, device=device)


def contraction(W) -> float:
    r""":math:`\|W - \frac1n\mathbf 1\mathbf 1^\top\|_2` by SVD (no validation: any square matrix)."""
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] == 0:
        raise ValueError(f"W must be a non-empty square matrix; got shape {W.shape}")
    n = W.shape[0]
    return float(np.linalg.norm(W - np.full((n, n), 1.0 / n), 2))


def _check_clusters(clusters, n: int) -> tuple[tuple[int, ...], ...]:
    blocks = tuple(tuple(int(i) for i in block) for block in clusters)
    flat = sorted(i for block in blocks for i in block)
    if any(len(block) == 0 for block in blocks) or flat != list(range(n)):
        raise ValueError(f"clusters must partition the clients 0..{n - 1} into non-empty blocks; got {blocks}")
    return blocks


def check_mixing(W, clusters: Sequence[Sequence[int]] | None = None) -> np.ndarray:
    r"""Return ``W`` as float64 if it satisfies Assumption 4.5 (per cluster: D.2), else raise ``ValueError``.

    The error names the failing property: square, finite, non-negative (with the offending entry), row or column
    sums 1 within 1e-12 (with the offending row/column), no weight across clusters, connected
    (:math:`\operatorname{null}(I-W_k) = \operatorname{span}(\mathbf 1)`: the second-smallest singular value of
    :math:`I-W_k` is positive) and contracting (:math:`\rho_k<1`; a connected but periodic :math:`W`, such as the
    even ring without self-loops, has :math:`\rho_k = 1`).
    """
    return _validate(W, clusters)[0]


def _validate(W, clusters) -> tuple[np.ndarray, tuple[tuple[int, ...], ...], list[float]]:
    """:func:`check_mixing`'s work: ``(W, blocks, rho_k per block)``."""
    try:
        W = np.asarray(W, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"W must be a square matrix of numbers (a list of equal-length rows); got {W!r:.80}") \
            from None
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] == 0:
        raise ValueError(f"W must be square (N x N, N >= 1); got shape {W.shape}")
    n = W.shape[0]
    if not np.isfinite(W).all():
        i, j = np.argwhere(~np.isfinite(W))[0]
        raise ValueError(f"W must be finite; W[{i},{j}] = {W[i, j]}")
    if (W < 0).any():
        i, j = np.argwhere(W < 0)[0]
        raise ValueError(f"W must be non-negative; W[{i},{j}] = {W[i, j]:.3g}")
    for axis, what in ((1, "row"), (0, "column")):
        gap = np.abs(W.sum(axis) - 1.0)
        if gap.max() > STOCHASTIC_ATOL:
            k = int(gap.argmax())
            raise ValueError(f"W must be doubly stochastic within {STOCHASTIC_ATOL:g}; {what} {k} sums to "
                             f"{W.sum(axis)[k]!r}")
    blocks = _check_clusters(clusters if clusters is not None else [range(n)], n)
    label = np.empty(n, dtype=np.int64)
    for k, block in enumerate(blocks):
        label[list(block)] = k
    across = (W > 0) & (label[:, None] != label[None, :])
    if across.any():
        i, j = np.argwhere(across)[0]
        raise ValueError(f"W must be block-diagonal over its clusters; W[{i},{j}] = {W[i, j]:.3g} links clusters "
                         f"{label[i]} and {label[j]}")
    rhos = []
    for k, block in enumerate(blocks):
        Wk = W[np.ix_(block, block)]
        if len(block) > 1:
            sv = np.linalg.svd(np.eye(len(block)) - Wk, compute_uv=False)
            if sv[-2] <= CONNECTIVITY_TOL:
                raise ValueError(f"W must be connected within cluster {k}: null(I - W) is larger than span(1) "
                                 f"(second-smallest singular value of I - W is {sv[-2]:.3g})")
        rhos.append(contraction(Wk))
        if rhos[-1] >= 1.0 - CONNECTIVITY_TOL:
            raise ValueError(f"W must contract within cluster {k} (Assumption 4.5: rho < 1); ||W_k - J||_2 = "
                             f"{rhos[-1]:.15g} (periodic, e.g. an even ring without self-loops)")
    return W, blocks, rhos


def make_topology(name: str, W, clusters: Sequence[Sequence[int]] | None = None) -> Topology:
    r"""Validate ``W`` (:func:`check_mixing`) and compute :math:`\rho` and :math:`\rho_{\max}`."""
    W, blocks, rhos = _validate(W, clusters)
    W = W.copy()  # a private, read-only copy: the caller's array keeps its flags
    W.setflags(write=False)
    return Topology(name, W, rhos[0] if len(blocks) == 1 else contraction(W), blocks, max(rhos))


def gossip(W: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    r"""One gossip step :math:`X_i \leftarrow \sum_j W_{ij}X_j` over the client axis (seed 002 Alg. 1 line 14).

    ``W``: ``(N, N)`` or per-replica ``(R, N, N)``; ``X``: ``(R, N, d)``; returns ``(R, N, d)``.
    """
    if X.dim() != 3:
        raise ValueError(f"X must have shape (R, N, d); got {tuple(X.shape)}")
    n = X.shape[1]
    if W.dim() not in (2, 3) or W.shape[-2:] != (n, n) or (W.dim() == 3 and W.shape[0] != X.shape[0]):
        raise ValueError(f"W must have shape ({n}, {n}) or ({X.shape[0]}, {n}, {n}); got {tuple(W.shape)}")
    return torch.matmul(W.to(X.dtype), X)
