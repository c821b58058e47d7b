r"""A nested linear early-exit network with exact ground truth, for Fed-CIS (seed 001 Ch. 5).

Source: digest 001_thesis_ch4-6 §3.5 [DERIVED design]; the thesis' objectives :math:`F_{D,\tilde\Lambda}`,
:math:`F_{\mathcal D,\Lambda}` (§5.3, App. D (D.1)-(D.9)).

**Model.** Features :math:`x\in\mathbb R^d` come in blocks :math:`x=(x_1,\dots,x_E)`, one per exit; exit :math:`e`
predicts :math:`\hat y_e=\sum_{b\le e}w_b^\top x_b=w^\top P_ex` (:math:`P_e` keeps blocks :math:`1..e`: shared prefix
parameters, as in ordered dropout), with loss

.. math:: f^{(e)}(w,z)=\tfrac12(y-w^\top P_ex)^2+\tfrac{\mu_0}2\|w\|^2 .

The ridge :math:`\mu_0>0` is what makes A18 hold: without it :math:`F_{i,e}` is flat in the blocks after :math:`e`.

**Data.** :math:`x_j=s_j\epsilon_j`, :math:`y=\beta^\top x+s_0\epsilon_0` with independent Rademacher
:math:`\epsilon`: bounded (so A15 can hold on a ball :math:`\mathcal W`) with exact second moments
:math:`\mathbb E[xx^\top]=\Sigma={\rm diag}(s^2)`, :math:`\mathbb E[xy]=\Sigma\beta`,
:math:`\mathbb E[y^2]=\beta^\top\Sigma\beta+s_0^2`.

**Exact quadratics.**  With moments :math:`(S_{xx},S_{xy},S_{yy})` (empirical over a node's :math:`D_i`, or
population), :math:`F_e(w)=\tfrac12w^\top(P_eS_{xx}P_e+\mu_0I)w-w^\top P_eS_{xy}+\tfrac12S_{yy}`.  Any positive
combination :math:`\sum\omega_{i,e}F_{i,e}` is a quadratic whose minimiser is one linear solve; hence exact
:math:`w^*_{D,\tilde\Lambda}`, :math:`w^*_{\mathcal D,\tilde\Lambda}`, :math:`F^*_{\mathcal D,\Lambda}`, the
optimisation, bias and generalisation gaps, :math:`L`, :math:`\mu`, :math:`\Gamma` (D.19), and the bounded loss
:math:`M` over :math:`\mathcal W\times` support.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from theorylab.rng import Streams


class ExitQuadratic(NamedTuple):
    hess: np.ndarray  # (..., d, d)
    lin: np.ndarray  # (..., d)
    const: np.ndarray  # (...)


@dataclass(frozen=True)
class NestedLinear:
    blocks: tuple[int, ...]  # feature block sizes, one per exit
    scales: tuple[float, ...]  # s_j, one per feature
    beta: tuple[float, ...]  # true coefficients
    label_noise: float = 0.5  # s_0
    ridge: float = 0.1  # mu_0

    def __post_init__(self):
        dim = sum(self.blocks)
        if not self.blocks or min(self.blocks) < 1:
            raise ValueError(f"blocks must be sizes >= 1; got {self.blocks}")
        if len(self.scales) != dim or min(self.scales) <= 0:
            raise ValueError(f"scales must hold {dim} values > 0; got {self.scales}")
        if len(self.beta) != dim:
            raise ValueError(f"beta must hold {dim} values; got {len(self.beta)}")
        if self.label_noise < 0 or not self.ridge > 0:
            raise ValueError(f"label_noise must be >= 0 and ridge > 0; got {self.label_noise}, {self.ridge}")

    @property
    def dim(self) -> int:
        return sum(self.blocks)

    @property
    def n_exits(self) -> int:
        return len(self.blocks)

    def masks(self) -> np.ndarray:
        """(E, d): row e is the diagonal of P_e (1 on blocks 1..e)."""
        ends = np.cumsum(self.blocks)
        return (np.arange(self.dim)[None, :] < ends[:, None]).astype(np.float64)


def exit_quadratics(tb: NestedLinear, sxx, sxy, syy) -> ExitQuadratic:
    r"""Exit losses from moments ``sxx (..., d, d)``, ``sxy (..., d)``, ``syy (...)``: a quadratic with a new exit
    axis before the feature axes."""
    m = tb.masks()  # (E, d)
    sxx, sxy, syy = np.asarray(sxx)[..., None, :, :], np.asarray(sxy)[..., None, :], np.asarray(syy)[..., None]
    hess = m[:, :, None] * sxx * m[:, None, :] + tb.ridge * np.eye(tb.dim)
    return ExitQuadratic(hess, m * sxy, np.broadcast_to(0.5 * syy, hess.shape[:-2]).copy())


def population(tb: NestedLinear) -> ExitQuadratic:
    r"""The population exit losses :math:`F_{\mathcal D,e}` ``(E, ...)``, exact."""
    s2, beta = np.asarray(tb.scales) ** 2, np.asarray(tb.beta)
    return exit_quadratics(tb, np.diag(s2), s2 * beta, float(beta @ (s2 * beta)) + tb.label_noise ** 2)


def sample_moments(tb: NestedLinear, sizes, streams: Streams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empirical moments of every node's dataset, one dataset per replica (``data`` stream): ``sxx (R, N, d, d)``,
    ``sxy (R, N, d)``, ``syy (R, N)``; node i holds the next ``sizes[i]`` samples of its replica's stream."""
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or (sizes < 1).any():
        raise ValueError(f"sizes must hold one integer >= 1 per node; got {sizes.tolist()}")
    signs = np.where(streams.uniform("data", (int(sizes.sum()), tb.dim + 1)).numpy() < 0.5, -1.0, 1.0)
    x = signs[..., :tb.dim] * np.asarray(tb.scales)
    y = x @ np.asarray(tb.beta) + tb.label_noise * signs[..., tb.dim]
    owner = np.repeat(np.arange(len(sizes)), sizes)
    onehot = (owner[None, :] == np.arange(len(sizes))[:, None]) / sizes[:, None]  # (N, n)
    return (np.einsum("kn,rni,rnj->rkij", onehot, x, x), np.einsum("kn,rni,rn->rki", onehot, x, y),
            np.einsum("kn,rn->rk", onehot, y * y))


