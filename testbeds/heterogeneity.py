r"""Heterogeneity constants of a quadratic testbed, computed exactly.

Notation: :math:`e = x - x^\star`, :math:`\bar A = \sum_i\alpha_i A_i`,
:math:`D_i = A_i - \bar A`, :math:`c_i = \nabla F_i(x^\star) = A_i(x^\star-u_i)`, so that
:math:`\nabla F_i(x) - \nabla F(x) = D_i e + c_i` and :math:`\nabla F(x) = \bar A e`.

**FedAWE A4** (seed 000, eq. (5); digest 000 §3.1, with the objective weights
:math:`\alpha` in place of :math:`1/m`):
:math:`\sum_i\alpha_i\|\nabla F_i(x)-\nabla F(x)\|^2 \le \beta^2\|\nabla F(x)\|^2 + \zeta^2`.
With :math:`Q=\sum_i\alpha_iD_i^\top D_i`, :math:`b=\sum_i\alpha_iD_i^\top c_i`,
:math:`c_0=\sum_i\alpha_i\|c_i\|^2`, the left side minus :math:`\beta^2\|\bar Ae\|^2` is the
quadratic :math:`e^\top(Q-\beta^2\bar A^2)e + 2b^\top e + c_0`.  Hence the smallest
admissible :math:`\beta^2` is :math:`\beta^2_{\min}=\lambda_{\max}(\bar A^{-1}Q\bar A^{-1})`
and, for :math:`\beta^2>\beta^2_{\min}`, the *tight* :math:`\zeta^2` is
:math:`\zeta^2(\beta^2) = c_0 + b^\top(\beta^2\bar A^2-Q)^{-1}b`.  With shared Hessians
(:math:`D_i=0`): :math:`\beta=0`, :math:`\zeta^2=\sum_i\alpha_i\|A(u_i-\bar u)\|^2`.
(The digest's one-parameter family is a valid but looser special case.)

**Thesis heterogeneity** (seed 001; digest 001 §1.1, §4.1, §4.4):
:math:`\Gamma_{\rm ch1}=F^\star-\sum_i\alpha_iF_i^\star` (1.6),
:math:`\sigma^2_g=\sum_i\alpha_i\|\nabla F_i(x^\star)\|^2` (1.7),
:math:`\Gamma_{\rm ch2}=\max_i\{F_i(x^\star)-F_i^\star\}` (2.9),
:math:`\Gamma'(q)=\max_i\{F_i(x_B^\star)-F_i^\star\}` with :math:`x_B^\star` the optimum of
:math:`F_B=\sum_ip_iF_i` (Thm 2.3.4).  Distances between weight vectors:
:math:`\chi^2_{\alpha\|p}=\sum_i(\alpha_i-p_i)^2/p_i` (2.11) and
:math:`d_{TV}(\alpha,p)=\tfrac12\sum_i|\alpha_i-p_i|` (2.20).  Digest 001 §6 item 23: chapters 1, 2 and 3 use three
different :math:`\Gamma/\sigma_g^2` definitions; we keep each chapter's own under its own name (above) and do not
convert between them.
"""

from __future__ import annotations

import numpy as np

from theorylab.testbeds.quadratic import Quadratic, normalise_weights


def _pieces(problem: Quadratic):
    A_bar = problem.hessian_mean()
    D = problem.A - A_bar
    c = np.einsum("mij,mj->mi", problem.A, problem.x_star - problem.u)
    a = problem.alpha
    Q = np.einsum("m,mki,mkj->ij", a, D, D)
    b = np.einsum("m,mki,mk->i", a, D, c)
    c0 = float(np.einsum("m,mi,mi->", a, c, c))
    return A_bar, Q, b, c0


def a4_beta2_min(problem: Quadratic) -> float:
    """Smallest :math:`\\beta^2` for which FedAWE's A4 holds with a finite :math:`\\zeta^2`."""
    A_bar, Q, _, _ = _pieces(problem)
    A_inv = np.linalg.inv(A_bar)
    return float(max(np.linalg.eigvalsh(A_inv @ Q @ A_inv).max(), 0.0))


def a4_zeta2(problem: Quadratic, beta2: float) -> float:
    """Tight :math:`\\zeta^2(\\beta^2)` of FedAWE's A4; ``inf`` when ``beta2`` is not above :math:`\\beta^2_{\\min}`."""
    A_bar, Q, b, c0 = _pieces(problem)
    if np.linalg.norm(Q) <= 1e-12 * np.linalg.norm(A_bar) ** 2:  # shared Hessians: constant in x
        return c0
    if beta2 <= a4_beta2_min(problem):
        return float("inf")
    return float(c0 + b @ np.linalg.solve(beta2 * A_bar @ A_bar - Q, b))


def gamma_ch1(problem: Quadratic) -> float:
    """:math:`F^\\star - \\sum_i\\alpha_iF_i^\\star` (thesis eq. 1.6)."""
    return float(problem.f_star - problem.alpha @ problem.c)


def gamma_ch2(problem: Quadratic) -> float:
    """:math:`\\max_i\\{F_i(x^\\star) - F_i^\\star\\}` (thesis eq. 2.9)."""
    return float(np.max(problem.client_values(problem.x_star) - problem.c))


def gamma_prime(problem: Quadratic, p) -> float:
    """:math:`\\max_i\\{F_i(x_B^\\star) - F_i^\\star\\}` for the biased objective with weights ``p`` (thesis Thm 2.3.4)."""
    return float(np.max(problem.client_values(problem.optimum(p)) - problem.c))


def sigma_g2_at_optimum(problem: Quadratic) -> float:
    """:math:`\\sum_i\\alpha_i\\|\\nabla F_i(x^\\star)\\|^2` (thesis eq. 1.7)."""
    return _pieces(problem)[3]


def chi2(alpha, p) -> float:
    """:math:`\\chi^2_{\\alpha\\|p} = \\sum_i(\\alpha_i-p_i)^2/p_i` (thesis eq. 2.11); ``inf`` if some p_i = 0 < alpha_i."""
    alpha = normalise_weights(alpha, len(alpha), "alpha")
    p = normalise_weights(p, len(alpha), "p")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, (alpha - p) ** 2 / np.where(p > 0, p, 1.0), np.where(alpha > 0, np.inf, 0.0))
    return float(terms.sum())


def total_variation(alpha, p) -> float:
    """:math:`d_{TV}(\\alpha,p) = \\tfrac12\\sum_i|\\alpha_i-p_i|` (thesis eq. 2.20)."""
    alpha = normalise_weights(alpha, len(alpha), "alpha")
    p = normalise_weights(p, len(alpha), "p")
    return float(0.5 * np.abs(alpha - p).sum())
