r"""Exact moments of the packet-loss aggregators (DMA-PL, UDMA-PL, UPGA-PL, PGA-PL, DMA, PGA) on quadratics.

Seed 001 Ch. 4 (4.2), (4.4), (4.5); digest 001 §2.6 "[DERIVED] exact mean dynamics / second moments".  The kernel
(:mod:`theorylab.kernels.packet_loss`) sets :math:`w^+ = c\,w + \sum_i\omega_i\Delta_i` with random
:math:`(c,\omega)` that depend only on the received set.  Add a *virtual client* 0 whose update is
:math:`\Delta_0 = -w` (local map :math:`C_0 = I`, no centre, no noise) with weight :math:`\omega_0 = 1-c`: then
:math:`w^+ = w + \sum_{i\ge0}\omega_i\Delta_i`, exactly the FedAvg-family step with :math:`\eta_g = 1`, and
:func:`theorylab.exact.fedavg_moments.moment_step` propagates :math:`\mathbb E w` and :math:`\mathbb Eww^\top`
given the augmented moments :math:`\mathbb E\omega`, :math:`\mathbb E\omega\omega^\top`.

The client weights' moments come from :func:`theorylab.exact.fedavg_moments.weight_moments` under Bernoulli
:math:`\pi_i = p_i(1-q_{si})(1-q_{is})` (participation times delivery).  For a pseudo-gradient aggregator
:math:`\omega_0 = 0`.  For a model aggregator :math:`c = \sum_i\omega_i` on non-empty rounds, and on empty ones
:math:`c = 1` (policy ``hold``, :math:`h = 1`) or :math:`c = 0` (``zero``, :math:`h = 0`); since every
:math:`\omega_i` vanishes on an empty round, with :math:`\bar\omega=\mathbb E\omega`, :math:`\Omega=\mathbb E
\omega\omega^\top` and :math:`P_\emptyset = \prod_i(1-\pi_i)`:

.. math::
    \mathbb E\omega_0 = 1-\textstyle\sum_i\bar\omega_i - hP_\emptyset,\qquad
    \mathbb E\omega_0\omega_j = \bar\omega_j - (\Omega\mathbf 1)_j,\qquad
    \mathbb E\omega_0^2 = 1 - 2\textstyle\sum_i\bar\omega_i + \mathbf 1^\top\Omega\mathbf 1 - hP_\emptyset .

For UPGA-PL, :math:`r_i = \xi_i\alpha_i/(1-q_i)` has :math:`\mathbb Er_i = \alpha_i` and
:math:`\mathbb E r_ir_j = \alpha_i\alpha_j + \delta_{ij}\alpha_i^2q_i/(1-q_i)` (digest §2.6), so its mean map is
lossless FedAvg's.  DMA-PL's mean weights are :math:`\bar\pi_i = \mathbb E[\xi_i\alpha_i/\sum_{j}\xi_j\alpha_j]`
(:func:`dma_effective_weights`, by enumeration of the :math:`2^N` received sets), so with a diminishing step it
tends to :math:`w^*_{DMA} = \arg\min\sum_i\bar\pi_iF_i \ne w^*`.
"""

from __future__ import annotations

import functools

import numpy as np

from theorylab.config import RunConfig
from theorylab.exact.fedavg_moments import Moments, local_maps, moment_step, weight_moments
from theorylab.exact.models import QuadraticModel, require
from theorylab.exact.poisson_binomial import subset_probabilities, subsets
from theorylab.kernels.packet_loss import check_aggregator, check_loss
from theorylab.kernels.schedules import make_schedule
from theorylab.registry import build

WEIGHT_KIND = {"lossless": "all", "plain": "all", "unbiased": "all", "normalised": "active"}


