r"""P-FedAvg's aggregation schemes: the random weights :math:`a` of :math:`\theta^{t+1}=\sum_ia_iw_i^{t+1}` and their law.

Seed 003 §2.4 (L163–185); digest 003 §2 and §5.2.  With client weights :math:`p` and :math:`K` sampled clients:

=================  ==========================================================  ==============================
``full``           :math:`a=p`                                                  full participation
``I``              :math:`a_i=c_i/K`, :math:`c\sim\mathrm{Multinomial}(K,p)`    Scheme I (with replacement;
                                                                                a multiset, so multiplicities)
``II``             :math:`a_i=\mathbb 1\{i\in S\}\,p_iN/K`, :math:`S` uniform   Scheme II (without
                   of size :math:`K`                                            replacement); :math:`\sum_ia_i`
                                                                                is random unless :math:`p=1/N`
``II_rescaled``    :math:`a_i=\mathbb 1\{i\in S\}/K` and local gradients        Scheme II on the rescaled
                   scaled by :math:`q_i=Np_i`                                   objectives :math:`g_i=Np_if_i`
``full_uniform``   :math:`a=\mathbf 1/N`                                        **released-code bug** [R]: the
                                                                                authors' ``full_`` path averages
                                                                                uniformly whatever :math:`p`
=================  ==========================================================  ==============================

Exact moments (digest §5.2): :math:`\mathbb Ea=p` for ``full``, ``I``, ``II`` (Lemma C.1, also for unequal
:math:`p`) and :math:`\mathbf 1/N` for the other two;

.. math::
    \mathbb E[aa^\top]_{\rm I}=pp^\top+\frac{\mathrm{diag}(p)-pp^\top}{K},\qquad
    \mathbb E[aa^\top]_{\rm II}=\Big(\frac NK\Big)^2pp^\top\odot\Pi,\quad
    \Pi_{ii}=\frac KN,\ \Pi_{ij}=\frac{K(K-1)}{N(N-1)}.

The sample is drawn from the ``participation`` stream: Scheme I by inverse-CDF of :math:`K` uniforms,
Scheme II as the :math:`K` smallest of :math:`N` uniforms.  Sampling lives here, next to its law, rather
than in a participation process because Scheme I's multiset is not a set of active clients and because
every client computes in P-FedAvg (the sample only decides whose work is averaged).
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.rng import Streams

SCHEMES = ("full", "I", "II", "II_rescaled", "full_uniform")


def check_scheme(scheme: str, k: int | None, n_clients: int) -> int:
    """Validate ``scheme`` and return the sample size (``n_clients`` for the full schemes)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got {scheme!r}")
    if scheme in ("full", "full_uniform"):
        return n_clients
    if k is None or int(k) != k or k < 1:
        raise ValueError(f"scheme {scheme!r} needs an integer sample size K >= 1; got {k!r}")
    if scheme != "I" and k > n_clients:
        raise ValueError(f"scheme {scheme!r} samples without replacement: K must be <= N = {n_clients}; got {k}")
    return int(k)


def gradient_scales(scheme: str, p: np.ndarray) -> np.ndarray:
    """Per-client gradient multipliers :math:`q_i`: :math:`Np_i` for ``II_rescaled``, 1 otherwise."""
    p = np.asarray(p, dtype=np.float64)
    return len(p) * p if scheme == "II_rescaled" else np.ones_like(p)


def weight_moments(scheme: str, p, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:math:`(\\mathbb Ea,\\ \\mathbb E[aa^\\top])` of the aggregation weights in closed form."""
    p = np.asarray(p, dtype=np.float64)
    n = len(p)
    k = check_scheme(scheme, k, n)
    if scheme == "full":
        return p.copy(), np.outer(p, p)
    if scheme == "full_uniform":
        u = np.full(n, 1.0 / n)
        return u, np.outer(u, u)
    if scheme == "I":
        return p.copy(), np.outer(p, p) + (np.diag(p) - np.outer(p, p)) / k
    pair = np.full((n, n), k * (k - 1) / (n * (n - 1)) if n > 1 else 0.0)
    np.fill_diagonal(pair, k / n)
    scale = p * n / k if scheme == "II" else np.full(n, 1.0 / k)
    return scale * k / n, np.outer(scale, scale) * pair


def sample_weights(scheme: str, p: torch.Tensor, k: int | None, streams: Streams) -> torch.Tensor:
    """One draw of :math:`a` per replica, shape ``(R, N)``, from the ``participation`` stream."""
    n = p.shape[0]
    k = check_scheme(scheme, k, n)
    R = streams.replicas
    if scheme == "full":
        return p.expand(R, n).clone()
    if scheme == "full_uniform":
        return torch.full((R, n), 1.0 / n, dtype=p.dtype, device=p.device)
    if scheme == "I":
        u = streams.uniform("participation", (k,), p.dtype)
        cdf = torch.cumsum(p, 0)
        picks = torch.searchsorted(cdf / cdf[-1], u, right=True).clamp_(max=n - 1)
        counts = torch.zeros(R, n, dtype=p.dtype, device=p.device)
        return counts.scatter_add_(1, picks, torch.ones_like(u)).div_(k)
    u = streams.uniform("participation", (n,), p.dtype)
    chosen = torch.topk(u, k, dim=1, largest=False).indices
    mask = torch.zeros(R, n, dtype=p.dtype, device=p.device).scatter_(1, chosen, 1.0)
    return mask * (p * (n / k)) if scheme == "II" else mask.div_(k)


def sampling_variance(scheme: str, p, k: int | None, w) -> float:
    """:math:`\\mathrm{Var}_S(a^\\top w)` for fixed local models ``w`` (shape ``(N,)``), from the moments."""
    mean, second = weight_moments(scheme, p, k)
    w = np.asarray(w, dtype=np.float64)
    return float(w @ second @ w - (mean @ w) ** 2)
