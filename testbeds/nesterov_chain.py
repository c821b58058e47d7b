r"""The lower-bound instance of thesis Theorem 3.4.4 (seed 001 App. B, (B.130)-(B.133); digest 001 §4.10).

:math:`F(w)=\frac L8(w^\top A_{2n+1}w-2w_1)=\frac L8[w_1^2+\sum_{j=1}^{2n}(w_j-w_{j+1})^2+w_{2n+1}^2-2w_1]`
on :math:`\mathbb R^{2n+1}` (the smallest dimension (B.130) needs), split over :math:`N=2` clients with equal
weights as in (B.133):

.. math::
    F_{i_0}=\frac{NL}8\Big[w_1^2+\sum_{j=1}^n(w_{2j}-w_{2j+1})^2-2w_1\Big],\qquad
    F_{i_1}=\frac{NL}8\Big[\sum_{j=1}^n(w_{2j-1}-w_{2j})^2+w_{2n+1}^2\Big],

so :math:`F=\frac12(F_{i_0}+F_{i_1})` and :math:`\nabla F_i(w)=\frac{NL}4(M_iw-b_i)` with :math:`b_{i_0}=e_1`,
:math:`b_{i_1}=0`.  Ground truth: :math:`w^*_j=1-\frac{j}{2n+2}`, :math:`F^*=-\frac{L(2n+1)}{16(n+1)}`,
:math:`F(0)=0`.  Zero chain: from :math:`w=0`, client :math:`i_0` can only make coordinate :math:`k+1` non-zero
when the support :math:`k` is even, :math:`i_1` when it is odd (B.134) — exactly, in floating point, since the
other coordinates only ever receive exact zeros.  ``metrics`` reports the support :math:`k` (largest non-zero
coordinate, 1-based; 0 at the origin) and :math:`\|\nabla F\|^2`.  Client 0 is :math:`i_0`, client 1 is
:math:`i_1`.  Noise-free: the local functions are :math:`\approx NL/2`-smooth, not :math:`L` (erratum 18).
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.memory import require
from theorylab.registry import register
from theorylab.validation import integer, real


def chain_matrix(size: int) -> np.ndarray:
    """:math:`A_{\\rm size}` of (B.132) restricted to its non-zero block: tridiagonal (2, -1)."""
    if int(size) != size or size < 1:
        raise ValueError(f"size must be an integer >= 1; got {size}")
    return 2 * np.eye(size) - np.eye(size, k=1) - np.eye(size, k=-1)


class NesterovChain:
    """The two-client zero-chain problem (module docstring); implements :class:`theorylab.problem.Problem`."""

    autograd = False  # closed-form gradients: runs go under inference mode (theorylab.runner.autograd_off)

    n_clients = 2

    def __init__(self, horizon: int, L: float = 1.0):
        real("L", L, 0.0, open_low=True)
        require(4 * 8 * (2 * integer("horizon", horizon, 1) + 1) ** 2, f"nesterov_chain with horizon={horizon} (dim x dim matrices)")
        self.horizon, self.L, self.dim = int(horizon), float(L), 2 * int(horizon) + 1
        d, scale = self.dim, self.n_clients * self.L / 4
        m0, m1 = np.zeros((d, d)), np.zeros((d, d))
        m0[0, 0] = 1.0
        m1[d - 1, d - 1] = 1.0
        for j in range(d - 1):  # pair (j, j+1) in 0-based indices: 1-based (j+1, j+2)
            target = m0 if j % 2 == 1 else m1  # (2j', 2j'+1) belongs to i0, (2j'-1, 2j') to i1
            target[j:j + 2, j:j + 2] += np.array([[1.0, -1.0], [-1.0, 1.0]])
        self.M = np.stack([m0, m1]) * scale
        self.b = np.zeros((2, d))
        self.b[0, 0] = scale
        self.alpha = np.array([0.5, 0.5])
        self.dtype, self.device = torch.float64, torch.device("cpu")
        self.weights = torch.as_tensor(self.alpha)
        self._M, self._b = torch.as_tensor(self.M), torch.as_tensor(self.b)

    # ----- exact ground truth -----------------------------------------------------------------------------------
    def grad(self, w) -> np.ndarray:
        """:math:`\\nabla F(w)=\\frac L4(A w-e_1)` for ``w`` of shape ``(..., d)``."""
        return np.asarray(w, float) @ self.hessian.T - self.b.mean(0)

    @property
    def hessian(self) -> np.ndarray:
        """:math:`\\nabla^2F=\\frac L4A_{2n+1}`."""
        return self.M.mean(0)

    def value(self, w) -> np.ndarray:
        w = np.asarray(w, float)
        return 0.5 * np.einsum("...i,ij,...j->...", w, self.hessian, w) - w @ self.b.mean(0)

    @property
    def x_star(self) -> np.ndarray:
        return 1 - np.arange(1, self.dim + 1) / (self.dim + 1)

    @property
    def f_star(self) -> float:
        return -self.L * (2 * self.horizon + 1) / (16 * (self.horizon + 1))

    # ----- oracle ---------------------------------------------------------------------------------------------------
    def initial_point(self, replicas: int, streams) -> torch.Tensor:
        return torch.zeros(replicas, self.dim, dtype=self.dtype)

    def sample(self, streams, steps: int):
        return [None] * steps

    def stochastic_grads(self, x: torch.Tensor, sample_k=None, active=None) -> torch.Tensor:
        """Exact client gradients :math:`\\frac{NL}4(M_ix_i-b_i)` for ``x`` of shape ``(R, 2, d)``."""
        return torch.einsum("mij,rmj->rmi", self._M, x) - self._b

    def metrics(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """``gradnorm2`` :math:`\\|\\nabla F(x)\\|^2`, ``gap`` :math:`F(x)-F^*`, ``support`` :math:`k`."""
        g = x @ self._M.mean(0) - self._b.mean(0)
        nonzero = (x != 0).to(self.dtype) * torch.arange(1, self.dim + 1, dtype=self.dtype)
        value = 0.5 * (x * (x @ self._M.mean(0))).sum(-1) - x @ self._b.mean(0)
        return {"gradnorm2": (g * g).sum(-1), "gap": value - self.f_star, "support": nonzero.amax(-1)}


@register("testbed", "nesterov_chain")
def nesterov_chain(horizon: int, L: float = 1.0) -> NesterovChain:
    """Thesis Thm 3.4.4's two-client Nesterov zero chain of dimension 2 * horizon + 1 (B.130)-(B.133)."""
    return NesterovChain(horizon, L)
