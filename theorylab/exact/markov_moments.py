r"""Exact moments of the generic weighted scheme (thesis (2.2)–(2.3)) under independent two-state Markov availability.

Seed 001 Ch. 2 (digest 001 §2.4, §3.3).  On the quadratic, :math:`s` local SGD steps are affine (:func:`local_maps`):
:math:`\Delta_i = -C_i(x-u_i)+\nu_i`, so round :math:`t` with joint state :math:`S^t=\sigma` (mask :math:`a_\sigma`)
maps :math:`x\mapsto G_\sigma x+h_\sigma+n_\sigma`, :math:`G_\sigma = I-\sum_ia_{\sigma i}q_iC_i`,
:math:`h_\sigma=\sum_ia_{\sigma i}q_iC_iu_i`, :math:`\mathrm{Cov}\,n_\sigma=\sum_ia_{\sigma i}q_i^2\Sigma_i`.  Since
:math:`x^t` depends on :math:`S^0..S^{t-1}` only, the conditional moments
:math:`\mu_\sigma = \mathbb E[x^t;S^t=\sigma]`,
:math:`M_\sigma = \mathbb E[x^tx^{t\top};S^t=\sigma]` obey, with :math:`P=\bigotimes_iP_i` and :math:`r^t = r^0P^t`,

.. math::
    \nu_\sigma = G_\sigma\mu_\sigma + r^t_\sigma h_\sigma,\quad
    N_\sigma = G_\sigma M_\sigma G_\sigma^\top + G_\sigma\mu_\sigma h_\sigma^\top
    + h_\sigma\mu_\sigma^\top G_\sigma^\top
    + r^t_\sigma(h_\sigma h_\sigma^\top + \mathrm{Cov}\,n_\sigma),\quad
    \mu^{t+1}_{\sigma'} = \textstyle\sum_\sigma P_{\sigma\sigma'}\nu_\sigma,\quad
    M^{t+1}_{\sigma'} = \sum_\sigma P_{\sigma\sigma'}N_\sigma

— exact over the :math:`2^m` joint states (``m <= 12``).  It reduces to :mod:`theorylab.exact.fedavg_moments` when
every :math:`\lambda_i = 0`.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import block_diag

from theorylab.exact.fedavg_moments import Moments, local_maps
from theorylab.exact.models import QuadraticModel, require
from theorylab.kernels.schedules import make_schedule


def markov_moments(problem, cases, lr, local_steps: int, rounds: int, every: int) -> list[Moments]:
    """Exact :math:`\\mathbb E x^t`, :math:`\\mathbb E x^tx^{t\\top}` of the generic scheme (``aggregation="all"``,
    server step 1) under independent two-state chains (module docstring), for every ``(chain, q)`` of ``cases`` at
    once: their joint chains are stacked block-diagonally, so one propagation serves them all."""
    require(problem, QuadraticModel, "exact Markov moments")
    blocks, weights, starts = [], [], []
    for chain, q in cases:
        P, rho = chain.product_chain()
        m = chain.n_clients
        mask = (np.arange(len(rho))[:, None] >> np.arange(m - 1, -1, -1)) & 1  # kron order: client 0 is the top bit
        start = np.ones(1)
        for p in chain.start:
            start = np.kron(start, [1 - p, p])
        blocks.append(P)
        weights.append(mask * np.asarray(q, dtype=np.float64))
        starts.append(start)
    P, wq, r = block_diag(*blocks), np.concatenate(weights), np.concatenate(starts)
    bounds = np.cumsum([0] + [len(b) for b in blocks])
    schedule, x0 = make_schedule(lr), problem.x_init
    mu, M = r[:, None] * x0, r[:, None, None] * np.outer(x0, x0)
    maps: dict[float, tuple] = {}
    rounds_out, means, seconds = [0], [mu], [M]
    for t in range(rounds):
        eta = schedule(t)
        if eta not in maps:
            C, Sigma = local_maps(problem, eta, local_steps)
            G = np.eye(problem.dim) - np.einsum("sm,mij->sij", wq, C)
            maps[eta] = (G, np.einsum("sm,mij,mj->si", wq, C, problem.u), np.einsum("sm,mij->sij", wq * wq, Sigma))
        G, h, cov = maps[eta]
        Gmu = np.einsum("sij,sj->si", G, mu)
        Gmu_h = np.einsum("si,sj->sij", Gmu, h)
        N = (np.einsum("sij,sjk,slk->sil", G, M, G) + Gmu_h + np.swapaxes(Gmu_h, 1, 2)
             + r[:, None, None] * (np.einsum("si,sj->sij", h, h) + cov))
        mu, M, r = P.T @ (Gmu + r[:, None] * h), np.einsum("st,sij->tij", P, N), r @ P
        if (t + 1) % every == 0 or t + 1 == rounds:
            rounds_out.append(t + 1)
            means.append(mu)
            seconds.append(M)
    means, seconds = np.asarray(means), np.asarray(seconds)
    return [Moments(np.asarray(rounds_out), means[:, a:b].sum(1), seconds[:, a:b].sum(1))
            for a, b in zip(bounds[:-1], bounds[1:])]
