r"""Fed-CIS (Algorithm 6) on exit-indexed quadratic losses, batched over replicas.

Source: seed 001 Ch. 5 Algorithm 6; Theorem 5.3.1 and App. D Theorem D.4 for the step sizes; §5.4.3 for the
experiments' optimiser; digest 001_thesis_ch4-6 §3.2, §3.3, §3.6, §6 G2.

Each exit loss is a quadratic :math:`F_{i,e}(w)=\tfrac12w^\top H_{i,e}w-b_{i,e}^\top w+c_{i,e}`, so
:math:`\nabla F_{i,e}(w)=H_{i,e}w-b_{i,e}`; a stochastic gradient adds :math:`\sigma_{i,e}z` with
:math:`z\sim\mathcal N(0,I_d)`, so A19 holds with :math:`\sigma_{i,e}^2d`.  One round:

1. every node draws at most one exit from :math:`p` (:func:`theorylab.cis.sampling.draw`, ``participation``
   stream);
2. each drawn pair :math:`(i,e)` runs :math:`K` local steps
   :math:`v\leftarrow v-\eta_{t,k}(\nabla F_{i,e}(v)+\sigma_{i,e}z_k+\omega v)+\beta m` (``gradient`` stream), with
   weight decay :math:`\omega` and heavy-ball momentum :math:`\beta` (buffer reset every round) both zero in the
   theorem's setting;
3. the server applies :func:`theorylab.cis.aggregation.aggregate` and projects on the ball :math:`\mathcal W`
   when one is given.

``hess`` ``(N, E, d, d)`` and ``lin`` ``(N, E, d)`` may carry a leading replica axis (one dataset per replica).
Random draws are made per block of rounds from each replica's own streams, so a replica's trajectory does not
depend on how many replicas run beside it.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from theorylab.cis.aggregation import aggregate, project_ball
from theorylab.cis.sampling import draw
from theorylab.rng import Streams

BLOCK = 64  # rounds of random draws fetched per call to the streams


def cosine_schedule(lr0: float, rounds: int) -> Callable[[int, int], float]:
    r"""The experiments' schedule (§5.4.3): :math:`\eta_t=\tfrac{\eta_0}2(1+\cos(\pi(t-1)/T))`, constant within a
    round."""
    if not lr0 > 0 or rounds < 1:
        raise ValueError(f"lr0 must be > 0 and rounds >= 1; got {lr0}, {rounds}")
    return lambda t, k: 0.5 * lr0 * (1 + math.cos(math.pi * (t - 1) / rounds))


def run_fedcis(hess, lin, noise, p, alpha, w0, rounds: int, local_steps: int, lr: Callable[[int, int], float],
               streams: Streams, *, record: Sequence[int] = (), ball: tuple[np.ndarray, float] | None = None,
               momentum: float = 0.0, weight_decay: float = 0.0) -> dict[int, np.ndarray]:
    r"""Run ``rounds`` rounds of Fed-CIS from ``w0`` ``(R, d)``; returns ``{t: w^{(t+1)}}`` for every ``t`` in
    ``record`` and for ``rounds`` (the model after :math:`t` rounds).  ``lr(t, k)`` gives :math:`\eta_{t,k}`,
    :math:`t\ge1`, :math:`0\le k<K`; ``ball = (center, radius)`` projects the server model."""
    hess, lin = np.asarray(hess, dtype=np.float64), np.asarray(lin, dtype=np.float64)
    noise, p = np.asarray(noise, dtype=np.float64), np.asarray(p, dtype=np.float64)
    w = np.array(w0, dtype=np.float64)
    replicas, dim = w.shape
    n_nodes = p.shape[0]
    if hess.ndim == 4:
        hess, lin = np.broadcast_to(hess, (replicas, *hess.shape)), np.broadcast_to(lin, (replicas, *lin.shape))
    if hess.shape[:2] != (replicas, n_nodes) or hess.shape[-1] != dim or lin.shape != hess.shape[:-1]:
        raise ValueError(f"hess must be (N, E, d, d) or (R, N, E, d, d) and lin match it; got {hess.shape}, "
                         f"{lin.shape} for R = {replicas}, N = {n_nodes}, d = {dim}")
    if noise.shape != p.shape or (noise < 0).any():
        raise ValueError(f"noise must hold one std >= 0 per (node, exit) {p.shape}; got {noise.shape}")
    if rounds < 1 or local_steps < 1:
        raise ValueError(f"rounds and local_steps must be >= 1; got {rounds}, {local_steps}")
    if not 0 <= momentum < 1 or weight_decay < 0:
        raise ValueError(f"momentum must be in [0, 1) and weight_decay >= 0; got {momentum}, {weight_decay}")
    rows, nodes = np.arange(replicas)[:, None], np.arange(n_nodes)[None, :]
    out, wanted = {}, set(record) | {rounds}
    for start in range(0, rounds, BLOCK):
        size = min(BLOCK, rounds - start)
        uniforms = streams.uniform("participation", (size, n_nodes)).numpy()
        shocks = streams.normal("gradient", (size, local_steps, n_nodes, dim)).numpy()
        for b in range(size):
            t = start + b + 1
            chosen = draw(p, uniforms[:, b])
            safe = np.where(chosen >= 0, chosen, 0)
            h, g0, sd = hess[rows, nodes, safe], lin[rows, nodes, safe], noise[nodes, safe][..., None]
            v = np.broadcast_to(w[:, None, :], (replicas, n_nodes, dim)).copy()
            velocity = np.zeros_like(v)
            for k in range(local_steps):
                grad = np.einsum("rnij,rnj->rni", h, v) - g0 + sd * shocks[:, b, k] + weight_decay * v
                velocity = momentum * velocity - lr(t, k) * grad
                v = v + velocity
            w = aggregate(w, v - w[:, None, :], chosen, p, alpha)
            if ball is not None:
                w = project_ball(w, ball[0], ball[1])
            if t in wanted:
                out[t] = w.copy()
    return out


def mean_fedcis(hess, lin, alpha, w0, rounds: int, local_steps: int, lr: Callable[[int, int], float],
                record: Sequence[int] = ()) -> dict[int, np.ndarray]:
    r"""The exact mean :math:`\mathbb E[w^{(t+1)}]` of Fed-CIS without projection, plain SGD: local steps are
    affine in :math:`w` and the noise has mean zero, so by Lemma D.2
    :math:`\mathbb E[w^{(t+1)}]=\bar w+\sum_{(i,e)}\alpha_{i,e}(\bar v_{i,e}^{(K)}-\bar w)` with
    :math:`\bar v` the noiseless local iterates from :math:`\bar w=\mathbb E[w^{(t)}]`.  ``hess`` ``(N, E, d, d)``;
    returns ``{t: E[w]}`` for ``record`` and ``rounds``."""
    hess, lin, alpha = (np.asarray(a, dtype=np.float64) for a in (hess, lin, alpha))
    w, out, wanted = np.array(w0, dtype=np.float64), {}, set(record) | {rounds}
    for t in range(1, rounds + 1):
        v = np.broadcast_to(w, lin.shape).copy()
        for k in range(local_steps):
            v = v - lr(t, k) * (np.einsum("neij,nej->nei", hess, v) - lin)
        w = w + np.einsum("ne,ned->d", alpha, v - w)
        if t in wanted:
            out[t] = w.copy()
    return out