def combine(q: ExitQuadratic, weights) -> ExitQuadratic:
    r""":math:`\sum\omega F` over the trailing weight axes (``weights`` broadcasts against ``q.const``)."""
    weights = np.asarray(weights, dtype=np.float64)
    axes = tuple(range(-weights.ndim, 0))
    return ExitQuadratic(np.sum(weights[..., None, None] * q.hess, axis=tuple(a - 2 for a in axes)),
                     np.sum(weights[..., None] * q.lin, axis=tuple(a - 1 for a in axes)),
                     np.sum(weights * q.const, axis=axes))


def minimiser(q: ExitQuadratic) -> np.ndarray:
    """The unique minimiser ``hess^{-1} lin`` (batched)."""
    return np.linalg.solve(q.hess, q.lin[..., None])[..., 0]


def value(q: ExitQuadratic, w) -> np.ndarray:
    r""":math:`\tfrac12w^\top Hw-b^\top w+c` (batched over leading axes of ``q`` and ``w``)."""
    w = np.asarray(w)
    return 0.5 * np.einsum("...i,...ij,...j->...", w, q.hess, w) - np.einsum("...i,...i->...", q.lin, w) + q.const


def optimum_gap(q: ExitQuadratic, w) -> np.ndarray:
    r""":math:`F(w)-F^*=\tfrac12(w-w^*)^\top H(w-w^*)`, exact and free of cancellation."""
    gap = np.asarray(w) - minimiser(q)
    return 0.5 * np.einsum("...i,...ij,...j->...", gap, q.hess, gap)


def loss_bound(tb: NestedLinear, radius: float) -> float:
    r"""An upper bound :math:`M` on :math:`f^{(e)}` over :math:`\|w\|\le\rho` and the support (A15):
    :math:`\tfrac12(|y|_{\max}+\rho\|x\|)^2+\tfrac{\mu_0}2\rho^2` with :math:`\|P_ex\|\le\|x\|=\|s\|` and
    :math:`|y|_{\max}=\sum_j|\beta_js_j|+s_0` (Cauchy-Schwarz, attained up to the sign pattern)."""
    if not radius > 0:
        raise ValueError(f"radius must be > 0; got {radius}")
    s, beta = np.asarray(tb.scales), np.asarray(tb.beta)
    y_max = float(np.abs(beta * s).sum() + tb.label_noise)
    return 0.5 * (y_max + radius * float(np.linalg.norm(s))) ** 2 + 0.5 * tb.ridge * radius ** 2


