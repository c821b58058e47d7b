r"""Thesis ch. 4 aggregators (seed 001 §4.2, (4.2), (4.4), (4.5); App. C Lemma A.1, (C.4)-(C.5)): lossless
equivalence (U1), unbiasedness (U2) and the exact conditional variance (U3) of digest 001 §6.

U2/U3 freeze the local models: on :math:`F_i(w) = \frac12\|w-u_i\|^2` one local step of size 1 returns
:math:`w_i^{(t,1)} = u_i` from any :math:`w^{(t)}`, so the ``packet_loss`` kernel's round, fed the channel's masks,
is a function of the received set alone.  Its exact law comes from enumerating all :math:`2^N` received sets with
their probabilities :math:`\prod_i(1-q_i)^{\xi_i}q_i^{1-\xi_i}`; the Monte Carlo side draws the registered
``bernoulli_loss`` channel.  Theory: :math:`\bar w^{(t,K)} = \sum_i\alpha_iu_i`;
:math:`\mathbb E\|w^+-\bar w\|^2 = \sum_i\alpha_i^2\frac{q_i}{1-q_i}\|\Delta_i\|^2` for UPGA-PL (C.5) and
:math:`\sum_i\alpha_i^2\frac{q_i}{1-q_i}\|w_i^{(t,K)}\|^2` for UDMA-PL (C.4); DMA-PL's mean uses
:math:`\bar\pi` (:func:`theorylab.exact.lossy_moments.dma_effective_weights`) plus :math:`P(\mathcal S=\emptyset)w`
(it keeps :math:`w` on an empty round), naive PGA-PL's
:math:`\alpha_i(1-q_i)`.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from theorylab.bounds.thesis_ch4 import lossy_term
from theorylab.checks import equal, in_interval, trend
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.exact.lossy_moments import dma_effective_weights
from theorylab.exact.poisson_binomial import subset_probabilities, subsets
from theorylab.kernels.algorithm import Links, Round
from theorylab.kernels.packet_loss import AGGREGATORS, packet_loss
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.threads import one_thread
from theorylab.validations.thesis.packet_loss.setting import NAMES, SOURCE

LOSS = np.array([0.05, 0.2, 0.5, 0.7, 0.9, 0.3])
ALPHA = np.array([3.0, 1.0, 2.0, 1.0, 2.0, 1.0]) / 10.0
W0 = np.array([0.5, -1.0])
NOTE = ("N = 6 clients, q = (0.05, 0.2, 0.5, 0.7, 0.9, 0.3) on the uplink, alpha = (3, 1, 2, 1, 2, 1)/10, frozen "
        "local models u_i ~ N((1, -1), I) in R^2, server model w = (0.5, -1); the kernel computes w_i = u_i by one "
        "local step")


def frozen_models(seed: int) -> np.ndarray:
    return np.random.Generator(np.random.PCG64([seed, 41])).normal(loc=(1.0, -1.0), size=(len(LOSS), 2))


def kernel_round(aggregator: str, uplink: torch.Tensor, u: np.ndarray) -> np.ndarray:
    """The ``packet_loss`` kernel's :math:`w^+` ``(R, 2)`` for the uplink masks ``uplink`` ``(R, N)``."""
    problem = build("testbed", {"name": "quadratic", "hessians": np.broadcast_to(np.eye(2), (len(LOSS), 2, 2)).tolist(),
                                "centers": u.tolist(), "weights": ALPHA.tolist()})
    algo = packet_loss(aggregator, LOSS.tolist(), local_steps=1, lr=1.0)
    replicas = uplink.shape[0]
    state = algo.init(problem, torch.as_tensor(W0).expand(replicas, -1).clone())
    ones = torch.ones_like(uplink)
    rnd = Round(0, ones, np.ones(len(LOSS)), Streams(0, 1), links=Links(ones, uplink))  # sigma = 0: no stream read
    return algo.step(state, rnd, problem)["x"].numpy()


