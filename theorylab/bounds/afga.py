r"""AFGA / CAFGA theory calculators: the proof constants, the topology and step-size conditions, the rate shapes and
the prescribed schedules (seed 002 Thm 4.6, Thm D.3, App. E–F; digest 002 §2.2–2.4, §4.6).

Notation: :math:`N` clients, :math:`M` reporting per round (AFGA); for CAFGA :math:`K` clusters of :math:`n`
clients with :math:`m` sampled per cluster, :math:`N = Kn` (with :math:`K = 1`: :math:`n = N`, :math:`m = M`);
:math:`\mathcal I` local steps, :math:`R` rounds, :math:`\rho_{\max} = \max_k\|W_k-J\|_2` (:math:`=\rho` for AFGA).

===========================  ===========================================================================================
:math:`H_{\mathcal I,\rho}`  :math:`\min\{\frac1{1-\rho_{\max}},\mathcal I\}`
:math:`C_0`                  :math:`\sqrt{\eta_l^2\mathcal I^2G^2+\epsilon}`, the bound on :math:`\sqrt{\hat v_r+\epsilon}` used as
                             :math:`\|x\|^2C_0^{-1}\le\|x\|^2(\hat v_r+\epsilon)^{-1/2}\le\|x\|^2\epsilon^{-1/2}` (eq. 17
                             prints :math:`\epsilon^{1/2}`, a typo: digest §6 item 9)
:math:`C_{\mathcal I}`       :math:`1+\frac32\cdot\frac1{4\mathcal I-1}`
:math:`C_\beta`              :math:`\frac{\beta_1}{1-\beta_1}`
:math:`C_{\beta,\eta}`       :math:`\frac{\eta L}{\epsilon}\frac{\beta_1^2}{(1-\beta_1)^2}+\frac{3\eta L}{\epsilon}`
topology (Thm 4.6 / D.3)     :math:`\rho\le\frac M{M+N}` / :math:`\rho_{\max}\le\frac m{m+n}` (eq. 32)
eq. 31                       :math:`\frac{\rho_{\max}^2}{1-\rho_{\max}}\le\frac{m^2}{n^2}`
eq. 30                       :math:`\frac{n(n-m)}{m^2(n-1)}H_{\mathcal I,\rho}\rho_{\max}^2\le\frac1n`
Lemmas F.1, F.3              :math:`\eta_l\le\frac1{8\mathcal IL}`
eq. 25                       :math:`\eta_l\le\frac1{4C_0C_{\beta,\eta}}\big[\frac{c}{N^2}\frac{m-1}{n-1}+\frac{2(\mathcal I+2)m}{N^2n}\big]^{-1}`
eq. 27                       :math:`\eta_l\le\frac{\epsilon^{1/4}}{\sqrt{18L^2C_0C_1\mathcal I(\mathcal I+\rho_{\max}^2H_{\mathcal I,\rho})\alpha^2}}`
schedules (Thm 4.6)          :math:`\eta_l = c_l/(\mathcal I\sqrt R)`, :math:`\eta = c_gN\sqrt{\mathcal I/M}`
Lemma F.6                    :math:`\mathbb E\|\sum_{k,i}\mathbb 1\{i\in\mathcal S^k\}y^{k,i}\|^2\le\frac{m(m-1)}{n(n-1)}
                             \|\sum_{k,i}y^{k,i}\|^2+\frac{Km(n-m)}{n(n-1)}\sum_{k,i}\|y^{k,i}\|^2`
===========================  ===========================================================================================

Errata carried here (digest §6): eq. 25's left side, solved for :math:`\eta_l`, gives :math:`c = 16`; the paper's
right side prints 4 (item 9), so :func:`eq25_step_limit` takes the coefficient as a parameter (16 by default).
Thm 4.6 calls :math:`\eta` the "local" rate, and its proof writes :math:`\eta_l = \Theta(1/\sqrt{R\mathcal I})`
while its algebra needs :math:`\eta_l^2 = 1/(R\mathcal I^2)`; the schedules here follow the theorem's consistent
:math:`1/(\mathcal I\sqrt R)` (item 8).  eq. 32 ⇒ eq. 31 ⇒ eq. 30 is sound but only sufficient, and uses
:math:`H = \frac1{1-\rho}` even when :math:`H = \mathcal I` is smaller (digest §2.4).  App. C's
:math:`(W-J)^2 = W-J` is false (item 10): :math:`(W-J)^2 = W^2-J`; only :math:`\|W-J\|_2\le1` holds.
The universal constants :math:`C_1,\dots,C_4,C` are never given, so eq. 27 takes :math:`C_1` as a parameter, and
:func:`rate_eq3` / :func:`rate_eq8` set every hidden constant to 1: they are rate *shapes*, for slopes and orderings
only, never absolute bounds.
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.validation import integer, real


def _pos(name: str, value) -> float:
    return real(name, value, 0.0, open_low=True)


def _rho(rho: float, name: str = "rho") -> float:
    rho = real(name, rho, 0.0, 1.0)
    if rho == 1.0:
        raise ValueError(f"{name} must lie in [0, 1) (Assumption 4.5); got 1.0")
    return rho


def _sampled(m, n) -> tuple[int, int]:
    m, n = integer("m", m, 1), integer("n", n, 1)
    if m > n:
        raise ValueError(f"m must lie in 1..n = {n} (clients sampled per cluster); got {m}")
    return m, n


def h_factor(I: int, rho_max: float) -> float:
    r""":math:`H_{\mathcal I,\rho} = \min\{1/(1-\rho_{\max}), \mathcal I\}`."""
    return min(1.0 / (1.0 - _rho(rho_max, "rho_max")), float(integer("I", I, 1)))


def c0(eta_l: float, I: int, G: float, eps: float) -> float:
    r""":math:`C_0 = \sqrt{\eta_l^2\mathcal I^2G^2+\epsilon}`."""
    eta_l, I, G = _pos("eta_l", eta_l), integer("I", I, 1), real("G", G, 0.0)
    return math.sqrt((eta_l * I * G) ** 2 + _pos("eps", eps))


def c_local(I: int) -> float:
    r""":math:`C_{\mathcal I} = 1 + \frac32\cdot\frac1{4\mathcal I-1}` (Lemma F.1)."""
    return 1.0 + 1.5 / (4 * integer("I", I, 1) - 1)


def c_beta(beta1: float) -> float:
    r""":math:`C_\beta = \beta_1/(1-\beta_1)`."""
    beta1 = real("beta1", beta1, 0.0, 1.0)
    if beta1 == 1.0:
        raise ValueError("beta1 must lie in [0, 1); got 1.0")
    return beta1 / (1.0 - beta1)


def c_beta_eta(eta: float, L: float, eps: float, beta1: float) -> float:
    r""":math:`C_{\beta,\eta} = \frac{\eta L}{\epsilon}(C_\beta^2 + 3)`."""
    return _pos("eta", eta) * _pos("L", L) / _pos("eps", eps) * (c_beta(beta1) ** 2 + 3.0)


def rho_threshold(m: int, n: int) -> float:
    r"""The topology condition's bound :math:`\frac m{m+n}` (Thm 4.6 with :math:`m = M, n = N`; Thm D.3, eq. 32)."""
    m, n = _sampled(m, n)
    return m / (m + n)


