r"""Heterogeneous quadratic testbed with exact ground truth.

.. math::
    F_i(x) = \tfrac12 (x-u_i)^\top A_i (x-u_i) + c_i, \qquad
    F(x) = \sum_{i=1}^m \alpha_i F_i(x), \quad \sum_i \alpha_i = 1,

with :math:`A_i \succ 0`.  A stochastic gradient of client :math:`i` is
:math:`\nabla F_i(x) + \varepsilon` with fresh noise each local step:

* ``noise="gaussian"``: :math:`\varepsilon \sim \mathcal N(0, \tfrac{\sigma^2}{d} I)`;
* ``noise="sphere"``: :math:`\varepsilon` uniform on the sphere of radius :math:`\sigma`,
  so :math:`\|\varepsilon\| = \sigma` exactly and gradients stay bounded on bounded sets.

Both have :math:`\mathbb E\varepsilon = 0`, :math:`\mathbb E\|\varepsilon\|^2 = \sigma^2` and
covariance :math:`\tfrac{\sigma^2}{d} I`, which is all the exact-moment engine needs.
Gaussian noise is sampled and scaled in float32 and added to the (float64)
gradient: this halves the memory traffic of the hot loop, and the rounding moves
the variance by about 1e-7 relative, far below any Monte Carlo resolution.

Exact quantities (digest 000 §3.3, digest 001 §4.0):

* optimum of any re-weighted objective :math:`\sum_i q_i F_i` (the *biased optimum*
  when :math:`q \ne \alpha`): :math:`x_q = (\sum_i q_i A_i)^{-1} \sum_i q_i A_i u_i`;
  :math:`x^\star = x_\alpha`, :math:`F^\star = F(x^\star)`;
* :math:`L = \max_i \lambda_{\max}(A_i)` (each :math:`F_i` is :math:`L`-smooth; FedAWE A2,
  thesis A3), :math:`\mu = \min_i \lambda_{\min}(A_i)` (each :math:`F_i` is
  :math:`\mu`-strongly convex; thesis A4);
* :math:`F(x) - F^\star = \tfrac12 (x-x^\star)^\top \bar A (x-x^\star)` and
  :math:`\nabla F(x) = \bar A (x - x^\star)` with :math:`\bar A = \sum_i \alpha_i A_i`.

Heterogeneity constants are in :mod:`theorylab.testbeds.heterogeneity`.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from theorylab.memory import require
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.validation import integer, real, floats

NOISES = ("gaussian", "sphere")


def _as_float_array(name: str, value, ndim: int) -> np.ndarray:
    arr = floats(name, value)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def normalise_weights(weights, m: int, name: str = "weights") -> np.ndarray:
    """Check non-negative weights of length ``m`` with a positive sum and scale them to sum to one."""
    w = np.full(m, 1.0 / m) if weights is None else _as_float_array(name, weights, 1)
    if w.shape != (m,):
        raise ValueError(f"{name} must have length {m}; got {w.shape[0]}")
    if np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"{name} must be non-negative with a positive sum; got {w}")
    return w / w.sum()


class Quadratic:
    """The quadratic problem; implements :class:`theorylab.problem.Problem`.

    Args:
        hessians: ``(m, d, d)`` symmetric positive definite :math:`A_i`.
        centers: ``(m, d)`` client optima :math:`u_i`.
        weights: objective weights :math:`\\alpha` (default uniform), normalised to sum to one.
        offsets: constants :math:`c_i = F_i^\\star` (default zero).
        sigma: gradient-noise level :math:`\\sigma \\ge 0`.
        noise: ``"gaussian"`` or ``"sphere"``.
        x0: starting model (default the origin).
    """

    autograd = False  # closed-form gradients: runs go under inference mode (theorylab.runner.autograd_off)

    def __init__(self, hessians, centers, weights=None, offsets=None, sigma: float = 0.0,
                 noise: str = "gaussian", x0=None, device="cpu", dtype=torch.float64):
        A = _as_float_array("hessians", hessians, 3)
        u = _as_float_array("centers", centers, 2)
        m, d = u.shape
        if m < 1 or d < 1:
            raise ValueError(f"centers must have at least one client (row) and dim >= 1 (column); got shape {u.shape}")
        if A.shape != (m, d, d):
            raise ValueError(f"hessians must have shape ({m}, {d}, {d}) to match centers; got {A.shape}")
        if not np.allclose(A, np.swapaxes(A, 1, 2), atol=1e-12):
            raise ValueError("hessians must be symmetric")
        eig = np.linalg.eigvalsh(A)
        if np.any(eig <= 0):
            raise ValueError(f"hessians must be positive definite; smallest eigenvalue {eig.min():.3g}")
        real("sigma", sigma, 0.0)
        if noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}; got {noise!r}")
        self.A, self.u = A, u
        self.alpha = normalise_weights(weights, m, "weights")
        self.c = np.zeros(m) if offsets is None else _as_float_array("offsets", offsets, 1)
        self.sigma, self.noise = float(sigma), noise
        self.n_clients, self.dim = m, d
        self.eigenvalues = eig  # (m, d), ascending
        self.x_init = np.zeros(d) if x0 is None else _as_float_array("x0", x0, 1)
        if self.x_init.shape != (d,):
            raise ValueError(f"x0 must have length {d}")
        self.device, self.dtype = torch.device(device), dtype
        self._diagonal = bool(np.all(A == np.einsum("mi,ij->mij", np.diagonal(A, axis1=1, axis2=2), np.eye(d))))
        t = dict(device=self.device, dtype=dtype)
        self.weights = torch.as_tensor(self.alpha, **t)
        self._A = torch.as_tensor(np.diagonal(A, axis1=1, axis2=2).copy() if self._diagonal else A, **t)
        self._u = torch.as_tensor(u, **t)
        self._Au = torch.as_tensor(np.einsum("mij,mj->mi", A, u), **t)  # A_i u_i, so that grad = A_i x - A_i u_i
        self._x_star = torch.as_tensor(self.x_star, **t)
        self._A_bar = torch.as_tensor(self.hessian_mean(), **t)

    # ----- exact ground truth (numpy, float64) ---------------------------------------------
    def hessian_mean(self, q=None) -> np.ndarray:
        """:math:`\\sum_i q_i A_i` with ``q`` normalised (default :math:`\\alpha`)."""
        q = self.alpha if q is None else normalise_weights(q, self.n_clients, "q")
        return np.einsum("m,mij->ij", q, self.A)

    def optimum(self, q=None) -> np.ndarray:
        """Minimiser of :math:`\\sum_i q_i F_i`: :math:`(\\sum_i q_i A_i)^{-1}\\sum_i q_i A_i u_i`."""
        q = self.alpha if q is None else normalise_weights(q, self.n_clients, "q")
        return np.linalg.solve(self.hessian_mean(q), np.einsum("m,mij,mj->i", q, self.A, self.u))

    @property
    def x_star(self) -> np.ndarray:
        return self.optimum()

    def client_values(self, x) -> np.ndarray:
        """:math:`F_i(x)` for every client; ``x`` of shape ``(..., d)`` gives ``(..., m)``."""
        e = np.asarray(x, dtype=np.float64)[..., None, :] - self.u
        return 0.5 * np.einsum("...mi,mij,...mj->...m", e, self.A, e) + self.c

    def value(self, x, q=None) -> np.ndarray:
        """:math:`\\sum_i q_i F_i(x)` with ``q`` normalised (default :math:`F`)."""
        q = self.alpha if q is None else normalise_weights(q, self.n_clients, "q")
        return self.client_values(x) @ q

    @property
    def f_star(self) -> float:
        return float(self.value(self.x_star))

    @property
    def L(self) -> float:
        """:math:`\\max_i \\lambda_{\\max}(A_i)`."""
        return float(self.eigenvalues[:, -1].max())

    @property
    def mu(self) -> float:
        """:math:`\\min_i \\lambda_{\\min}(A_i)`."""
        return float(self.eigenvalues[:, 0].min())

    @property
    def sigma2(self) -> float:
        """:math:`\\mathbb E\\|\\varepsilon\\|^2 = \\sigma^2`, exact for both noise models."""
        return self.sigma ** 2

    # ----- oracle (torch, batched over replicas and clients) -----------------------------------
    def initial_point(self, replicas: int, streams: Streams) -> torch.Tensor:
        x0 = torch.as_tensor(self.x_init, device=self.device, dtype=self.dtype)
        return x0.expand(replicas, self.dim).clone()

    def client_grads(self, x: torch.Tensor) -> torch.Tensor:
        """:math:`\\nabla F_i(x_i) = A_i x_i - A_i u_i` for ``x`` of shape ``(R, m, d)``.

        One batched matmul over clients (``x_i^T A_i`` with :math:`A_i` symmetric) fused with the
        shift; the result is a transposed view of an ``(m, R, d)`` buffer.
        """
        if self._diagonal:
            return self._A * x - self._Au
        return torch.baddbmm(self._Au.unsqueeze(1), x.transpose(0, 1), self._A, beta=-1.0).transpose(0, 1)

    def sample(self, streams: Streams, steps: int) -> Sequence[torch.Tensor | None]:
        """Noise for ``steps`` local steps: item ``k`` has shape ``(R, m, d)`` (``None`` when sigma is 0)."""
        if self.sigma == 0.0:
            return [None] * steps
        shape = (steps, self.n_clients, self.dim)
        if self.noise == "gaussian":
            z = streams.normal("gradient", shape, torch.float32, scale=self.sigma / math.sqrt(self.dim))
        else:
            z = streams.normal("gradient", shape, self.dtype)
            z.mul_(self.sigma / torch.linalg.vector_norm(z, dim=-1, keepdim=True))
        return z.unbind(1)

    def sample_rows(self, streams: Streams, steps: int, counts: torch.Tensor,
                    purpose: str = "gradient") -> Sequence[torch.Tensor | None]:
        """Noise for ``steps`` local steps of ``counts[r]`` clients of replica ``r`` from the ``purpose`` stream: item
        ``k`` is ``(P, d)`` (:mod:`theorylab.kernels.client_work`); with every client counted, :meth:`sample`'s."""
        if self.sigma == 0.0:
            return [None] * steps
        if self.noise == "gaussian":
            z = streams.normal_rows(purpose, counts, (steps,), (self.dim,), scale=self.sigma / math.sqrt(self.dim))
        else:
            z = streams.normal_rows(purpose, counts, (steps,), (self.dim,))
            if self.dtype != torch.float32:  # as sample(): the draw is promoted before it is normalised
                z = z.to(self.dtype)
            z.mul_(self.sigma / torch.linalg.vector_norm(z, dim=-1, keepdim=True))
        return z.unbind(0)

    @property
    def rows_in_table(self) -> bool:
        """Whether row work keeps the ``(R, m, d)`` table (:mod:`theorylab.kernels.client_work`): yes for full
        Hessians, whose batched product over the table costs less than gathering a matrix per row."""
        return not self._diagonal

    def grads_rows(self, x: torch.Tensor, rows, sample_k: torch.Tensor | None) -> torch.Tensor:
        """:math:`A_i x_p - A_i u_i (+\\varepsilon_p)` for the rows ``x`` ``(P, d)`` of clients ``rows.client``
        (diagonal Hessians: elementwise, the dense layout's arithmetic; full ones keep the table instead)."""
        if not self._diagonal:
            raise ValueError("full Hessians compute rows in the (R, m, d) table (rows_in_table)")
        if "curvature" not in rows.memo:  # the rows' Hessian diagonals and A_i u_i, gathered at the round's first step
            rows.memo["curvature"] = (self._A[rows.client], self._Au[rows.client])
        A, Au = rows.memo["curvature"]
        g = A * x - Au
        return g if sample_k is None else g.add_(sample_k)

    def stochastic_grads(self, x: torch.Tensor, sample_k: torch.Tensor | None, active=None) -> torch.Tensor:
        """Gradients of every client (``active`` is ignored: the dense batched step is cheaper)."""
        g = self.client_grads(x)
        return g if sample_k is None else g.add_(sample_k)

    def metrics(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """``dist2`` :math:`\\|x-x^\\star\\|^2`, ``gap`` :math:`F(x)-F^\\star`, ``gradnorm2`` :math:`\\|\\nabla F(x)\\|^2`."""
        e = x - self._x_star
        g = e @ self._A_bar
        return {"dist2": (e * e).sum(-1), "gap": 0.5 * (e * g).sum(-1), "gradnorm2": (g * g).sum(-1)}


@register("testbed", "quadratic")
def quadratic(hessians, centers, weights=None, offsets=None, sigma: float = 0.0, noise: str = "gaussian",
              x0=None, device="cpu", dtype=torch.float64) -> Quadratic:
    """Quadratic clients F_i = ½(x−u_i)ᵀA_i(x−u_i) + c_i given explicitly."""
    return Quadratic(hessians, centers, weights, offsets, sigma, noise, x0, device, dtype)


@register("testbed", "diagonal_quadratic")
def diagonal_quadratic(curvatures, centers, weights=None, offsets=None, sigma: float = 0.0, noise: str = "gaussian",
                       x0=None, device="cpu", dtype=torch.float64) -> Quadratic:
    """Quadratic clients with diagonal Hessians, F_i = ½ Σ_j a_ij (x_j − u_ij)² + c_i, given by their curvatures
    ``a`` (m, d): the ``quadratic`` testbed with A_i = diag(a_i), whose configuration (hashed for the store) holds
    m·d numbers instead of m·d²."""
    a = _as_float_array("curvatures", curvatures, 2)
    return Quadratic(np.einsum("mi,ij->mij", a, np.eye(a.shape[1])), centers, weights, offsets, sigma, noise, x0,
                     device, dtype)


@register("testbed", "scalar_quadratic")
def scalar_quadratic(centers: Sequence[float], curvatures: Sequence[float] | None = None, weights=None,
                     sigma: float = 0.0, noise: str = "gaussian", x0: float = 0.0,
                     device="cpu", dtype=torch.float64) -> Quadratic:
    """One-dimensional clients F_i = ½ a_i (x − u_i)² (FedAWE Example 1 when a_i = 1, m = 2)."""
    u = _as_float_array("centers", centers, 1).reshape(-1, 1)
    a = np.ones(len(u)) if curvatures is None else _as_float_array("curvatures", curvatures, 1)
    if a.shape != (len(u),):
        raise ValueError(f"curvatures must have one entry per center ({len(u)}); got {a.shape[0]}")
    x0 = [real("x0", x0)]
    return Quadratic(a.reshape(-1, 1, 1), u, weights, None, sigma, noise, x0, device, dtype)


@register("testbed", "random_quadratic")
def random_quadratic(n_clients: int, dim: int, seed: int = 0, mu: float = 0.5, L: float = 1.0,
                     hessians: str = "hetero", spread: float = 1.0, weights=None, sigma: float = 0.0,
                     noise: str = "gaussian", x0=None, device="cpu", dtype=torch.float64) -> Quadratic:
    """Seeded random instance: spectra uniform in [mu, L], centers N(0, spread² I).

    ``hessians="hetero"`` draws a random rotation per client (so x* differs from the
    mean of the u_i, thesis "Q-hetero"); ``"shared"`` gives every client the same
    A (thesis "Q-shift": FedAWE's beta = 0, zeta² = mean ||A(u_i − ū)||²).
    """
    n_clients, dim, seed = integer("n_clients", n_clients, 1), integer("dim", dim, 1), integer("seed", seed, 0)
    if not 0 < real("mu", mu) <= real("L", L):
        raise ValueError(f"need 0 < mu <= L; got mu={mu}, L={L}")
    real("spread", spread, 0.0)
    if hessians not in ("hetero", "shared"):
        raise ValueError(f"hessians must be 'hetero' or 'shared'; got {hessians!r}")
    rng = np.random.Generator(np.random.PCG64(seed))
    count = n_clients if hessians == "hetero" else 1
    require(8 * dim * dim * (3 * count + 3 * n_clients),
            f"random_quadratic with n_clients={n_clients} and dim={dim} (hessians of n_clients x dim x dim)")
    spectra = rng.uniform(mu, L, size=(count, dim))
    rotations = np.linalg.qr(rng.standard_normal((count, dim, dim)))[0]
    A = np.einsum("mij,mj,mkj->mik", rotations, spectra, rotations)
    A = 0.5 * (A + np.swapaxes(A, 1, 2))
    A = np.broadcast_to(A, (n_clients, dim, dim)).copy()
    u = spread * rng.standard_normal((n_clients, dim))
    return Quadratic(A, u, weights, None, sigma, noise, x0, device, dtype)
