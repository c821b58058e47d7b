r"""Thesis ch. 4 upper bound: Theorem 4.3.1 (UPGA-PL under packet losses), eqs. (4.6)-(4.7).

Source: seed 001 Ch. 4 §4.3, Theorem 4.3.1; App. C, Lemma A.1 (C.3)-(C.5) and (C.7)-(C.11); digest 001 §2.3-2.4,
§7 items 3-4.  Under A10-A14 (:math:`L`-smooth, :math:`\mu`-strongly convex clients, local-gradient variance
:math:`\sigma_i^2`, second moment :math:`G^2`, independent losses :math:`q_i`), with
:math:`\eta^{(t)} = \frac{2}{\mu(8\kappa+t-1)}` (:func:`theorem_schedule`; :math:`\eta^{(1)} = 1/(4L)`),
:math:`\kappa = L/\mu` and :math:`\Gamma = F^*-\sum_i\alpha_iF_i^*`,

.. math::
    \mathbb E F(w^{(t+1)}) - F^* \le \frac{\kappa}{8\kappa+t}\Big(\frac{2KC}{\mu} + 4L\|w^{(1)}-w^*\|^2\Big),\qquad
    C = \sum_i\alpha_i^2\sigma_i^2 + c_{\rm drift}(K-1)^2G^2 + 6L\Gamma + KG^2\sum_i\alpha_i^2\frac{q_i}{1-q_i}.

**Drift coefficient.**  Chapter 4 prints :math:`c_{\rm drift} = 2`; the thesis' own App. D (D.20, D.50), citing the
same lemmas of X. Li et al. (2020), uses 8 (digest §7 item 3).  Both are offered (:data:`DRIFT_COEFFICIENTS`) and
the claims decide under both.  The two are consistent with their schedules: Lemma 1 carries
:math:`2\sum_i\alpha_i\|w_i-\bar w\|^2` and Lemma 3 bounds it by :math:`\eta_{t_0}^2(K-1)^2G^2` with
:math:`t_0` the round's first local step; Algorithm 5's step is constant within a round, so this is
:math:`\eta_t^2(K-1)^2G^2` and the coefficient 2, while App. D's step decays within the round
(:math:`\eta_{t_0}\le2\eta_t`, (D.31)), whence :math:`4\cdot2 = 8`.

After :math:`r` rounds (our round index, from 0) the bound reads
:math:`\frac{\kappa}{8\kappa+r}(\dots)`; at :math:`r = 0` it is :math:`\frac18(\dots)\ge\frac L2\|w^{(1)}-w^*\|^2`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DRIFT_COEFFICIENTS = (2, 8)


def lossy_term(alpha, loss) -> float:
    r""":math:`v = \sum_i\alpha_i^2q_i/(1-q_i)`, the variance of UPGA-PL's weights' sum and (4.7)'s loss factor."""
    alpha, q = np.asarray(alpha, dtype=np.float64), np.asarray(loss, dtype=np.float64)
    if alpha.shape != q.shape or np.any(q < 0) or np.any(q >= 1):
        raise ValueError(f"loss must hold one probability in [0, 1) per weight; got {loss!r}")
    return float(np.sum(alpha ** 2 * q / (1.0 - q)))


def theorem_schedule(L: float, mu: float) -> dict:
    r"""Theorem 4.3.1's step :math:`\eta^{(r)} = \frac{2}{\mu(8\kappa+r)}` at round :math:`r\ge0`, as the
    ``inverse`` schedule :math:`\eta_0/(1+r/t_0)` with :math:`\eta_0 = 1/(4L)`, :math:`t_0 = 8\kappa`."""
    if not 0 < mu <= L:
        raise ValueError(f"need 0 < mu <= L; got mu = {mu}, L = {L}")
    return {"name": "inverse", "lr0": 1.0 / (4.0 * L), "t0": 8.0 * L / mu}