def eq31(m: int, n: int, rho_max: float) -> tuple[float, float]:
    r"""eq. 31 as ``(lhs, rhs)``: :math:`\frac{\rho_{\max}^2}{1-\rho_{\max}}` and :math:`\frac{m^2}{n^2}`."""
    m, n = _sampled(m, n)
    rho = _rho(rho_max, "rho_max")
    return rho ** 2 / (1.0 - rho), (m / n) ** 2


def eq30(m: int, n: int, I: int, rho_max: float) -> tuple[float, float]:
    r"""eq. 30 as ``(lhs, rhs)``: :math:`\frac{n(n-m)}{m^2(n-1)}H_{\mathcal I,\rho}\rho_{\max}^2` and
    :math:`\frac1n` (the left side is 0 when :math:`n = 1`, since then :math:`m = n`)."""
    m, n = _sampled(m, n)
    pairs = n * (n - m) / (m ** 2 * (n - 1)) if n > 1 else 0.0
    return pairs * h_factor(I, rho_max) * float(rho_max) ** 2, 1.0 / n


def smoothness_step_limit(I: int, L: float) -> float:
    r"""Lemmas F.1 and F.3: :math:`\eta_l\le\frac1{8\mathcal IL}`."""
    return 1.0 / (8 * integer("I", I, 1) * _pos("L", L))


def eq25_step_limit(eta_l: float, eta: float, L: float, eps: float, beta1: float, I: int, G: float, N: int, m: int,
                    n: int, coefficient: float = 16.0) -> float:
    r"""eq. 25's right side, with :math:`C_0` evaluated at ``eta_l``: the largest :math:`\eta_l` it allows.

    ``coefficient`` is the :math:`c` of the module table: 16 solves the printed left side, the paper's right side
    prints 4 (digest §6 item 9).  :math:`\frac{m-1}{n-1}` is taken as 0 for :math:`n = 1`.
    """
    m, n = _sampled(m, n)
    N = integer("N", N, 1)
    if N < n:
        raise ValueError(f"N must be >= n = {n} (N = Kn); got {N}")
    pairs = (m - 1) / (n - 1) if n > 1 else 0.0
    I = integer("I", I, 1)
    bracket = _pos("coefficient", coefficient) * pairs / N ** 2 + 2 * (I + 2) * m / (N ** 2 * n)
    return 1.0 / (4.0 * c0(eta_l, I, G, eps) * c_beta_eta(eta, L, eps, beta1) * bracket)