def aggregator_moments(aggregator: str, alpha, loss, pi, empty: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:math:`(\\mathbb E\\omega, \\mathbb E\\omega\\omega^\\top)` of the virtual client (index 0) and the clients,
    shapes ``(m+1,)`` and ``(m+1, m+1)``, when client ``i`` is received with probability ``pi[i]``."""
    kind, model, policy = check_aggregator(aggregator, empty)
    alpha, pi = np.asarray(alpha, dtype=np.float64), np.asarray(pi, dtype=np.float64)
    scale = alpha / (1.0 - check_loss(loss, len(alpha))) if kind == "unbiased" else alpha
    w, Om = weight_moments(WEIGHT_KIND[kind], scale, pi)
    w0, w0_w, w0_sq = 0.0, np.zeros_like(w), 0.0
    if model:
        hold = float(np.prod(1.0 - pi)) if policy == "hold" else 0.0
        w0, w0_w, w0_sq = 1.0 - w.sum() - hold, w - Om.sum(1), 1.0 - 2.0 * w.sum() + Om.sum() - hold
    mean = np.concatenate([[w0], w])
    second = np.block([[np.array([[w0_sq]]), w0_w[None, :]], [w0_w[:, None], Om]])
    return mean, second


def received_probabilities(config: RunConfig, t: int, process, channel) -> np.ndarray:
    """:math:`\\pi_i^t = p_i^t(1-q_{si})(1-q_{is})` (participation only for the lossless ``dma``/``pga``)."""
    p = np.asarray(process.probabilities(t), dtype=np.float64)
    kind, _, _ = check_aggregator(config.algorithm.get("aggregator", "upga_pl"), config.algorithm.get("empty"))
    if kind == "lossless":
        return p
    if channel is None:
        raise ValueError(f"{config.algorithm.get('aggregator')} needs a channel in the config")
    return p * channel.probabilities().received


def lossy_moments(config: RunConfig) -> Moments:
    """Propagate :math:`\\mathbb E w^t` and :math:`\\mathbb E w^tw^{t\\top}` exactly for a ``packet_loss`` run."""
    spec = config.algorithm
    if spec.get("name") != "packet_loss":
        raise ValueError(f"lossy_moments covers the 'packet_loss' kernel; got algorithm {spec.get('name')!r}")
    problem = build("testbed", config.problem)
    process = build("participation", config.participation)
    channel = None if config.channel is None else build("channel", config.channel)
    if channel is not None and getattr(channel, "memoryless", True) is False:
        raise ValueError(f"exact moments need losses independent over rounds; the {config.channel.get('name')!r} "
                         "channel's losses are correlated (use Monte Carlo replicas)")
    require(problem, QuadraticModel, "exact moments")
    if not getattr(process, "memoryless", False):
        raise ValueError(f"exact moments need memoryless participation; {type(process).__name__} is not")
    aggregator, empty = spec.get("aggregator", "upga_pl"), spec.get("empty")
    steps, schedule, d = int(spec.get("local_steps", 5)), make_schedule(spec.get("lr", 0.05)), problem.dim

    @functools.lru_cache(maxsize=256)
    def weights(key: bytes):
        return aggregator_moments(aggregator, problem.alpha, spec.get("loss"), np.frombuffer(key), empty)

    @functools.lru_cache(maxsize=256)
    def maps(lr: float):
        C, Sig = local_maps(problem, lr, steps)
        C, Sig = np.concatenate([np.eye(d)[None], C]), np.concatenate([np.zeros((1, d, d)), Sig])
        return C, Sig, np.einsum("mij,mj->mi", C, np.concatenate([np.zeros((1, d)), problem.u]))

    mu = problem.x_init.copy()
    S = np.outer(mu, mu)
    rounds, means, seconds = [0], [mu.copy()], [S.copy()]
    for t in range(config.rounds):
        w, Om = weights(np.ascontiguousarray(received_probabilities(config, t, process, channel)).tobytes())
        mu, S = moment_step(mu, S, *maps(schedule(t)), w, Om, 1.0)
        if (t + 1) % config.every == 0 or t + 1 == config.rounds:
            rounds.append(t + 1)
            means.append(mu.copy())
            seconds.append(S.copy())
    return Moments(np.asarray(rounds), np.asarray(means), np.asarray(seconds))


def dma_effective_weights(alpha, pi) -> np.ndarray:
    r""":math:`\bar\pi_i = \mathbb E[\xi_i\alpha_i/\sum_j\xi_j\alpha_j]` (0 on the empty set) by enumerating all
    :math:`2^N` received sets with :func:`~theorylab.exact.poisson_binomial.subsets` (:math:`N\le20`)."""
    alpha, pi = np.asarray(alpha, dtype=np.float64), np.asarray(pi, dtype=np.float64)
    masks = subsets(len(alpha))
    share = masks * alpha
    total = share.sum(1, keepdims=True)
    return subset_probabilities(pi, masks) @ (share / np.where(total > 0, total, 1.0))


def local_gradient_second_moments(problem: QuadraticModel, moments: Moments, schedule, steps: int) -> np.ndarray:
    r""":math:`\mathbb E\|\nabla F_i(w_i^{(t,k)})\|^2 + \sigma^2` for every recorded round ``t`` (which must be every
    round), client ``i`` and local step ``k < K``, shape ``(n, m, K)``: the a-posteriori :math:`G^2` of A13 is its
    maximum (digest §2.6).  With :math:`A_i = V\Lambda V^\top`, :math:`P = I-\eta A_i` and
    :math:`M = \mathbb E(w-u_i)(w-u_i)^\top` in the eigenbasis,
    :math:`\mathbb E\|A_i(w_i^{(t,k)}-u_i)\|^2 = \sum_j\lambda_j^2(1-\eta\lambda_j)^{2k}M_{jj}
    + \eta^2\frac{\sigma^2}d\sum_j\lambda_j^2\sum_{l<k}(1-\eta\lambda_j)^{2l}`."""
    if not np.array_equal(moments.rounds, np.arange(len(moments.rounds))):
        raise ValueError("local_gradient_second_moments needs the moments of every round (config.every = 1)")
    lam, vec = np.linalg.eigh(problem.A)  # (m, d), (m, d, d)
    out = []
    for t, (mu, S) in enumerate(zip(moments.mean[:-1], moments.second[:-1])):
        eta = schedule(t)
        M = S[None] - np.einsum("i,mj->mij", mu, problem.u) - np.einsum("mi,j->mij", problem.u, mu)
        M = M + np.einsum("mi,mj->mij", problem.u, problem.u)
        diag = np.einsum("mji,mjk,mki->mi", vec, M, vec)  # (m, d): eigen-diagonal of E(w-u)(w-u)^T
        shrink = (1.0 - eta * lam)[:, None, :] ** (2 * np.arange(steps))[None, :, None]  # (m, K, d)
        noise = np.cumsum(np.concatenate([np.zeros_like(shrink[:, :1]), shrink[:, :-1]], 1), 1)
        value = (lam[:, None, :] ** 2 * (shrink * diag[:, None, :] + eta ** 2 * problem.sigma2 / problem.dim * noise))
        out.append(value.sum(-1) + problem.sigma2)
    return np.asarray(out)
