r"""An independent numpy replay of AFGA/CAFGA on a quadratic testbed, written from seed 002 Alg. 1 and 2 line by line.

Digest 002 §1.3 (matrix form), §1.4, §1.2.  For every replica and round it draws the same random numbers as the
``afga`` kernel (the reporting set from the participation process, then :math:`\mathcal S_{r,t}` from the
``participation`` stream, then the reporting clients' local noise from the ``gradient`` stream and the others' from
the ``idle`` stream) on its own twin :class:`~theorylab.rng.Streams`, and runs, one client row at a time,

.. math::
    x^i_{r,t'} = x^i_{r,t} - \eta_l\,\mathbb 1\{i\in\mathcal S_{r,t}\}\,\big(A_i(x^i_{r,t}-u_i)+\xi^i_{r,t}\big),\qquad
    x^i_{r,t+1} = \sum_j W_{ij}\,x^j_{r,t'},

then :math:`\Delta_r = \frac1M\sum_{i\in\mathcal S_r}(x^i_{r,\mathcal I}-x_r)` and FedAMSGrad's eq. (2).  Beside the
rows it accumulates the right side of V3, :math:`-\frac{\eta_l}{N}\sum_t\sum_{i\in\mathcal S_{r,t}}g^i_{r,t}`, which
equals :math:`\bar\Delta_r` when :math:`W` is doubly stochastic (digest §1.3 consequence (a)).
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.kernels import client_work
from theorylab.registry import build
from theorylab.rng import Streams


def _noise(problem, streams: Streams, active: np.ndarray, steps: int) -> np.ndarray | None:
    """``(steps, replicas, N, d)`` gradient noise (Gaussian or on the sphere) in the layout of
    :mod:`theorylab.kernels.client_work`, placed here by hand: on a problem of at least ``ROWS_MIN`` clients x
    dimensions with someone idle, each replica's reporting clients from its ``gradient`` stream as one ``(steps, k,
    d)`` block in client order and the others from its ``idle`` stream; otherwise the dense draw."""
    if problem.sigma == 0.0:
        return None
    R, N = active.shape
    if N * problem.dim < client_work.ROWS_MIN or active.all():  # the dense draw: (steps, N, d) per replica
        return np.stack([z.numpy() for z in problem.sample(streams, steps)])
    out = np.zeros((steps, R, N, problem.dim))
    for purpose, mask in (("gradient", active), ("idle", ~active)):
        block = streams.normal_rows(purpose, torch.as_tensor(mask.sum(1)), (steps,), (problem.dim,)).numpy()
        if problem.noise == "gaussian":  # N(0, sigma^2/d I), scaled in float32 as the testbed does
            block = block * np.float32(problem.sigma / np.sqrt(problem.dim))
        else:  # uniform on the sphere of radius sigma
            block = block.astype(np.float64)
            block = problem.sigma * block / np.linalg.norm(block, axis=-1, keepdims=True)
        rows = np.argwhere(mask)  # replica-major, clients in order
        out[:, rows[:, 0], rows[:, 1]] = block
    return out


def replay(problem_spec: dict, participation: dict, W, local_steps: int, lr: float, rounds: int, seed: int,
           replicas: int, clusters: int = 1, resample: bool = True, server: dict | None = None) -> dict:
    """Arrays ``(replicas, rounds, ...)``: ``x`` (the model after each round), ``delta``, ``delta_bar``,
    ``v3_rhs`` (:math:`-\\frac{\\eta_l}N\\sum g`), ``rows`` (:math:`X_{r,\\mathcal I}`, ``(replicas, rounds, N,
    d)``), ``consensus`` (:math:`\\frac1N\\|X-\\mathbf 1\\bar x^\\top\\|_F^2` after
    the last step, one cluster)."""
    server = server or {"lr": 0.01, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8}
    problem = build("testbed", problem_spec)
    process = build("participation", participation)
    N, d, K = problem.n_clients, problem.dim, clusters
    n = N // K
    streams = Streams(seed, replicas)
    W = np.eye(N) if W is None else np.asarray(W, dtype=np.float64)
    x = np.tile(problem.x_init, (replicas, 1))
    m1, v, vhat = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    out = {key: np.zeros((replicas, rounds, d)) for key in ("x", "delta", "delta_bar", "v3_rhs")}
    out["consensus"] = np.zeros((replicas, rounds))
    out["rows"] = np.zeros((replicas, rounds, N, d))
    state = process.init(replicas, streams)
    for r in range(rounds):
        state, active = process.draw(state, r, streams)
        active = active.numpy()
        per_cluster = int(active[0, :n].sum())
        u = streams.uniform("participation", (local_steps, N)).numpy() if resample else None
        noise = _noise(problem, streams, active, local_steps)
        for rep in range(replicas):
            X = np.tile(x[rep], (N, 1))
            total = np.zeros(d)
            for t in range(local_steps):
                if resample:
                    chosen = [k * n + j for k in range(K)
                              for j in np.argsort(u[rep, t, k * n:(k + 1) * n])[:per_cluster]]
                else:
                    chosen = list(np.flatnonzero(active[rep]))
                Y = X.copy()
                for i in chosen:
                    g = problem.A[i] @ (X[i] - problem.u[i]) + (0.0 if noise is None else noise[t, rep, i])
                    Y[i] = X[i] - lr * g
                    total += g
                X = W @ Y
            reporting = np.flatnonzero(active[rep])
            out["delta"][rep, r] = (X[reporting] - x[rep]).mean(0)
            out["delta_bar"][rep, r] = X.mean(0) - x[rep]
            out["v3_rhs"][rep, r] = -lr * total / N
            out["consensus"][rep, r] = np.sum((X - X.mean(0)) ** 2) / N
            out["rows"][rep, r] = X
        delta = out["delta"][:, r]
        m1 = server["beta1"] * m1 + (1 - server["beta1"]) * delta
        v = server["beta2"] * v + (1 - server["beta2"]) * delta ** 2
        vhat = np.maximum(vhat, v)
        x = x + server["lr"] * m1 / np.sqrt(vhat + server["eps"])
        out["x"][:, r] = x
    return out
