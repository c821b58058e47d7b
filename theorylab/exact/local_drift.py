r"""Exact moments of the local drift :math:`\sum_{r<s}(\nabla F_i(x_i^{(t,r)})-\nabla F_i(x_i^t))` on a quadratic.

Seed 000 Lemma 5 (App. E.1; digest 000 §3.2) bounds the second moment of this sum.  On the quadratic testbed
:math:`F_i(x) = \tfrac12(x-u_i)^\top A_i(x-u_i)` with gradient noise :math:`\varepsilon_r` of covariance
:math:`\tfrac{\sigma^2}{d}I`, independent across the local steps
:math:`x^{(r+1)} = x^{(r)}-\eta(\nabla F_i(x^{(r)})+\varepsilon_r)`, write :math:`B = I-\eta A_i`,
:math:`g = \nabla F_i(x^{(0)})` and :math:`e_r = x^{(r)}-x^{(0)}`.  Then :math:`e_{r+1} = Be_r-\eta(g+\varepsilon_r)`,
:math:`e_0 = 0`, and because :math:`\eta A_i\sum_{q<n}B^q = I-B^n`,

.. math::
    D = \sum_{r<s}A_ie_r = -\sum_{j=0}^{s-1}\big(I-B^{s-1-j}\big)(g+\varepsilon_j),\qquad
    \mathbb E D = -\sum_{n=0}^{s-1}(I-B^n)\,g,\qquad
    \mathrm{tr}\,\mathrm{Cov}(D) = \frac{\sigma^2}{d}\sum_{n=0}^{s-1}\|I-B^n\|_F^2 .

In the eigenbasis of :math:`A_i` (eigenvalues :math:`\lambda_k`) every :math:`I-B^n` is diagonal with entries
:math:`1-(1-\eta\lambda_k)^n`.  Only the noise covariance enters, so Gaussian and sphere noise give the same
moments.
"""

from __future__ import annotations

import numpy as np

from theorylab.exact.models import QuadraticModel


def local_drift(problem: QuadraticModel, x0, lr: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """``(E[D], tr Cov(D))`` of every client, shapes ``(m, d)`` and ``(m,)``, for ``steps`` local SGD steps with
    step ``lr`` from the points ``x0`` (``(d,)`` shared or ``(m, d)`` per client); see the module docstring."""
    lam, vec = np.linalg.eigh(problem.A)  # (m, d), (m, d, d)
    x0 = np.broadcast_to(np.asarray(x0, dtype=np.float64), (problem.n_clients, problem.dim))
    g = np.einsum("mij,mj->mi", problem.A, x0 - problem.u)
    shrink = 1.0 - (1.0 - lr * lam[:, None, :]) ** np.arange(steps)[None, :, None]  # (m, n, d): 1 - (1-eta lam)^n
    g_eig = np.einsum("mji,mj->mi", vec, g)  # g in each client's eigenbasis
    mean = -np.einsum("mij,mj->mi", vec, shrink.sum(1) * g_eig)
    noise = problem.sigma2 / problem.dim * (shrink ** 2).sum((1, 2))
    return mean, noise
