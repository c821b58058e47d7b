r"""Thesis ch. 3 (seed 001 §3.3, Alg. 4; App. B Remark A.2 and eq. (B.63)): FedStale's aggregate is unbiased for
every :math:`\beta`, and its participation variance is exact (digest 001 §2.7, §4.7, §8 V17, V18).

With frozen client updates :math:`g_i` and memory :math:`h_i` and independent :math:`\xi_i\sim{\rm Bern}(p_i)`,
:math:`\Delta = \frac\beta N\sum_ih_i + \frac1N\sum_i\frac{\xi_i}{p_i}(g_i-\beta h_i)` has
:math:`\mathbb E_\xi\Delta = \bar g = \frac1N\sum_ig_i` (Remark A.2) and, since
:math:`{\rm Var}(\xi_i/p_i) = (1-p_i)/p_i`,
:math:`\mathbb E_\xi\|\Delta-\bar g\|^2 = \frac1{N^2}\sum_i\frac{1-p_i}{p_i}\|g_i-\beta h_i\|^2` (B.63).

Both sides are checked twice on the ``fedstale`` kernel's own round: exactly, by enumerating all :math:`2^N` active
sets with their probabilities, and by Monte Carlo over Bernoulli draws of the registered participation process.
The kernel computes :math:`g_i` itself: on :math:`F_i(w) = \frac12\|w-u_i\|^2` one local step of size 1 from
:math:`w = 0` returns :math:`\Delta_i = w - w_i^{(t,1)} = -u_i`, so :math:`u_i = -g_i`; with :math:`\eta_s = 1`,
:math:`\Delta = -w^{(t+1)}`.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.checks import equal, in_interval
from theorylab.claims import Evidence, claim
from theorylab.exact.poisson_binomial import subset_probabilities, subsets
from theorylab.kernels.algorithm import Round
from theorylab.kernels.fedstale import THESIS_BETAS as BETAS, fedstale
from theorylab.registry import build
from theorylab.rng import Streams

P = np.array([0.9, 0.6, 0.3, 0.1, 0.05])
SOURCE = "seed 001 Ch. 3 Alg. 4, eqs. (3.8)-(3.9), App. B (B.3)-(B.5), Remark A.2, (B.63); digest 001 §2.7, §4.7"


def frozen_updates(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Frozen client updates g ``(N, 2)`` and memory h ``(N, 2)``, drawn once from a seeded generator."""
    rng = np.random.Generator(np.random.PCG64([seed, 17]))
    return rng.normal(size=(len(P), 2)), rng.normal(loc=0.5, size=(len(P), 2))