@dataclass(frozen=True)
class Ch4Constants:
    r"""Constants of Theorem 4.3.1: objective weights :math:`\alpha`, losses :math:`q`, per-client variances
    :math:`\sigma_i^2`, :math:`L`, :math:`\mu`, :math:`K`, :math:`G^2`, :math:`\Gamma`, and
    :math:`\|w^{(1)}-w^*\|^2`."""

    alpha: tuple
    loss: tuple
    sigma2: tuple
    L: float
    mu: float
    K: int
    G2: float
    Gamma: float
    dist0: float

    def __post_init__(self):
        lossy_term(self.alpha, self.loss)
        if len(self.sigma2) != len(self.alpha) or min(self.sigma2) < 0:
            raise ValueError(f"sigma2 must hold one variance >= 0 per client; got {self.sigma2!r}")
        if not 0 < self.mu <= self.L:
            raise ValueError(f"need 0 < mu <= L; got mu = {self.mu}, L = {self.L}")
        if int(self.K) != self.K or self.K < 1:
            raise ValueError(f"K must be an integer >= 1; got {self.K}")
        for name in ("G2", "Gamma", "dist0"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0; got {getattr(self, name)}")


def c_terms(k: Ch4Constants, drift: int = 2) -> dict[str, float]:
    """The four terms of (4.7) by name, and their sum ``C``."""
    if drift not in DRIFT_COEFFICIENTS:
        raise ValueError(f"drift must be one of {DRIFT_COEFFICIENTS}; got {drift}")
    alpha = np.asarray(k.alpha, dtype=np.float64)
    terms = {"variance": float(alpha ** 2 @ np.asarray(k.sigma2, dtype=np.float64)),
             "drift": drift * (k.K - 1) ** 2 * k.G2, "heterogeneity": 6.0 * k.L * k.Gamma,
             "losses": k.K * k.G2 * lossy_term(k.alpha, k.loss)}
    return {**terms, "C": sum(terms.values())}


def bound_46(k: Ch4Constants, rounds, drift: int = 2) -> np.ndarray:
    r"""Right side of (4.6) after ``rounds`` rounds (array of :math:`r\ge0`)."""
    r = np.asarray(rounds, dtype=np.float64)
    if np.any(r < 0):
        raise ValueError("rounds must be >= 0")
    kappa = k.L / k.mu
    return kappa / (8.0 * kappa + r) * (2.0 * k.K * c_terms(k, drift)["C"] / k.mu + 4.0 * k.L * k.dist0)


def bound_43(gap0: float, L: float, mu: float, alpha, loss, zeta1: float, zeta2: float, rounds) -> np.ndarray:
    r"""DMA-PL's prior bound as the thesis quotes it, (4.3) (M. Chen et al. 2021; seed 001 §4.2):

    .. math::
        \mathbb E F(w^{(t+1)}) - F^* \le A^t\,(F(w^{(1)})-F^*) + \frac{2\zeta_1}{L}\sum_i\alpha_iq_i\,\frac{1-A^t}{1-A},
        \qquad A = 1-\frac{\mu}{L}+\frac{4\mu\zeta_2}{L}\sum_i\alpha_iq_i,

    after ``rounds`` rounds :math:`t`.  The thesis does not define :math:`\zeta_1, \zeta_2` (digest 001 ch. 4-6
    §2.2, §7 item 5): they are parameters here.  :math:`A\ge1` leaves no convergence and ``inf`` marks a bound that
    grows without limit (:math:`A>1` with :math:`\zeta_1>0`)."""
    if not 0 < mu <= L:
        raise ValueError(f"need 0 < mu <= L; got mu = {mu}, L = {L}")
    if zeta1 < 0 or zeta2 < 0:
        raise ValueError(f"zeta1 and zeta2 must be >= 0; got {zeta1}, {zeta2}")
    alpha, q = np.asarray(alpha, dtype=np.float64), np.asarray(loss, dtype=np.float64)
    lossy_term(alpha, q)  # validates the losses
    t = np.asarray(rounds, dtype=np.float64)
    s = float(alpha @ q)
    A = 1.0 - mu / L + 4.0 * mu * zeta2 / L * s
    geometric = t if A == 1.0 else (1.0 - A ** t) / (1.0 - A)
    return A ** t * gap0 + 2.0 * zeta1 / L * s * geometric


def bound_43_contraction(L: float, mu: float, alpha, loss, zeta2: float) -> float:
    r""":math:`A` of (4.3); the bound converges only when :math:`A<1`, i.e. :math:`4\zeta_2\sum_i\alpha_iq_i<1`."""
    return 1.0 - mu / L + 4.0 * mu * zeta2 / L * float(np.asarray(alpha, dtype=np.float64) @ np.asarray(loss))


def smallest_zeta1(alpha, curvatures, centers, zeta2: float) -> float:
    r"""The smallest :math:`\zeta_1` with :math:`\sum_i\alpha_i\|\nabla F_i(w)\|^2\le\zeta_1+\zeta_2\|\nabla F(w)\|^2`
    for all :math:`w`, for scalar quadratics :math:`F_i=\frac{a_i}2(w-c_i)^2` (``inf`` when no :math:`\zeta_1` does).

    One *reading* of (4.3)'s undefined parameters (the digest recalls, unverified, that M. Chen et al. assume it).
    With :math:`a=\sum_i\alpha_ia_i`, :math:`w^*=\sum_i\alpha_ia_ic_i/a` and
    :math:`h(w)=\sum_i\alpha_ia_i^2(w-c_i)^2-\zeta_2a^2(w-w^*)^2`, :math:`\zeta_1=\sup_wh(w)`: finite iff
    :math:`\zeta_2\ge\sum_i\alpha_ia_i^2/a^2` (at equality only if :math:`h` is constant).  Equal curvatures give
    :math:`\zeta_2\ge1` and :math:`\zeta_1=\sum_i\alpha_i(c_i-w^*)^2`, the weighted spread of the centres."""
    alpha, a, c = (np.asarray(v, dtype=np.float64) for v in (alpha, curvatures, centers))
    total = float(alpha @ a)
    w_star = float(alpha @ (a * c)) / total
    quad = float(alpha @ a ** 2) - zeta2 * total ** 2  # h(w) = quad w^2 + lin w + const
    lin = -2.0 * float(alpha @ (a ** 2 * c)) + 2.0 * zeta2 * total ** 2 * w_star
    const = float(alpha @ (a ** 2 * c ** 2)) - zeta2 * total ** 2 * w_star ** 2
    scale = float(alpha @ a ** 2)
    if quad > 1e-12 * scale or (abs(quad) <= 1e-12 * scale and abs(lin) > 1e-12 * scale * (1.0 + abs(w_star))):
        return float("inf")
    if abs(quad) <= 1e-12 * scale:
        return const
    return const - lin ** 2 / (4.0 * quad)
