r"""Solvers for the two solution concepts of performative prediction (seed 003 §2, eqs. (1)–(2); digest §7 item 1).

* **Performative stability** by repeated risk minimisation (RRM): iterate
  :math:`\theta_{k+1}=\Phi(\theta_k)=\arg\min_\theta f(\theta;\theta_k)` until
  :math:`\|\theta_{k+1}-\theta_k\|\le` ``tol``.  ``phi`` may return, beside the next iterate, a certificate
  of its inner solve (solver status, stationarity), which is kept per step.  Measured contraction ratios
  :math:`\|\theta_{k+1}-\theta_k\|/\|\theta_k-\theta_{k-1}\|` estimate the Lipschitz constant of :math:`\Phi`;
  with ratio :math:`\rho<1` the a-posteriori error is :math:`\le\rho/(1-\rho)\,\|\theta_{k+1}-\theta_k\|`.
* **Performative optimality** by multi-start local minimisation of the performative risk
  :math:`\mathrm{PR}(\theta)=f(\theta;\theta)`, which need not be convex: every start runs L-BFGS to a
  tight gradient tolerance; the result reports the best value, the spread of the local minimisers and, at
  the best, the gradient norm and the smallest Hessian eigenvalue (a local-optimality certificate; global
  optimality is not certified).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class FixedPoint:
    theta: np.ndarray
    converged: bool
    iterations: int
    steps: np.ndarray  # ||theta_{k+1} - theta_k||
    certificates: list = field(default_factory=list)

    @property
    def ratios(self) -> np.ndarray:
        """Successive step ratios (measured contraction factors of :math:`\\Phi`)."""
        s = self.steps
        return s[1:] / np.where(s[:-1] > 0, s[:-1], np.nan) if len(s) > 1 else np.array([])

    def error_bound(self, rho: float | None = None) -> float:
        """:math:`\\rho/(1-\\rho)\\|\\theta_{K}-\\theta_{K-1}\\|` with ``rho`` (default: the largest of the last ratios)."""
        if rho is None:
            tail = self.ratios[-5:]
            rho = float(np.nanmax(tail)) if len(tail) else np.nan
        return rho / (1.0 - rho) * float(self.steps[-1]) if rho < 1 else np.inf


def repeated_risk_minimisation(phi: Callable, theta0, tol: float = 1e-8, max_iter: int = 1000) -> FixedPoint:
    """Iterate ``phi`` from ``theta0``; ``phi(theta)`` returns the next iterate or ``(iterate, certificate)``."""
    if not tol > 0 or int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"need tol > 0 and an integer max_iter >= 1; got tol={tol}, max_iter={max_iter}")
    theta = np.atleast_1d(np.asarray(theta0, dtype=np.float64)).copy()
    steps, certificates = [], []
    for k in range(int(max_iter)):
        out = phi(theta)
        nxt, cert = out if isinstance(out, tuple) else (out, None)
        nxt = np.atleast_1d(np.asarray(nxt, dtype=np.float64))
        if cert is not None:
            certificates.append(cert)
        step = float(np.linalg.norm(nxt - theta))
        steps.append(step)
        theta = nxt
        if not np.all(np.isfinite(theta)):
            break
        if step <= tol:
            return FixedPoint(theta, True, k + 1, np.asarray(steps), certificates)
    return FixedPoint(theta, False, len(steps), np.asarray(steps), certificates)


@dataclass
class MultiStart:
    best: np.ndarray
    best_value: float
    minimisers: np.ndarray  # (starts, d)
    values: np.ndarray  # (starts,)
    gradient_norm: float  # at the best
    hessian_min_eig: float | None  # at the best (None without a Hessian)

    @property
    def spread(self) -> float:
        """Largest distance of a local minimiser from the best one."""
        return float(np.max(np.linalg.norm(self.minimisers - self.best, axis=1)))

    @property
    def value_spread(self) -> float:
        """Largest objective value among the local minimisers minus the best one (0 when all starts agree)."""
        return float(np.max(self.values) - self.best_value)


def multistart_minimise(fun: Callable, grad: Callable, starts, hess: Callable | None = None,
                        gtol: float = 1e-10, max_iter: int = 10_000) -> MultiStart:
    """Local minimisation of ``fun`` from every row of ``starts`` (L-BFGS-B); the best by value wins."""
    from scipy.optimize import minimize

    starts = np.atleast_2d(np.asarray(starts, dtype=np.float64))
    sols, vals = [], []
    for x0 in starts:
        res = minimize(fun, x0, jac=grad, method="L-BFGS-B",
                       options={"gtol": gtol, "ftol": 1e-15, "maxiter": int(max_iter), "maxcor": 30})
        sols.append(res.x)
        vals.append(float(fun(res.x)))
    sols, vals = np.asarray(sols), np.asarray(vals)
    i = int(np.argmin(vals))
    min_eig = float(np.linalg.eigvalsh(np.atleast_2d(hess(sols[i])))[0]) if hess is not None else None
    return MultiStart(sols[i], vals[i], sols, vals, float(np.linalg.norm(grad(sols[i]))), min_eig)
