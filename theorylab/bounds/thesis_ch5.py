r"""Thesis ch. 5 bound calculators: Theorem 5.3.1's error decomposition (5.7) with the constants of App. D,
(D.49) and (D.50).

Source: seed 001 Ch. 5 Theorem 5.3.1 (5.7); App. D (D.1)-(D.9), Theorem D.4 (D.49), (D.50), (D.19);
digest 001_thesis_ch4-6 §3.3, §6 G2, §7 items 8 and 10.

* **Decomposition** (D.1): :math:`\epsilon_{\rm true}\le2\epsilon_{\rm gen}+2\epsilon_{\rm bias}+\epsilon_{\rm opt}`.
* **Generalisation** (D.3)-(D.7): :math:`\epsilon_{\rm gen}\le\sum_e\tilde\Lambda_eMC\sqrt{{\rm Pdim}(H_e)/|D_{e,p}|}`,
  :math:`C=320` (Livesay 2017, Cor. 6.4).
* **Bias** (D.8)-(D.9): :math:`\epsilon_{\rm bias}\le2M\,{\rm dist}_{TV}(\tilde\Lambda,\Lambda)`, TV between the
  *normalised* weight vectors (digest §7 item 10).
* **Optimisation** (D.49), read as an inequality with a squared norm (digest §7 item 8):

.. math:: \mathbb E[F_{D,\tilde\Lambda}(w^{(T)})]-F^*_{D,\tilde\Lambda}\le\frac{\kappa}{\gamma+JT}\Big(\frac{2B}{\mu}
          +\frac{\mu(\gamma+1)}2\|w^{(1)}-w^*_{\tilde\Lambda}\|^2\Big),\qquad\gamma=\max\{8\kappa,J\}-1,

  for the theorem's steps :math:`\eta_{t,k}=2/(\mu(\gamma+(t-1)J+k+1))` (:func:`theorem_lr`) and

.. math:: B=\sum_{(i,e)}\alpha_{i,e}^2\sigma_{i,e}^2+6L\Gamma+8(J-1)^2G^{(2)}
          +4J^2\sum_i\sum_{e\in E_i}\alpha_{i,e}^2\frac{1-p_{i,e}}{p_{i,e}}G_{i,e}\qquad(D.50),

  :math:`G_{i,e}=\sigma_{i,e}^2+(L\,{\rm diam}\,\mathcal W)^2`, :math:`G=\max G_{i,e}`.  ``reading="corrected"``
  takes :math:`G^{(2)}=G` (``G_{i,e}`` is already a squared bound, digest §3.3 [TYPO?]); ``"printed"`` takes
  :math:`G^{(2)}=G^2` as printed.  The analysis needs :math:`\sum_{(i,e)}\alpha_{i,e}=\eta_s\sum_e\tilde\Lambda_e=1`;
  :func:`opt_constant` refuses other weights ("theory mode", digest §3.3).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from theorylab.cis.aggregation import sampling_factor

LIVESAY_C = 320.0
READINGS = ("corrected", "printed")


def _positive(name: str, value: float, allow_zero: bool = False) -> float:
    value = float(value)
    if not math.isfinite(value) or not (value >= 0 if allow_zero else value > 0):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite; got {value}")
    return value


def gamma_offset(kappa: float, local_steps: int) -> float:
    r""":math:`\gamma=\max\{8\kappa,J\}-1`."""
    if int(local_steps) != local_steps or local_steps < 1:
        raise ValueError(f"local_steps must be an integer >= 1; got {local_steps}")
    return max(8 * _positive("kappa", kappa), local_steps) - 1


def theorem_lr(mu: float, kappa: float, local_steps: int):
    r"""Theorem 5.3.1's steps :math:`\eta_{t,k}=2/(\mu(\gamma+(t-1)J+k+1))`, :math:`t\ge1`, as ``lr(t, k)``."""
    mu, gamma = _positive("mu", mu), gamma_offset(kappa, local_steps)
    return lambda t, k: 2.0 / (mu * (gamma + (t - 1) * local_steps + k + 1))


