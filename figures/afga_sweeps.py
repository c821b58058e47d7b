r"""The closed-form testbed and the statistical runs behind seed 002's figures and checks V11-V19 (digest 002 §2.7,
§5).

Testbed: :math:`f_i(x) = \frac12(x-b_i)^\top A(x-b_i)` with one Hessian :math:`A` (spectrum uniform in
:math:`[0.1, 1]`), :math:`b_i\sim\mathcal N(0, I)` and stochastic gradients :math:`A(x-b_i)+\sigma u`, :math:`u`
uniform on the unit sphere (so the noise has :math:`\mathbb E\|\cdot\|^2 = \sigma^2` exactly and is bounded).
Closed forms: :math:`x^* = \bar b`, :math:`L = \lambda_{\max}(A)`, :math:`\sigma_g^2 = \frac1N\sum_i
\|A(b_i-\bar b)\|^2` independent of :math:`x`.

Score: the time-averaged squared gradient norm :math:`\frac1R\sum_{r=1}^R\|\nabla f(x_r)\|^2`, the left side of
Theorem 4.6 (eq. (3)) and Theorem D.3 (eq. (8)), one value per replica (each replica is an independent seed; runs that
share ``ctx.seed`` share their random streams, so differences between variants are paired).

Theory step sizes (§2.2, digest §0.4): :math:`\eta_l = c_l/(\mathcal I\sqrt R)`,
:math:`\eta = c_g N\sqrt{\mathcal I/M}`,
with :math:`\epsilon = 1` so that :math:`\sqrt{\hat v+\epsilon}\approx\sqrt\epsilon` as in the proof's regime.
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.config import RunConfig


def quadratic(n_clients: int, dim: int, sigma: float, seed: int = 0) -> dict:
    """The testbed spec (``random_quadratic`` with a shared Hessian, spectrum in [0.1, 1], sphere noise)."""
    return {"name": "random_quadratic", "n_clients": n_clients, "dim": dim, "seed": seed, "mu": 0.1, "L": 1.0,
            "hessians": "shared", "sigma": sigma, "noise": "sphere"}


def fedamsgrad(lr: float, eps: float) -> dict:
    """FedAMSGrad's server (seed 002 eq. (2): :math:`\\epsilon` inside the root, no bias correction, max)."""
    return {"name": "adam", "lr": lr, "beta1": 0.9, "beta2": 0.99, "eps": eps, "amsgrad": True, "eps_mode": "inside"}


N, M, DIM = 20, 4, 5
SAMPLER = {"name": "uniform_k", "n_clients": N, "k": M}
TOPOLOGIES = {"J": {"name": "complete", "n": N}, "torus": {"name": "torus", "a": 4, "b": 5},
              "ER": {"name": "erdos_renyi", "n": N, "p": 0.25, "seed": 0}, "ring": {"name": "ring", "n": N}}
PAPER_LIKE = dict(lr=0.05, server=fedamsgrad(0.003, 1e-8))  # digest §5 V14's PROTOTYPE step sizes (eps-free regime)
VARIANTS = {"FedAMSGrad": dict(resample=False, gossip=False),
            "+Gossip (ring)": dict(resample=False, topology=TOPOLOGIES["ring"]),
            "+Gossip (J)": dict(resample=False, topology=TOPOLOGIES["J"]),
            "AFGA (ring)": dict(topology=TOPOLOGIES["ring"])}


def theory_steps(steps: int, rounds: int, m: int = M, n: int = N, c_local: float = 1.0,
                 c_global: float = 0.25) -> dict:
    """The prescribed schedule of Theorem 4.6 with :math:`\\epsilon = 1`: ``lr`` and ``server`` of an ``afga`` spec."""
    return dict(lr=c_local / (steps * math.sqrt(rounds)), server=fedamsgrad(c_global * n * math.sqrt(steps / m), 1.0))


def average_gradnorm(ctx, switches: dict, *, steps: int, rounds: int, replicas: int, sampler: dict = SAMPLER,
                     problem: dict | None = None) -> np.ndarray:
    """Per-replica :math:`\\frac1R\\sum_{r<R}\\|\\nabla f(x_r)\\|^2` of ``afga`` with ``switches``, shape
    ``(replicas,)``."""
    config = RunConfig(problem=problem or quadratic(N, DIM, 1.0), participation=sampler, rounds=rounds,
                       replicas=replicas, seed=ctx.seed, every=1,
                       algorithm={"name": "afga", "local_steps": steps, **switches})
    return ctx.run(config).metrics["server.gradnorm2"][:, :-1].mean(1)


def setting(steps: int, rounds: int, replicas: int, extra: str = "") -> str:
    """The note every statistical claim carries: the testbed and what differs from the paper."""
    return (f"shared-Hessian quadratic N = {N}, d = {DIM}, b_i ~ N(0, I), sphere noise sigma = 1, M = {M} "
            f"(10-20% participation as in the paper's settings), I = {steps}, R = {rounds}, {replicas} replicas "
            f"(seeds) per variant, paired by common random numbers. {extra}".strip())


DEVIATION = ("closed-form testbed instead of the paper's CIFAR/Shakespeare CNNs (digest §0.1); N, I and R far smaller "
             "than the paper's N = 50-100, I = 24, R = 500")
