r"""Exact first and second moments of FedStale on a quadratic under Bernoulli participation (seed 001 Alg. 4, (3.9);
digest 001 §2.7), by enumeration of the :math:`2^N` participation outcomes of a round.

With :math:`C_i = I-(I-\eta_cA_i)^K` and the local noise :math:`\nu_i` of covariance :math:`\Sigma_i`
(:func:`theorylab.exact.fedavg_moments.local_maps`), Ch. 3's update is affine in the state
:math:`z = (w, h_1, \dots, h_N)`: :math:`\Delta_i = C_i(w-u_i) - \nu_i` and, for an outcome :math:`\xi`,

.. math::
    w^+ &= w - \eta_s\Big[\beta\textstyle\sum_i q_ih_i
           + \sum_i\frac{\xi_iq_i}{p_i}\big(C_i(w-u_i)-\nu_i-\beta h_i\big)\Big],\\
    h_i^+ &= \xi_i\big(C_i(w-u_i)-\nu_i\big) + (1-\xi_i)h_i,

i.e. :math:`z^+ = M_\xi z + b_\xi + G_\xi\nu`.  With :math:`\xi` independent of :math:`(z,\nu)`:
:math:`\mu^+ = \sum_\xi P_\xi(M_\xi\mu+b_\xi)` and
:math:`S^+ = \sum_\xi P_\xi\big(M_\xi SM_\xi^\top + M_\xi\mu b_\xi^\top + b_\xi\mu^\top M_\xi^\top + b_\xi b_\xi^\top
+ G_\xi\Sigma G_\xi^\top\big)`.  The homogeneous part decides mean-square stability: :math:`\mathbb E\|z^t\|^2`
stays bounded for every start iff the spectral radius of :math:`\sum_\xi P_\xi\,M_\xi\otimes M_\xi` is below one.
This is an independent computation (no kernel code): it checks the ``fedstale`` kernel (``weights="known_p"``,
``memory="zeros"``, ``empty_round="apply"``, plain SGD server) through Monte Carlo.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theorylab.exact.fedavg_moments import local_maps
from theorylab.exact.poisson_binomial import subset_probabilities, subsets


@dataclass(frozen=True)
class AffineRound:
    """One round as :math:`z^+ = M_\\xi z + b_\\xi + G_\\xi\\nu` for every outcome :math:`\\xi` of positive
    probability."""

    prob: np.ndarray  # (n,)
    M: np.ndarray  # (n, D, D), D = (N + 1) d
    b: np.ndarray  # (n, D)
    noise: np.ndarray  # (n, D, D): G_xi Sigma G_xi^T


def affine_round(problem, p, beta: float, local_steps: int, lr: float, server_lr: float) -> AffineRound:
    """The affine map of one FedStale round on a quadratic ``problem`` with Bernoulli(``p``) participation."""
    p = np.asarray(p, dtype=np.float64)
    N, d = problem.n_clients, problem.dim
    C, Sigma = local_maps(problem, lr, local_steps)
    masks = subsets(N)
    prob = subset_probabilities(p, masks)
    masks, prob = masks[prob > 0], prob[prob > 0]
    q, eye, D = problem.alpha, np.eye(d), (N + 1) * d
    n = len(prob)
    M, b, G = np.zeros((n, D, D)), np.zeros((n, D)), np.zeros((n, D, N * d))
    for k, xi in enumerate(masks.astype(np.float64)):
        c = xi * q / p  # fresh weights xi_i q_i / p_i
        M[k, :d, :d] = eye - server_lr * np.einsum("i,ijk->jk", c, C)
        b[k, :d] = server_lr * np.einsum("i,ijk,ik->j", c, C, problem.u)
        for i in range(N):
            rows, cols = slice((i + 1) * d, (i + 2) * d), slice(i * d, (i + 1) * d)
            M[k, :d, rows] = -server_lr * beta * (q[i] - c[i]) * eye
            M[k, rows, :d] = xi[i] * C[i]
            M[k, rows, rows] = (1.0 - xi[i]) * eye
            b[k, rows] = -xi[i] * C[i] @ problem.u[i]
            G[k, :d, cols] = server_lr * c[i] * eye
            G[k, rows, cols] = -xi[i] * eye
    cov = np.zeros((N * d, N * d))
    for i in range(N):
        cov[i * d:(i + 1) * d, i * d:(i + 1) * d] = Sigma[i]
    return AffineRound(prob, M, b, np.einsum("nij,jk,nlk->nil", G, cov, G))


def mean_square_radius(step: AffineRound) -> float:
    """Spectral radius of :math:`\\sum_\\xi P_\\xi M_\\xi\\otimes M_\\xi`: mean-square stable iff below one."""
    K = np.einsum("n,nij,nkl->ikjl", step.prob, step.M, step.M)
    D = step.M.shape[1]
    return float(np.max(np.abs(np.linalg.eigvals(K.reshape(D * D, D * D)))))


def fedstale_moments(problem, p, beta: float, local_steps: int, lr: float, server_lr: float,
                     rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact :math:`\\mathbb E w^t` ``(rounds + 1, d)`` and :math:`\\mathbb E[F(w^t)] - F^\\star` ``(rounds + 1,)`` from
    :math:`w^{(1)}` = the problem's start and :math:`h^{(1)} = 0`."""
    step = affine_round(problem, p, beta, local_steps, lr, server_lr)
    d, D = problem.dim, step.M.shape[1]
    mu = np.zeros(D)
    mu[:d] = problem.x_init
    S = np.outer(mu, mu)
    A_bar, x_star = problem.hessian_mean(), problem.x_star
    noise = np.einsum("n,nij->ij", step.prob, step.noise)
    means, gaps = [], []
    for _ in range(rounds + 1):
        E = S[:d, :d] - np.outer(mu[:d], x_star) - np.outer(x_star, mu[:d]) + np.outer(x_star, x_star)
        means.append(mu[:d].copy())
        gaps.append(0.5 * float(np.sum(A_bar * E)))
        Mmu = step.M @ mu + step.b  # (n, D): M mu + b per outcome
        cross = np.einsum("nij,jk,nlk->nil", step.M, S - np.outer(mu, mu), step.M)
        S = np.einsum("n,nij->ij", step.prob, cross + np.einsum("ni,nj->nij", Mmu, Mmu)) + noise
        mu = step.prob @ Mmu
    return np.asarray(means), np.asarray(gaps)