def smoothness(q: ExitQuadratic) -> tuple[float, float]:
    r"""(L, mu): the largest and smallest Hessian eigenvalues over all the quadratics in ``q`` (A17, A18)."""
    eig = np.linalg.eigvalsh(q.hess)
    return float(eig.max()), float(eig.min())


THESIS_LIKE = NestedLinear(blocks=(2, 2, 2), scales=(1.0, 0.8, 0.9, 0.7, 0.8, 0.6),
                           beta=(1.0, -0.5, 0.8, 0.6, -0.7, 0.9), label_noise=0.5, ridge=0.1)

PARTITIONS = {"equal": (1 / 3, 1 / 3, 1 / 3), "biased": (0.143, 0.286, 0.571),
              "highly_biased": (0.034, 0.199, 0.767)}  # share of the data held by each layer (§5.4.1)


def layer_sizes(exits, partition, total: int) -> np.ndarray:
    """Dataset size of every node: layer e (nodes with E_i = e) holds ``partition[e-1] * total`` samples, split
    evenly among its nodes (the within-layer split is unspecified in the thesis, digest §3.6); at least 1 each."""
    exits, share = np.asarray(exits), np.asarray(partition, dtype=np.float64)
    if len(share) != exits.max() or (share < 0).any() or abs(share.sum() - 1) > 1e-2 or total < 1:
        raise ValueError(f"partition must hold {exits.max()} shares summing to 1 and total >= 1; got {partition}, "
                         f"{total}")
    per_node = share[exits - 1] * total / np.bincount(exits)[exits]
    return np.maximum(1, np.round(per_node)).astype(int)


def at_every_node(q: ExitQuadratic, n_nodes: int) -> ExitQuadratic:
    """The same exit losses at every node ``(N, E, ...)``: infinite data, no generalisation gap, Gamma = 0."""
    return ExitQuadratic(*(np.broadcast_to(a, (n_nodes, *a.shape)) for a in q))


def ball_minimum(q: ExitQuadratic, radius: float, iterations: int = 200) -> float:
    r""":math:`\min_{\|w\|\le\rho}\tfrac12w^\top Hw-b^\top w+c` for one symmetric (possibly indefinite) ``H``, exactly
    up to bisection: the trust-region solution :math:`w(\lambda)=(H+\lambda I)^{-1}b` with the smallest
    :math:`\lambda\ge\max(0,-\lambda_{\min})` such that :math:`\|w(\lambda)\|\le\rho` (Moré & Sorensen 1983), in the
    eigenbasis of ``H``; in the "hard case" the remaining norm goes along the bottom eigenvector."""
    if not radius > 0:
        raise ValueError(f"radius must be > 0; got {radius}")
    eig, vec = np.linalg.eigh(q.hess)
    c, low = vec.T @ q.lin, max(0.0, -eig[0])
    tol = 1e-12 * (1 + np.abs(eig).max() + np.abs(c).max())
    flat = eig + low <= tol  # directions where w(low) is undefined unless c vanishes there
    if not (np.abs(c[flat]) > tol).any() and np.linalg.norm(c[~flat] / (eig[~flat] + low)) <= radius:
        z = np.zeros_like(c)  # lambda = low is optimal: interior minimiser, or the hard case
        z[~flat] = c[~flat] / (eig[~flat] + low)
        if low > 0:
            z[0] = np.sqrt(max(radius ** 2 - np.sum(z ** 2), 0.0))
    else:
        norm = lambda lam: float(np.linalg.norm(c / (eig + lam)))  # noqa: E731
        lo, hi = low, low + np.linalg.norm(c) / radius + 1.0
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if mid <= low or norm(mid) > radius else (lo, mid)
        z = c / (eig + hi)
    return float(0.5 * z @ (eig * z) - c @ z + q.const)


def ball_sup_abs(q: ExitQuadratic, radius: float) -> float:
    r""":math:`\sup_{\|w\|\le\rho}|F(w)|` for one quadratic: the larger of :math:`-\min F` and
    :math:`\max F=-\min(-F)`."""
    negated = ExitQuadratic(-q.hess, -q.lin, -q.const)
    return max(-ball_minimum(q, radius), -ball_minimum(negated, radius))
