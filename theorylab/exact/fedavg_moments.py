r"""Exact first and second moments of the FedAvg family on a quadratic under memoryless participation.

On the quadratic testbed, :math:`s` local SGD steps from :math:`x` are affine in :math:`x` and the
noise: with :math:`B_i = I-\eta A_i`,

.. math::
    \Delta_i = -C_i(x-u_i) + \nu_i,\qquad C_i = I - B_i^s,\qquad
    \mathrm{Cov}(\nu_i) = \Sigma_i = \eta^2\tfrac{\sigma^2}{d}\sum_{k=0}^{s-1}B_i^{2k},

and the server step is :math:`x^+ = x + \eta_g\sum_i w_i\Delta_i` with random weights
:math:`w = w(\mathcal A^t)` independent of :math:`x` and :math:`\nu`.  Writing
:math:`\mu = \mathbb E x`, :math:`S = \mathbb E xx^\top`, :math:`v_i = C_iu_i`, :math:`h_i = C_i\mu`,
:math:`\bar w = \mathbb E w`, :math:`\Omega = \mathbb E ww^\top`:

.. math::
    \mu^+ &= \mu - \eta_g\textstyle\sum_i \bar w_i\,(C_i\mu - v_i),\\
    S^+ &= S - \eta_g\textstyle\sum_i\bar w_i\,(C_iS - v_i\mu^\top + S C_i - \mu v_i^\top)
         + \eta_g^2\Big(\textstyle\sum_{ij}\Omega_{ij}C_iSC_j - H^\top\Omega V - V^\top\Omega H
         + V^\top\Omega V + \textstyle\sum_i\Omega_{ii}\Sigma_i\Big).

Only the noise covariance enters, so Gaussian and sphere noise give the same moments.
:math:`\bar w` and :math:`\Omega` come from :mod:`theorylab.exact.poisson_binomial` (quadrature for
FedAvg over active clients with uniform weights, closed forms for the unnormalised schemes,
enumeration otherwise).  Then, with :math:`E = \mathbb E(x-x^\star)(x-x^\star)^\top`:
:math:`\mathbb E\|x-x^\star\|^2 = \mathrm{tr}E`, :math:`\mathbb E F(x)-F^\star = \tfrac12\mathrm{tr}(\bar AE)`,
:math:`\mathbb E\|\nabla F(x)\|^2 = \mathrm{tr}(\bar A^2E)`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from theorylab.config import RunConfig
from theorylab.exact.models import QuadraticModel, require
from theorylab.exact.poisson_binomial import enumerate_moments, inverse_count_moments
from theorylab.kernels.aggregation import aggregation_weights, check_aggregation
from theorylab.kernels.schedules import make_schedule
from theorylab.registry import build


@dataclass
class Moments:
    rounds: np.ndarray  # (n,)
    mean: np.ndarray  # (n, d)  E[x^t]
    second: np.ndarray  # (n, d, d)  E[x^t x^t^T]

    def error_covariance(self, target: np.ndarray) -> np.ndarray:
        """:math:`\\mathbb E(x^t-y)(x^t-y)^\\top` for a fixed point ``y``."""
        mu_y = np.einsum("ni,j->nij", self.mean, target)
        return self.second - mu_y - np.swapaxes(mu_y, 1, 2) + np.outer(target, target)

    def metrics(self, problem: QuadraticModel, point: str = "server") -> dict[str, np.ndarray]:
        """Expected ``dist2``, ``gap`` and ``gradnorm2`` at every recorded round, named like a trace's."""
        E = self.error_covariance(problem.x_star)
        A = problem.hessian_mean()
        return {
            f"{point}.dist2": np.trace(E, axis1=1, axis2=2),
            f"{point}.gap": 0.5 * np.einsum("ij,nji->n", A, E),
            f"{point}.gradnorm2": np.einsum("ij,nji->n", A @ A, E),
        }


