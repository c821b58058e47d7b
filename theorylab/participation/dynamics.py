r"""FedAWE's availability dynamics :math:`p_i^t = \mathrm{clip}(p_i f_i(t), 0, 1)` (seed 000 §7, App. J; digest 000 §5).

====================  =========================================================================
``stationary``        :math:`f(t) = 1`
``staircase``         :math:`f(t) = 1` on the first half of each period, ``low`` (0.4) on the second:
                      :math:`1` if :math:`\lfloor t/(P/2)\rfloor` is even, else ``low``
``sine``              :math:`f(t) = \gamma\sin(2\pi t/P) + (1-\gamma)`
``interleaved_sine``  :math:`p_i^t = p_i g(t)\,\mathbb 1\{p_i g(t) \ge \delta_0\}`,
                      :math:`g(t) = \gamma\sin(2\pi t/P)+(1-\gamma)`
====================  =========================================================================

Defaults are the paper's: :math:`P = 20`, :math:`\gamma = 0.3`, ``low`` = 0.4, :math:`\delta_0 = 0.1`.
Under the interleaved sine some :math:`p_i^t = 0`, which violates FedAWE's A1.

The base probabilities of the paper's experiments are
:math:`p_i = \langle\nu_i,\phi\rangle` with :math:`\nu_i` client :math:`i`'s label
distribution and :math:`\phi_c\sim U(0,\Phi_c)`, :math:`\Phi = (1,1,1,1,1,.5,.5,.5,.5,.5)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theorylab.participation.base import check_probabilities

DYNAMICS = ("stationary", "staircase", "sine", "interleaved_sine")
PAPER_PHI_MAX = (1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5)


@dataclass(frozen=True, eq=False)
class Schedule:
    """``schedule(t)`` returns :math:`p^t` (shape ``(m,)``, or ``(len(t), m)`` for an array of rounds)."""

    base: np.ndarray
    dynamics: str = "stationary"
    gamma: float = 0.3
    period: int = 20
    low: float = 0.4
    delta0: float = 0.1

    def __post_init__(self):
        object.__setattr__(self, "base", check_probabilities("p", self.base))
        if self.dynamics not in DYNAMICS:
            raise ValueError(f"dynamics must be one of {DYNAMICS}; got {self.dynamics!r}")
        if not 0.0 <= self.gamma <= 0.5:
            raise ValueError(f"gamma must lie in [0, 0.5] so that f(t) >= 0; got {self.gamma}")
        if int(self.period) != self.period or self.period < 2 or self.period % 2:
            raise ValueError(f"period must be an even integer >= 2; got {self.period}")
        check_probabilities("low", [self.low])
        check_probabilities("delta0", [self.delta0])

    def factor(self, t) -> np.ndarray:
        """:math:`f(t)` (or :math:`g(t)` for the interleaved sine), same shape as ``t``."""
        t = np.asarray(t, dtype=np.float64)
        if self.dynamics == "stationary":
            return np.ones_like(t)
        if self.dynamics == "staircase":
            return np.where((t // (self.period // 2)) % 2 == 0, 1.0, self.low)
        return self.gamma * np.sin(2 * np.pi * t / self.period) + (1 - self.gamma)

    def __call__(self, t) -> np.ndarray:
        if self.dynamics == "stationary":  # f = 1: the base itself (in [0, 1]), for every t
            return np.broadcast_to(self.base, (*np.shape(t), len(self.base))).copy()
        p = np.multiply.outer(self.factor(t), self.base)
        if self.dynamics == "interleaved_sine":
            p = np.where(p >= self.delta0, p, 0.0)
        return np.clip(p, 0.0, 1.0)


def fedawe_base_probabilities(label_proportions, seed: int, phi_max=PAPER_PHI_MAX) -> np.ndarray:
    """:math:`p_i = \\langle\\nu_i,\\phi\\rangle`, :math:`\\phi_c \\sim U(0, \\Phi_c)` drawn once from ``seed``.

    ``label_proportions`` is ``(m, C)``, each row client i's label distribution
    (the official code uses the empirical proportions after partitioning).
    """
    nu = np.asarray(label_proportions, dtype=np.float64)
    phi_max = np.asarray(phi_max, dtype=np.float64)
    if nu.ndim != 2 or nu.shape[1] != phi_max.size:
        raise ValueError(f"label_proportions must have shape (m, {phi_max.size}); got {nu.shape}")
    if np.any(nu < 0) or not np.allclose(nu.sum(1), 1.0):
        raise ValueError("each row of label_proportions must be a probability vector")
    phi = np.random.Generator(np.random.PCG64(seed)).uniform(0.0, phi_max)
    return nu @ phi


def fedawe_recipe(n_clients: int, seed: int, alpha: float = 0.1, phi_max=PAPER_PHI_MAX) -> np.ndarray:
    """The paper's recipe with :math:`\\nu_i \\sim \\mathrm{Dirichlet}(\\alpha\\mathbf 1)` sampled directly (no dataset)."""
    rng = np.random.Generator(np.random.PCG64([seed, 1]))
    nu = rng.dirichlet(np.full(len(phi_max), alpha), size=n_clients)
    return fedawe_base_probabilities(nu, seed, phi_max)
