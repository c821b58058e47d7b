r"""What the exact engines need to know about a problem: the closed-form models they propagate.

The exact engines never import a testbed; they accept any object that carries these members
(``theorylab.testbeds.quadratic.Quadratic`` and ``theorylab.testbeds.gaussian_mean.GaussianMean`` do), and refuse
anything else with an error that names the missing members.

* :class:`QuadraticModel` — :math:`F(x)=\sum_i\alpha_iF_i(x)`, :math:`F_i(x)=\tfrac12(x-u_i)^\top A_i(x-u_i)+c_i`,
  stochastic gradients with zero-mean noise of covariance :math:`\tfrac{\sigma^2}{d}I` (only this covariance enters
  the moments, so Gaussian and sphere noise are alike).
* :class:`GaussianMeanModel` — the performative Gaussian-mean problem of seed 003 §4.1: client :math:`i` draws
  :math:`Z\sim\mathcal N(m_i+\epsilon_i\theta,\sigma^2)` and has weight :math:`p_i`; iterates start at
  :math:`\theta_0`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class QuadraticModel(Protocol):
    n_clients: int
    dim: int
    A: np.ndarray  # (m, d, d) client Hessians A_i, symmetric positive definite
    u: np.ndarray  # (m, d) client minimisers u_i
    alpha: np.ndarray  # (m,) objective weights, summing to one
    sigma2: float  # E||noise||^2; the noise covariance is sigma2 / d * I
    x_init: np.ndarray  # (d,) starting point
    x_star: np.ndarray  # (d,) minimiser of F

    def hessian_mean(self, q=None) -> np.ndarray:
        """:math:`\\bar A=\\sum_i q_iA_i` (``q`` defaults to ``alpha``)."""


@runtime_checkable
class GaussianMeanModel(Protocol):
    n_clients: int
    m: np.ndarray  # (N,) base means m_i
    eps: np.ndarray  # (N,) sensitivities epsilon_i
    p: np.ndarray  # (N,) client weights, summing to one
    sigma: float  # standard deviation of Z
    theta0: float  # starting point


def require(problem, model: type, purpose: str) -> None:
    """Raise ``ValueError`` unless ``problem`` has every member of the protocol ``model``."""
    if isinstance(problem, model):
        return
    members = set(model.__annotations__) | {n for n, v in vars(model).items() if callable(v) and n[0] != "_"}
    missing = sorted(name for name in members if not hasattr(problem, name))
    raise ValueError(f"{purpose} need a {model.__name__}: {type(problem).__name__} lacks {', '.join(missing)}")