def weight_moments(kind: str, q: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:math:`(\\mathbb E w, \\mathbb E ww^\\top)` of the aggregation weights under Bernoulli(``p``)."""
    check_aggregation(kind)
    if kind in ("all", "known_p"):
        c = q if kind == "all" else np.where(p > 0, q / np.where(p > 0, p, 1.0), 0.0)
        mean = c * p
        second = np.outer(mean, mean)
        np.fill_diagonal(second, c * c * p)
        return mean, second
    if np.allclose(q, q[0]):  # w_i = 1{i in S}/|S|
        return inverse_count_moments(p, 1)[0], inverse_count_moments(p, 2)[1]
    qt = torch.as_tensor(q, dtype=torch.float64)
    return enumerate_moments(p, lambda masks: aggregation_weights(kind, torch.as_tensor(masks), qt, p).numpy())


def local_maps(problem: QuadraticModel, lr: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """:math:`C_i = I-(I-\\eta A_i)^s` and :math:`\\Sigma_i`, each ``(m, d, d)``, via the eigendecomposition of :math:`A_i`."""
    lam, vec = np.linalg.eigh(problem.A)
    b = 1.0 - lr * lam
    r = b * b
    geom = np.where(np.isclose(r, 1.0), float(steps), (1.0 - r ** steps) / np.where(np.isclose(r, 1.0), 1.0, 1.0 - r))
    C = np.einsum("mij,mj,mkj->mik", vec, 1.0 - b ** steps, vec)
    Sigma = (lr * lr * problem.sigma2 / problem.dim) * np.einsum("mij,mj,mkj->mik", vec, geom, vec)
    return C, Sigma


def moment_step(mu: np.ndarray, S: np.ndarray, C: np.ndarray, Sig: np.ndarray, V: np.ndarray, w: np.ndarray,
                Om: np.ndarray, eta_g: float) -> tuple[np.ndarray, np.ndarray]:
    """One round of the module docstring's recursion: ``(mu+, S+)`` from ``(mu, S)``, the local maps ``C``, ``Sig``
    ``(m, d, d)``, ``V`` :math:`= (C_iu_i)_i` ``(m, d)`` and the weight moments ``w``, ``Om``."""
    H = np.einsum("mij,j->mi", C, mu)
    CS = np.einsum("m,mij,jk->ik", w, C, S) - np.outer(w @ V, mu)
    D = np.einsum("ij,jkl->ikl", Om, C)
    quad = (np.einsum("mij,jk,mkl->il", C, S, D) - H.T @ Om @ V - V.T @ Om @ H + V.T @ Om @ V
            + np.einsum("m,mij->ij", np.diag(Om), Sig))
    S = S - eta_g * (CS + CS.T) + eta_g ** 2 * quad
    return mu - eta_g * (w @ (H - V)), 0.5 * (S + S.T)


def _fedavg_params(spec: dict) -> dict:
    if spec.get("name") != "fedavg":
        raise ValueError(f"exact moments cover the 'fedavg' family only; got algorithm {spec.get('name')!r}")
    server = spec.get("server") or {"name": "sgd"}
    if server.get("name") != "sgd":
        raise ValueError("exact moments need the plain SGD server step (momentum/Adam are not affine in the weights)")
    return {
        "steps": int(spec.get("local_steps", 5)),
        "schedule": make_schedule(spec.get("lr", 0.05)),
        "kind": check_aggregation(spec.get("aggregation", "active")),
        "q": spec.get("q"),
        "eta_g": float(server.get("lr", 1.0)),
    }


def fedavg_moments(config: RunConfig) -> Moments:
    """Propagate :math:`\\mathbb E x^t` and :math:`\\mathbb E x^tx^{t\\top}` exactly for the run described by ``config``."""
    problem = build("testbed", config.problem)
    process = build("participation", config.participation)
    require(problem, QuadraticModel, "exact moments")
    if not getattr(process, "memoryless", False):
        raise ValueError("exact moments need memoryless (independent Bernoulli) participation; "
                         f"{type(process).__name__} is not")
    if process.n_clients != problem.n_clients:
        raise ValueError(f"participation has {process.n_clients} clients but the testbed has {problem.n_clients}")
    prm = _fedavg_params(config.algorithm)
    q = problem.alpha if prm["q"] is None else np.asarray(prm["q"], dtype=np.float64)
    eta_g, u = prm["eta_g"], problem.u

    w_cache = functools.lru_cache(maxsize=256)(lambda key: weight_moments(prm["kind"], q, np.frombuffer(key)))
    map_cache = functools.lru_cache(maxsize=256)(lambda lr: local_maps(problem, lr, prm["steps"]))

    mu = problem.x_init.copy()
    S = np.outer(mu, mu)
    rounds, means, seconds = [0], [mu.copy()], [S.copy()]
    for t in range(config.rounds):
        w, Om = w_cache(np.ascontiguousarray(process.probabilities(t), dtype=np.float64).tobytes())
        C, Sig = map_cache(prm["schedule"](t))
        mu, S = moment_step(mu, S, C, Sig, np.einsum("mij,mj->mi", C, u), w, Om, eta_g)
        if (t + 1) % config.every == 0 or t + 1 == config.rounds:
            rounds.append(t + 1)
            means.append(mu.copy())
            seconds.append(S.copy())
    return Moments(np.asarray(rounds), np.asarray(means), np.asarray(seconds))


def fedavg_mean_limit(problem: QuadraticModel, kind: str, p, local_steps: int, lr: float, q=None) -> np.ndarray:
    """Fixed point of the mean recursion under stationary ``p`` and constant ``lr``:
    :math:`(\\sum_i\\bar w_iC_i)^{-1}\\sum_i\\bar w_iC_iu_i` (the limit of :math:`\\mathbb E x^t` when the recursion is stable)."""
    q = problem.alpha if q is None else np.asarray(q, dtype=np.float64)
    w, _ = weight_moments(kind, q, np.asarray(p, dtype=np.float64))
    C, _ = local_maps(problem, lr, local_steps)
    return np.linalg.solve(np.einsum("m,mij->ij", w, C), np.einsum("m,mij,mj->i", w, C, problem.u))