def eq27_step_limit(eta_l: float, L: float, eps: float, I: int, G: float, rho_max: float, C1: float,
                    alpha: float = 1.0) -> float:
    r"""eq. 27's right side, with :math:`C_0` at ``eta_l``; :math:`C_1` is an unknown universal constant (a
    parameter) and :math:`\alpha\ge1` Assumption D.1's cross-cluster factor (1 for AFGA)."""
    alpha, H = real("alpha", alpha, 1.0), h_factor(I, rho_max)
    inner = 18 * _pos("L", L) ** 2 * c0(eta_l, I, G, eps) * _pos("C1", C1) * I * (I + rho_max ** 2 * H)
    return _pos("eps", eps) ** 0.25 / math.sqrt(inner * alpha ** 2)


def rate_eq3(R: int, I: int, M: int, rho: float, delta_f: float, L: float, sigma2: float, sigma_g2: float,
             G: float) -> float:
    r"""Shape of eq. (3), hidden constants 1 and the :math:`\widetilde{\mathcal O}(R^{-3/2})` term dropped:
    :math:`\frac{\Delta f+L(\sigma^2+\sigma_g^2)}{\sqrt{R\mathcal IM}}+\frac{G^2+L^2(1+\rho^2)\sigma_g^2+\rho^2\sigma^2/\mathcal I}R`."""
    R, I, M, rho = integer("R", R, 1), integer("I", I, 1), integer("M", M, 1), _rho(rho)
    delta_f, L = real("delta_f", delta_f, 0.0), _pos("L", L)
    sigma2, sigma_g2, G = real("sigma2", sigma2, 0.0), real("sigma_g2", sigma_g2, 0.0), real("G", G, 0.0)
    lead = (delta_f + L * (sigma2 + sigma_g2)) / math.sqrt(R * I * M)
    return lead + (G ** 2 + L ** 2 * (1 + rho ** 2) * sigma_g2 + rho ** 2 * sigma2 / I) / R


def rate_eq8(R: int, I: int, m: int, K: int, rho_max: float, delta_f: float, L: float, sigma2: float,
             sigma_l2: float, sigma_c2: float, G: float) -> float:
    r"""Shape of eq. (8) (CAFGA), hidden constants 1, :math:`\widetilde{\mathcal O}(R^{-3/2})` dropped, with
    :math:`\tilde\sigma^2 = \sigma^2+\bar\sigma_l^2+\sigma_c^2`:
    :math:`\frac{\Delta f+(\tilde\sigma^2+\sigma^2/K)L}{\sqrt{R\mathcal Im}}
    +\frac{G^2+L^2[\sigma_c^2+(1+\rho_{\max}^2)\bar\sigma_l^2]+\rho_{\max}^2\sigma^2/\mathcal I}R`."""
    R, I, m, K = integer("R", R, 1), integer("I", I, 1), integer("m", m, 1), integer("K", K, 1)
    rho = _rho(rho_max, "rho_max")
    delta_f, L = real("delta_f", delta_f, 0.0), _pos("L", L)
    sigma2, sigma_l2 = real("sigma2", sigma2, 0.0), real("sigma_l2", sigma_l2, 0.0)
    sigma_c2, G = real("sigma_c2", sigma_c2, 0.0), real("G", G, 0.0)
    lead = (delta_f + (sigma2 + sigma_l2 + sigma_c2 + sigma2 / K) * L) / math.sqrt(R * I * m)
    return lead + (G ** 2 + L ** 2 * (sigma_c2 + (1 + rho ** 2) * sigma_l2) + rho ** 2 * sigma2 / I) / R


def local_lr_schedule(c_l: float, I: int, R: int) -> float:
    r"""Thm 4.6's :math:`\eta_l = c_l/(\mathcal I\sqrt R)` (not the proof's :math:`1/\sqrt{R\mathcal I}`, item 8)."""
    return _pos("c_l", c_l) / (integer("I", I, 1) * math.sqrt(integer("R", R, 1)))


def global_lr_schedule(c_g: float, N: int, I: int, M: int) -> float:
    r"""Thm 4.6's :math:`\eta = c_gN\sqrt{\mathcal I/M}` (CAFGA: :math:`c_gn\sqrt{\mathcal I/m}`)."""
    M, N = _sampled(M, N)
    return _pos("c_g", c_g) * N * math.sqrt(integer("I", I, 1) / M)


def lemma_f6_bound(y, m: int) -> float:
    r"""Lemma F.6's right side for vectors ``y`` of shape ``(K, n, d)`` (cluster, client, coordinate) with :math:`m`
    of the :math:`n` clients of each cluster sampled uniformly without replacement:
    :math:`\frac{m(m-1)}{n(n-1)}\|\sum_{k,i}y^{k,i}\|^2+\frac{Km(n-m)}{n(n-1)}\sum_{k,i}\|y^{k,i}\|^2`
    (for :math:`n = 1` both fractions are taken as 0 when :math:`m = 1`)."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 3 or not np.isfinite(y).all():
        raise ValueError(f"y must be a finite array of shape (K, n, d); got shape {y.shape}")
    K, n, _ = y.shape
    m, n = _sampled(m, n)
    pair, single = (m * (m - 1) / (n * (n - 1)), K * m * (n - m) / (n * (n - 1))) if n > 1 else (0.0, 0.0)
    return float(pair * np.sum(y.sum((0, 1)) ** 2) + single * np.sum(y ** 2))