def kernel_aggregate(beta: float, active: torch.Tensor, g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The ``fedstale`` kernel's :math:`\\Delta` ``(R, d)`` for the active sets ``active`` ``(R, N)``, from frozen
    ``g`` and ``h`` (module docstring)."""
    problem = build("testbed", {"name": "quadratic", "hessians": np.broadcast_to(np.eye(2), (len(P), 2, 2)).tolist(),
                                "centers": (-g).tolist()})
    replicas = active.shape[0]
    algo = fedstale(beta=beta, local_steps=1, lr=1.0)
    state = algo.init(problem, torch.zeros(replicas, 2, dtype=torch.float64))
    state["h"] = torch.as_tensor(h).expand(replicas, -1, -1)
    state = algo.step(state, Round(0, active, P, Streams(0, 1)), problem)  # sigma = 0: no stream is read
    return -state["x"].numpy()


def variance_b63(beta: float, g: np.ndarray, h: np.ndarray) -> float:
    """(B.63): :math:`\\frac1{N^2}\\sum_i\\frac{1-p_i}{p_i}\\|g_i-\\beta h_i\\|^2`."""
    return float(np.sum((1 - P) / P * np.sum((g - beta * h) ** 2, axis=1)) / len(P) ** 2)


def _enumerated(beta: float, g: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, float]:
    """:math:`\\mathbb E_\\xi\\Delta` and :math:`\\mathbb E_\\xi\\|\\Delta-\\bar g\\|^2` over all :math:`2^N`
    active sets."""
    masks = subsets(len(P))
    prob = subset_probabilities(P, masks)
    delta = kernel_aggregate(beta, torch.as_tensor(masks), g, h)
    return prob @ delta, float(prob @ np.sum((delta - g.mean(0)) ** 2, axis=1))


def _sampled(ctx, g: np.ndarray, h: np.ndarray) -> dict[float, np.ndarray]:
    """Monte Carlo :math:`\\Delta` for every beta on the same Bernoulli(p) draws (common random numbers)."""
    replicas = ctx.pick(10000, 200000)
    process = build("participation", {"name": "bernoulli", "p": P.tolist()})
    streams = Streams(ctx.seed, replicas)
    _, active = process.draw(process.init(replicas, streams), 0, streams)
    return {beta: kernel_aggregate(beta, active, g, h) for beta in BETAS}


NOTE = ("N = 5 clients, p = (0.9, 0.6, 0.3, 0.1, 0.05), frozen g_i ~ N(0, I) and h_i ~ N(0.5, I) in R^2; the kernel "
        "computes g_i by one local step")


@claim("thesis.fedstale.unbiased", SOURCE,
       "For every beta in [0, 1], FedStale's aggregate is unbiased over participation: E_xi[Delta] = (1/N) sum_i g_i "
       "for any memory h (Remark A.2).", kind="statement", where="App. B, Remark A.2; §3.3.2, eqs. (3.8)-(3.9)",
       quote=r"Remark A.2. For any algorithm, $\text{Algm} \in [\text{FedAvg}, \text{FedVARP}, \text{FedStale}]$, the "
             r"global pseudo-gradient $\Delta_{\text{Algm}}^{(t)}$ is unbiased with respect to both sources of "
             r"randomness—client participation and stochastic gradients:", checks=("V17",))
def unbiased(ctx) -> Evidence:
    g, h = frozen_updates(ctx.seed)
    g_bar, samples, checks = g.mean(0), _sampled(ctx, g, h), []
    for beta in BETAS:
        exact, _ = _enumerated(beta, g, h)
        checks.append(equal(f"beta = {beta:g}: max_j |E_xi[Delta]_j - g_bar_j| (2^N active sets)",
                            float(np.abs(exact - g_bar).max()), 0.0, 1e-12, basis="closed_form",
                            note="left: the kernel's Delta averaged over all 32 active sets with their probabilities; "
                                 "right: g_bar = mean of the frozen g_i; tolerance: rounding"))
        checks += [in_interval(f"beta = {beta:g}: Monte Carlo E[Delta]_{j} = g_bar_{j}", samples[beta][:, j], g_bar[j],
                               note=f"{len(samples[beta])} Bernoulli draws of the participation process")
                   for j in range(2)]
    return Evidence(checks, notes=[NOTE])


@claim("thesis.fedstale.variance", SOURCE,
       "Conditionally on the updates and the memory, FedStale's participation variance is exactly "
       "E_xi||Delta - g_bar||^2 = (1/N^2) sum_i (1-p_i)/p_i ||g_i - beta h_i||^2 (B.63).", kind="statement",
       where="App. B, proof of Lemma A.6, eqs. (B.62)-(B.63)",
       quote=r"= \frac{1}{N^2} \sum_{i=1}^N \frac{1-p_i}{p_i} \left\| (1-\beta)\bar{\mathbf{g}}_i^{(t)} + "
             r"\beta(\bar{\mathbf{g}}_i^{(t)} - \mathbf{h}_i^{(t)}) \right\|^2 \quad (\text{B.63})", checks=("V18",))
def variance(ctx) -> Evidence:
    g, h = frozen_updates(ctx.seed)
    samples, checks = _sampled(ctx, g, h), []
    for beta in BETAS:
        theory = variance_b63(beta, g, h)
        _, exact = _enumerated(beta, g, h)
        checks += [
            equal(f"beta = {beta:g}: E_xi||Delta - g_bar||^2 over 2^N active sets vs (B.63)", exact, theory,
                  1e-12 * theory, basis="closed_form", note="the kernel's Delta on all 32 active sets; tolerance: "
                                                            "rounding"),
            in_interval(f"beta = {beta:g}: Monte Carlo E||Delta - g_bar||^2 vs (B.63)",
                        np.sum((samples[beta] - g.mean(0)) ** 2, axis=1), theory,
                        note=f"mean of squared deviations from the exact mean over {len(samples[beta])} draws"),
        ]
    return Evidence(checks, notes=[NOTE, "(B.63) at beta = 0, 0.2, 0.5, 0.8, 1: " + ", ".join(
        f"{variance_b63(b, g, h):.4g}" for b in BETAS)])
