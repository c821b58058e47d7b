r"""Exact first moments of FedAWE on two scalar clients with exact local gradients (seed 000 Example 1).

Clients :math:`F_i(x) = \tfrac{a_i}{2}(x-u_i)^2`, local GD with step :math:`\eta_l` for :math:`s` steps, so
:math:`G_i = (1-c_i)(x_i-u_i)` with :math:`c_i = (1-\eta_la_i)^s`, and the echoed model of an active client is
:math:`x_i^\dagger = (1-g_i)x_i + g_iu_i` with :math:`g_i = \eta_g k_i(1-c_i)` and :math:`k_i = t-\tau_i(t)`
(Algorithm 1; digest 000 §2.1).  Given the staleness pair :math:`k = (k_1,k_2)` and the active set, the
state :math:`X = (x_1, x_2, x)` (client models, server model) moves by an affine map, and the staleness pair
moves deterministically.  Availability is independent of :math:`(X, k)` (A1), so the bucketed first moments
:math:`v_t(k) = \mathbb E[X^t\mathbb 1\{k(t)=k\}]` and probabilities :math:`\pi_t(k)` follow an exact linear
recursion over the four active sets:

* :math:`\emptyset` (prob. :math:`(1-p_1)(1-p_2)`): :math:`X` unchanged, :math:`k\to(k_1+1,k_2+1)`;
* :math:`\{1\}`: :math:`x_1, x \leftarrow x_1^\dagger`, :math:`k\to(1,k_2+1)`; :math:`\{2\}` symmetric;
* :math:`\{1,2\}`: :math:`x_1,x_2,x\leftarrow(x_1^\dagger+x_2^\dagger)/2`, :math:`k\to(1,1)`.

Staleness is truncated at :math:`K_i` with :math:`(1-p_i)^{K_i-1}\le` ``tol`` (the pair is clamped there), so
the result is exact up to that probability mass.  Then :math:`\mathbb E[\bar x^t] = \sum_k (v_t(k)_1+v_t(k)_2)/2`
and :math:`\mathbb E[x^t] = \sum_k v_t(k)_3`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TwoClientMoments:
    rounds: np.ndarray  # (n,)
    mean_model: np.ndarray  # (n,) E[xbar^t], the all-client mean
    server_model: np.ndarray  # (n,) E[x^t]
    truncated_mass: float  # bound on the probability that a clamped staleness state was reached


def truncation_levels(p, tol: float) -> tuple[int, int]:
    """:math:`K_i = 1 + \\lceil\\log(\\mathrm{tol})/\\log(1-p_i)\\rceil` (at least 2)."""
    out = []
    for pi in p:
        if not 0 < pi <= 1:
            raise ValueError(f"availability probabilities must lie in (0, 1]; got {pi}")
        out.append(2 if pi == 1 else max(2, 1 + math.ceil(math.log(tol) / math.log1p(-pi))))
    return out[0], out[1]


def fedawe_two_client_moments(p, centers=(0.0, 1.0), curvatures=(1.0, 1.0), lr: float = 0.05, local_steps: int = 5,
                              server_lr: float = 1.0, x0: float = 0.0, rounds: int = 400, every: int = 1,
                              tol: float = 1e-13, settle: float | None = None) -> TwoClientMoments:
    """Exact :math:`\\mathbb E[\\bar x^t]` and :math:`\\mathbb E[x^t]` of FedAWE for stationary ``p = (p_1, p_2)``.

    With ``settle``, iteration stops early once both moments moved by less than ``settle`` between two recorded
    rounds (for limits :math:`t\\to\\infty`); the last recorded round is then the stopping round.
    """
    p = np.asarray(p, dtype=np.float64)
    if p.shape != (2,):
        raise ValueError(f"p must hold two probabilities; got {p!r}")
    if int(local_steps) != local_steps or local_steps < 1 or not lr > 0 or not server_lr > 0:
        raise ValueError("need an integer local_steps >= 1, lr > 0 and server_lr > 0")
    u, a = np.asarray(centers, dtype=np.float64), np.asarray(curvatures, dtype=np.float64)
    K1, K2 = truncation_levels(p, tol)
    k1, k2 = np.arange(1, K1 + 1), np.arange(1, K2 + 1)
    g1 = server_lr * k1 * (1 - (1 - lr * a[0]) ** local_steps)  # echo gain by staleness k1
    g2 = server_lr * k2 * (1 - (1 - lr * a[1]) ** local_steps)
    q0, q1, q2, q12 = (1 - p[0]) * (1 - p[1]), p[0] * (1 - p[1]), (1 - p[0]) * p[1], p[0] * p[1]

    v = np.zeros((K1, K2, 3))
    pi = np.zeros((K1, K2))
    v[0, 0], pi[0, 0] = x0, 1.0

    def shift(arr, axis):  # k -> min(k + 1, K) along ``axis``
        out = np.zeros_like(arr)
        index = [slice(None)] * arr.ndim
        src, dst = list(index), list(index)
        src[axis], dst[axis] = slice(0, -1), slice(1, None)
        out[tuple(dst)] = arr[tuple(src)]
        last = list(index)
        last[axis] = -1
        out[tuple(last)] += arr[tuple(last)]
        return out

    rounds_out, mean_out, server_out = [0], [x0], [x0]
    mass = 0.0
    for t in range(rounds):
        dagger1 = (1 - g1)[:, None] * v[..., 0] + (g1 * u[0])[:, None] * pi  # E[x_1^dagger 1{k}]
        dagger2 = (1 - g2)[None, :] * v[..., 1] + (g2 * u[1])[None, :] * pi
        new_v, new_pi = q0 * shift(shift(v, 0), 1), q0 * shift(shift(pi, 0), 1)
        # {1}: client 1 active, k -> (1, k2 + 1)
        only1 = np.stack([dagger1, v[..., 1], dagger1], -1).sum(0)  # (K2, 3), summed over k1
        new_v[0] += q1 * shift(only1, 0)
        new_pi[0] += q1 * shift(pi.sum(0), 0)
        # {2}: client 2 active, k -> (k1 + 1, 1)
        only2 = np.stack([v[..., 0], dagger2, dagger2], -1).sum(1)  # (K1, 3)
        new_v[:, 0] += q2 * shift(only2, 0)
        new_pi[:, 0] += q2 * shift(pi.sum(1), 0)
        # {1, 2}: both receive the average
        avg = 0.5 * (dagger1.sum() + dagger2.sum())
        new_v[0, 0] += q12 * avg
        new_pi[0, 0] += q12 * pi.sum()
        v, pi = new_v, new_pi
        mass = max(mass, float(pi[-1, :].sum() + pi[:, -1].sum()))
        if (t + 1) % every == 0 or t + 1 == rounds:
            rounds_out.append(t + 1)
            mean_out.append(0.5 * float(v[..., 0].sum() + v[..., 1].sum()))
            server_out.append(float(v[..., 2].sum()))
            if settle is not None and max(abs(mean_out[-1] - mean_out[-2]), abs(server_out[-1] - server_out[-2])) < settle:
                break
    return TwoClientMoments(np.asarray(rounds_out), np.asarray(mean_out), np.asarray(server_out), mass)
