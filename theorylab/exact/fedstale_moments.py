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


def second_moment_operator(step: AffineRound) -> np.ndarray:
    """:math:`K=\\sum_\\xi P_\\xi\\,M_\\xi\\otimes M_\\xi` ``(D^2, D^2)``: :math:`\\mathrm{vec}\\,\\sum_\\xi P_\\xi M_\\xi S
    M_\\xi^\\top = K\\,\\mathrm{vec}\\,S` (row-major vec)."""
    n, D = step.M.shape[:2]
    flat = step.M.reshape(n, D * D)
    Q = (flat * step.prob[:, None]).T @ flat  # Q[(i, j), (l, k)] = sum_xi P_xi M_ij M_lk
    return Q.reshape(D, D, D, D).transpose(0, 2, 1, 3).reshape(D * D, D * D)


def mean_square_radius(step: AffineRound) -> float:
    """Spectral radius of :math:`\\sum_\\xi P_\\xi M_\\xi\\otimes M_\\xi`: mean-square stable iff below one."""
    return float(np.max(np.abs(np.linalg.eigvals(second_moment_operator(step)))))


def moment_map(step: AffineRound) -> tuple[np.ndarray, np.ndarray]:
    """The round as one affine map :math:`v^+ = Tv + c` of :math:`v = (\\mu, \\mathrm{vec}\\,S)`:
    :math:`\\mu^+ = \\bar M\\mu + \\bar b` and, since the :math:`\\mu\\mu^\\top` terms of the module docstring's
    :math:`S^+` cancel, :math:`S^+ = \\sum_\\xi P_\\xi(M_\\xi SM_\\xi^\\top + M_\\xi\\mu b_\\xi^\\top + b_\\xi\\mu^\\top
    M_\\xi^\\top + b_\\xi b_\\xi^\\top + G_\\xi\\Sigma G_\\xi^\\top)`."""
    P, M, b = step.prob, step.M, step.b
    D = M.shape[1]
    cross = np.einsum("n,nij,nl->ilj", P, M, b) + np.einsum("n,ni,nlj->ilj", P, b, M)  # mu -> the b mu^T terms
    T = np.zeros((D + D * D, D + D * D))
    T[:D, :D] = np.tensordot(P, M, axes=1)
    T[D:, :D] = cross.reshape(D * D, D)
    T[D:, D:] = second_moment_operator(step)
    c = np.concatenate([P @ b, (np.einsum("n,ni,nj->ij", P, b, b) + np.tensordot(P, step.noise, axes=1)).ravel()])
    return T, c


def fedstale_moments(problem, p, beta: float, local_steps: int, lr: float, server_lr: float,
                     rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact :math:`\\mathbb E w^t` ``(rounds + 1, d)`` and :math:`\\mathbb E[F(w^t)] - F^\\star` ``(rounds + 1,)`` from
    :math:`w^{(1)}` = the problem's start and :math:`h^{(1)} = 0`, by iterating :func:`moment_map`."""
    step = affine_round(problem, p, beta, local_steps, lr, server_lr)
    T, c = moment_map(step)
    d, D = problem.dim, step.M.shape[1]
    v = np.zeros((rounds + 1, D + D * D))
    v[0, :d] = problem.x_init
    v[0, D:] = np.outer(v[0, :D], v[0, :D]).ravel()
    with np.errstate(over="ignore", invalid="ignore"):  # an unstable step's moments grow to inf (then NaN): its answer
        for t in range(rounds):
            v[t + 1] = T @ v[t] + c
    mean, second = v[:, :d], v[:, D:].reshape(-1, D, D)[:, :d, :d]
    x_star = problem.x_star
    E = second - mean[:, :, None] * x_star - x_star[:, None] * mean[:, None, :] + np.outer(x_star, x_star)
    return mean.copy(), 0.5 * np.einsum("ij,tij->t", problem.hessian_mean(), E)