def tv_distance(a, b) -> float:
    r""":math:`{\rm dist}_{TV}` of the normalised weight vectors: :math:`\tfrac12\|a/\sum a-b/\sum b\|_1`."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or (a < 0).any() or (b < 0).any() or a.sum() <= 0 or b.sum() <= 0:
        raise ValueError(f"weights must be non-negative vectors of one shape, not all zero; got {a}, {b}")
    return 0.5 * float(np.abs(a / a.sum() - b / b.sum()).sum())


def gen_bound(target, pdim, data_sizes, loss_max: float, constant: float = LIVESAY_C) -> float:
    r""":math:`\sum_e\tilde\Lambda_eMC\sqrt{{\rm Pdim}(H_e)/|D_{e,p}|}` over exits with :math:`\tilde\Lambda_e>0`."""
    target, pdim, sizes = (np.asarray(v, dtype=np.float64) for v in (target, pdim, data_sizes))
    used = target > 0
    if (pdim[used] <= 0).any() or (sizes[used] <= 0).any():
        raise ValueError("pdim and data_sizes must be > 0 on every exit with positive weight")
    return float(np.sum(target[used] * _positive("loss_max", loss_max) * _positive("constant", constant)
                        * np.sqrt(pdim[used] / sizes[used])))


def bias_bound(target, serving, loss_max: float) -> float:
    r""":math:`2M\,{\rm dist}_{TV}(\tilde\Lambda,\Lambda)` (D.9)."""
    return 2 * _positive("loss_max", loss_max) * tv_distance(target, serving)


def opt_constant(alpha, p, sigma2, L: float, Gamma: float, local_steps: int, diameter: float,
                 reading: str = "corrected", sampling: str = "printed") -> float:
    r""":math:`B` of (D.50) (module docstring); ``alpha``, ``p``, ``sigma2`` are ``(N, E)``.  ``sampling`` is the
    factor of its last term: ``"printed"`` :math:`\frac{1-p}{p}`, or ``"fixed"`` :math:`\frac1p`, the factor that
    Lemma D.3's (D.41)-(D.43) needs for updates with negative inner products
    (:func:`theorylab.cis.aggregation.sampling_factor`)."""
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}; got {reading!r}")
    alpha, p, sigma2 = (np.asarray(v, dtype=np.float64) for v in (alpha, p, sigma2))
    if not math.isclose(alpha.sum(), 1.0, abs_tol=1e-9):
        raise ValueError(f"alpha must sum to 1 (eta_s * sum_e target_e = 1, theory mode); got {alpha.sum():.6g}")
    J, pos = int(local_steps), p > 0
    g_ie = sigma2 + (_positive("L", L) * _positive("diameter", diameter)) ** 2
    g = float(g_ie[pos].max())
    drift = 8 * (J - 1) ** 2 * (g if reading == "corrected" else g ** 2)
    spread = 4 * J ** 2 * float(np.sum(alpha ** 2 * sampling_factor(p, sampling) * g_ie))
    return float(np.sum(alpha ** 2 * sigma2)) + 6 * L * _positive("Gamma", Gamma, True) + drift + spread


def d49_bound(B: float, L: float, mu: float, local_steps: int, rounds: int, init_dist2: float) -> float:
    r"""(D.49): :math:`\frac{\kappa}{\gamma+JT}(\frac{2B}{\mu}+\frac{\mu(\gamma+1)}2\|w^{(1)}-w^*\|^2)`."""
    kappa = _positive("L", L) / _positive("mu", mu)
    gamma = gamma_offset(kappa, local_steps)
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1; got {rounds}")
    return kappa / (gamma + local_steps * rounds) * (2 * _positive("B", B, True) / mu
                                                    + mu * (gamma + 1) / 2 * _positive("init_dist2", init_dist2, True))


class Decomposition(NamedTuple):
    gen: float
    bias: float
    opt: float

    @property
    def total(self) -> float:
        """(D.1): 2 eps_gen + 2 eps_bias + eps_opt."""
        return 2 * self.gen + 2 * self.bias + self.opt