def enumerated(aggregator: str, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(probabilities, w^+)`` over all :math:`2^N` received sets."""
    masks = subsets(len(LOSS))
    return subset_probabilities(1.0 - LOSS, masks), kernel_round(aggregator, torch.as_tensor(masks), u)


@functools.lru_cache(maxsize=2)
def channel_draws(seed: int, replicas: int) -> torch.Tensor:
    """One round's uplink masks ``(replicas, N)`` from the registered ``bernoulli_loss`` channel (shared by U2, U3)."""
    channel = build("channel", {"name": "bernoulli_loss", "uplink": LOSS.tolist()})
    streams = Streams(seed, replicas)
    return channel.draw(channel.init(replicas, streams), 0, streams)[1].uplink


def sampled(ctx, u: np.ndarray) -> dict[str, np.ndarray]:
    """Monte Carlo :math:`w^+` of every aggregator on the same channel draws (common random numbers)."""
    uplink = channel_draws(ctx.seed, ctx.pick(10000, 200000))
    return {a: kernel_round(a, uplink, u) for a in ("upga_pl", "udma_pl", "dma_pl", "pga_pl")}


@claim("thesis.ch4.lossless_equivalence", SOURCE + " U1",
       "With no losses (q = 0) FedAvg, DMA, PGA, DMA-PL, UDMA-PL and UPGA-PL produce identical iterates.",
       kind="statement", where="§4.2, Options 1-2 and (4.2), (4.4), (4.5) at q = 0",
       quote="The DMA and PGA aggregation schemes are equivalent under lossless channels.", checks=("U1",))
@one_thread
def lossless_equivalence(ctx) -> Evidence:
    base = dict(problem={"name": "random_quadratic", "n_clients": 4, "dim": 3, "seed": 2, "sigma": 0.5},
                participation={"name": "bernoulli", "p": [1.0] * 4}, rounds=ctx.pick(20, 200), replicas=8,
                seed=ctx.seed, every=5)
    ref = ctx.run(RunConfig(algorithm={"name": "fedavg", "aggregation": "all", "local_steps": 3, "lr": 0.1},
                            **base)).final["server"]
    checks = []
    for aggregator in AGGREGATORS:
        trace = ctx.run(RunConfig(algorithm={"name": "packet_loss", "aggregator": aggregator, "loss": [0.0] * 4,
                                             "local_steps": 3, "lr": 0.1},
                                  channel={"name": "bernoulli_loss", "uplink": [0.0] * 4}, **base))
        checks.append(equal(f"{NAMES[aggregator]}: max |w^T - w^T_FedAvg| (bit for bit)",
                            float(np.abs(trace.final["server"] - ref).max()), 0.0, 0.0, basis="independent",
                            note="right: the separate fedavg kernel (aggregation 'all', alpha = 1/4, so the weights "
                                 "are dyadic and sum to 1 exactly); same seed, so same gradient noise"))
    return Evidence(checks, notes=["random 3-D quadratic, 4 clients, K = 3, eta = 0.1, sigma = 0.5, 8 replicas, "
                                   "channel with q = 0"])


@claim("thesis.ch4.unbiased", SOURCE + " U2",
       "Over the losses, with the local models fixed, UPGA-PL and UDMA-PL are unbiased (E[w^+] = sum_i alpha_i w_i); "
       "DMA-PL has weights pi_bar and naive PGA-PL weights alpha_i (1 - q_i), both biased.", kind="statement",
       where="§4.2 before (4.4); §4.3 after (4.5)",
       quote="This observation suggests to unbiased the DMA-PL scheme in (4.2) as follows … As UDMA-PL, UPGA-PL is "
             "unbiased because it aggregates the pseudo-gradients with weights that compensate for clients' different "
             "loss probabilities.", checks=("U2",))
@one_thread
def unbiased(ctx) -> Evidence:
    u = frozen_models(ctx.seed)
    w_bar, pi_bar = ALPHA @ u, dma_effective_weights(ALPHA, 1.0 - LOSS)
    target = {"upga_pl": w_bar, "udma_pl": w_bar, "dma_pl": pi_bar @ u + np.prod(LOSS) * W0,
              "pga_pl": W0 + (ALPHA * (1.0 - LOSS)) @ (u - W0)}
    basis = {"upga_pl": "closed_form", "udma_pl": "closed_form", "dma_pl": "enumeration", "pga_pl": "closed_form"}
    samples, checks = sampled(ctx, u), []
    for aggregator, theory in target.items():
        prob, w_next = enumerated(aggregator, u)
        checks.append(equal(f"{NAMES[aggregator]}: max_j |E[w^+]_j - theory_j| over 2^6 received sets",
                            float(np.abs(prob @ w_next - theory).max()), 0.0, 1e-12, basis=basis[aggregator],
                            note="theory: " + {"upga_pl": "sum alpha_i u_i", "udma_pl": "sum alpha_i u_i",
                                               "dma_pl": "sum pi_bar_i u_i + P(S empty) w (the hold policy), "
                                                         "pi_bar by direct enumeration of "
                                                         "E[xi_i alpha_i / sum_j xi_j alpha_j]",
                                               "pga_pl": "w + sum alpha_i (1 - q_i)(u_i - w)"}[aggregator]))
        checks += [in_interval(f"{NAMES[aggregator]}: Monte Carlo E[w^+]_{j}", samples[aggregator][:, j], theory[j],
                               note=f"{len(samples[aggregator])} draws of the bernoulli_loss channel")
                   for j in range(2)]
    for aggregator in ("dma_pl", "pga_pl"):
        gap = float(np.linalg.norm(target[aggregator] - w_bar))
        checks.append(trend(f"{NAMES[aggregator]} is biased: ||E[w^+] - sum alpha_i u_i||", gap, gap > 1e-3, "> 0",
                            0.0, basis="closed_form"))
    return Evidence(checks, notes=[NOTE, "pi_bar = " + np.array2string(pi_bar, precision=4)
                                   + " vs alpha = " + np.array2string(ALPHA, precision=4),
                                   "naive PGA-PL is the digest's ablation (§2.2), not an algorithm of the thesis"])


@claim("thesis.ch4.lemma_a1", SOURCE + " U3",
       "Conditionally on the local models, E||w^+ - w_bar||^2 = sum_i alpha_i^2 q_i/(1-q_i) ||Delta_i||^2 for "
       "UPGA-PL (C.5) and = sum_i alpha_i^2 q_i/(1-q_i) ||w_i^(t,K)||^2 for UDMA-PL (C.4).", kind="statement",
       where="App. C, Lemma A.1, eqs. (C.4)-(C.5)",
       quote=r"= \sum_{i \in \mathcal{N}} \alpha_i^2 \frac{q_i}{1 - q_i} \left\| \mathbf{w}_i^{(t,K)} \right\|^2. "
             r"\quad (\text{C.4}) … = \sum_{i \in \mathcal{N}} \alpha_i^2 \frac{q_i}{1 - q_i} "
             r"\|\mathbf{w}_i^{(t,K)} - \mathbf{w}^{(t)}\|^2. \tag{C.5}", checks=("U3",))
@one_thread
def lemma_a1(ctx) -> Evidence:
    u = frozen_models(ctx.seed)
    w_bar, factor = ALPHA @ u, ALPHA ** 2 * LOSS / (1.0 - LOSS)
    theory = {"upga_pl": float(factor @ np.sum((u - W0) ** 2, 1)), "udma_pl": float(factor @ np.sum(u ** 2, 1))}
    samples, checks = sampled(ctx, u), []
    for aggregator, value in theory.items():
        prob, w_next = enumerated(aggregator, u)
        exact = float(prob @ np.sum((w_next - w_bar) ** 2, 1))
        eq = "(C.5) with Delta_i = u_i - w" if aggregator == "upga_pl" else "(C.4) with w_i^(t,K) = u_i"
        checks += [equal(f"{NAMES[aggregator]}: E||w^+ - w_bar||^2 over 2^6 received sets vs {eq}", exact, value,
                         1e-12 * value, basis="closed_form", note="tolerance: rounding"),
                   in_interval(f"{NAMES[aggregator]}: Monte Carlo E||w^+ - w_bar||^2 vs {eq}",
                               np.sum((samples[aggregator] - w_bar) ** 2, 1), value,
                               note=f"{len(samples[aggregator])} channel draws")]
    return Evidence(checks, notes=[NOTE, f"sum alpha_i^2 q_i/(1-q_i) = {lossy_term(ALPHA, LOSS):.4g}; UDMA-PL's "
                                         "variance scales with ||w_i|| (model norm), UPGA-PL's with ||Delta_i||"])
