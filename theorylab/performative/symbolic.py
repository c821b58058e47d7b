r"""Symbolic derivation of PS, PO and the RRM map for a linear shift model and a quadratic loss (sympy).

Digest 003 §4.1.3 and §5.3, derived by machine instead of by hand.  Client :math:`i` of :math:`N` has
:math:`Z=m_i+\epsilon_i\tilde\theta+\sigma\xi` with :math:`\mathbb E\xi=0`, :math:`\mathbb E\xi^2=1`, and a loss
:math:`\ell(\theta,z)` that is a polynomial of total degree :math:`\le2` in :math:`(\theta,z)`, so only the first
two moments of :math:`\xi` enter:

.. math::
    f(\theta;\tilde\theta)=\sum_ip_i\,\mathbb E_\xi\,\ell(\theta,m_i+\epsilon_i\tilde\theta+\sigma\xi),\qquad
    \Phi(\tilde\theta):\ \partial_\theta f(\Phi,\tilde\theta)=0,\qquad
    \theta^{PS}:\ \partial_\theta f(\theta;\theta)=0,\qquad
    \theta^{PO}:\ \tfrac{d}{d\theta}f(\theta;\theta)=0.

All three equations are linear in the unknown, so their roots are exact ratios of coefficients; the results
are expressions
in the symbols :math:`m_i,\epsilon_i,p_i,\sigma` that :meth:`Derivation.evaluate` substitutes numerically.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np

LOSSES = {
    "squared": lambda theta, z: (theta - z) ** 2 / 2,
    "linear": lambda theta, z: theta ** 2 / 2 - z * theta,
}


@dataclass
class Derivation:
    symbols: dict  # name -> sympy symbol or tuple of symbols
    decoupled: object  # f(theta; theta~)
    phi: object  # Phi(theta~)
    phi_slope: object  # dPhi/dtheta~ (the contraction factor when constant)
    ps: object
    po: object  # the stationary point of PR: the PO only where risk_curvature > 0
    risk_curvature: object  # d^2 PR / d theta^2

    OUTPUTS = ("ps", "po", "phi_slope", "risk_curvature")

    @functools.cached_property
    def _compiled(self):
        import sympy as sp

        s = self.symbols
        args = (*s["m"], *s["eps"], *s["p"], s["sigma"])
        return sp.lambdify(args, [getattr(self, key) for key in self.OUTPUTS], modules="math")

    def evaluate(self, means, sensitivities, weights, sigma: float = 0.0) -> dict[str, float]:
        """Numbers for a concrete instance: ``ps``, ``po``, ``phi_slope``, ``risk_curvature`` (compiled once)."""
        values = []
        for name, data in (("m", means), ("eps", sensitivities), ("p", weights)):
            data = np.asarray(data, dtype=np.float64)
            if data.shape != (len(self.symbols[name]),):
                raise ValueError(f"{name} must have {len(self.symbols[name])} entries; got shape {data.shape}")
            values += data.tolist()
        return dict(zip(self.OUTPUTS, (float(v) for v in self._compiled(*values, float(sigma)))))


@functools.lru_cache(maxsize=8)
def derive(n_clients: int, loss: str | Callable = "squared") -> Derivation:
    """Derive :math:`f`, :math:`\\Phi`, :math:`\\theta^{PS}`, :math:`\\theta^{PO}` for ``n_clients`` clients.

    ``loss`` is ``"squared"``, ``"linear"`` or a callable ``(theta, z) -> sympy expression`` of total degree
    at most 2.  Results are cached per process (a derivation is immutable).
    """
    import sympy as sp

    if int(n_clients) != n_clients or n_clients < 1:
        raise ValueError(f"n_clients must be an integer >= 1; got {n_clients}")
    make_loss = LOSSES.get(loss) if isinstance(loss, str) else loss
    if make_loss is None:
        raise ValueError(f"loss must be one of {tuple(LOSSES)} or a callable; got {loss!r}")
    n = int(n_clients)
    theta, tilde, z, xi, sigma = sp.symbols("theta theta_tilde z xi sigma", real=True)
    m = sp.symbols(f"m0:{n}", real=True)
    eps = sp.symbols(f"epsilon0:{n}", real=True)
    p = sp.symbols(f"p0:{n}", positive=True)
    ell = sp.expand(make_loss(theta, z))
    if sp.Poly(ell, theta, z).total_degree() > 2:
        raise ValueError(f"the loss must be quadratic in (theta, z); got {ell}")

    def expectation(expr):  # E over xi ~ (mean 0, variance 1) of a polynomial of degree <= 2 in xi
        poly = sp.Poly(sp.expand(expr), xi)
        return sum(coeff * {0: 1, 1: 0, 2: 1}[deg[0]] for deg, coeff in zip(poly.monoms(), poly.coeffs()))

    def linear_root(expr):  # the root of expr = a theta + b (a != 0), which every first-order condition here is
        expr = sp.expand(expr)
        if sp.diff(expr, theta, 2) != 0:
            raise ValueError("a first-order condition is not linear in theta; the loss must be quadratic")
        return -expr.subs(theta, 0) / sp.diff(expr, theta)

    f = sp.expand(sum(p[i] * expectation(ell.subs(z, m[i] + eps[i] * tilde + sigma * xi)) for i in range(n)))
    phi = linear_root(sp.diff(f, theta))
    ps = linear_root(sp.diff(f, theta).subs(tilde, theta))
    risk = f.subs(tilde, theta)
    po = linear_root(sp.diff(risk, theta))
    symbols = {"theta": theta, "theta_tilde": tilde, "sigma": sigma, "m": m, "eps": eps, "p": p}
    return Derivation(symbols, f, phi, sp.together(sp.diff(phi, tilde)), ps, po, sp.expand(sp.diff(risk, theta, 2)))
