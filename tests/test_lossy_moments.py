"""Exact moments of the packet-loss aggregators: the virtual-client weight moments against enumeration through the
kernel, closed forms, the FedAvg engine, Monte Carlo, DMA-PL's effective weights and the a-posteriori G^2."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from theorylab.checks import bonferroni_z
from theorylab.config import RunConfig
from theorylab.exact.fedavg_moments import fedavg_moments, weight_moments
from theorylab.exact.lossy_moments import (aggregator_moments, dma_effective_weights, local_gradient_second_moments,
                                           lossy_moments)
from theorylab.exact.poisson_binomial import subset_probabilities, subsets
from theorylab.kernels.packet_loss import AGGREGATORS, aggregate
from theorylab.kernels.schedules import make_schedule
from theorylab.registry import build
from theorylab.runner import run

ALPHA = np.array([0.4, 0.1, 0.3, 0.2])
LOSS = np.array([0.1, 0.5, 0.8, 0.3])


def enumerated_weights(aggregator: str, empty: str | None, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(1 - c, omega) read off the kernel's aggregate() on every received set: with m one-hot local models e_i and
    x = 0 plus one extra coordinate holding x = 1, w^+ = (c, omega)."""
    m = len(ALPHA)
    masks = torch.as_tensor(subsets(m))
    x = torch.zeros(len(masks), m + 1, dtype=torch.float64)
    x[:, 0] = 1.0
    end = x.unsqueeze(1).expand(-1, m, -1).clone()
    end[:, :, 1:] += torch.eye(m, dtype=torch.float64)  # w_i = x + e_i, so Delta_i = e_i
    out = aggregate(aggregator, x, end, masks, torch.as_tensor(ALPHA), torch.as_tensor(LOSS), empty).numpy()
    weights = np.concatenate([1.0 - out[:, :1], out[:, 1:]], axis=1)
    prob = subset_probabilities(pi, masks.numpy())
    return prob @ weights, (weights * prob[:, None]).T @ weights


@pytest.mark.parametrize("aggregator, empty", [(a, e) for a, (_, model, _) in AGGREGATORS.items()
                                               for e in (None, "hold", "zero") if model or e != "zero"])
def test_virtual_client_moments_match_enumeration_through_the_kernel(aggregator, empty):
    pi = 1.0 - LOSS  # the formulas hold for any independent received law (for dma/pga: partial participation)
    mean, second = aggregator_moments(aggregator, ALPHA, LOSS, pi, empty)
    ref_mean, ref_second = enumerated_weights(aggregator, empty, pi)
    np.testing.assert_allclose(mean, ref_mean, atol=1e-14)
    np.testing.assert_allclose(second, ref_second, atol=1e-14)


def test_upga_weights_closed_form():
    mean, second = aggregator_moments("upga_pl", ALPHA, LOSS, 1.0 - LOSS)
    assert mean[0] == 0.0 and np.all(second[0] == 0.0)
    np.testing.assert_allclose(mean[1:], ALPHA, rtol=1e-14)  # E r_i = alpha_i
    np.testing.assert_allclose(second[1:, 1:], np.outer(ALPHA, ALPHA) + np.diag(ALPHA ** 2 * LOSS / (1 - LOSS)),
                               rtol=1e-14)


def test_dma_effective_weights_digest_example_and_quadrature():
    pi = np.array([0.9] * 5 + [0.1] * 5)
    pi_bar = dma_effective_weights(np.full(10, 0.1), pi)
    np.testing.assert_allclose(pi_bar[:5], 0.18261, atol=5e-6)  # digest §2.6
    np.testing.assert_allclose(pi_bar[5:], 0.01739, atol=5e-6)
    np.testing.assert_allclose(pi_bar, weight_moments("active", np.full(10, 0.1), pi)[0], atol=1e-13)  # quadrature


def _scalar_config(aggregator: str, **kw) -> RunConfig:
    q = [0.1, 0.1, 0.6, 0.9]
    base = dict(problem={"name": "scalar_quadratic", "centers": [1.0, 0.0, 3.0, 2.0],
                         "curvatures": [1.0, 0.5, 2.0, 1.5], "weights": [0.4, 0.1, 0.3, 0.2], "sigma": 0.8},
                participation={"name": "bernoulli", "p": [1.0, 0.8, 1.0, 1.0]},
                algorithm={"name": "packet_loss", "aggregator": aggregator, "loss": q, "local_steps": 3, "lr": 0.1},
                channel={"name": "bernoulli_loss", "uplink": q}, rounds=12, replicas=1500, seed=1, every=12)
    return RunConfig(**{**base, **kw})


def test_exact_moments_against_monte_carlo():
    comparisons = []
    for aggregator in ("upga_pl", "dma_pl", "pga_pl", "udma_pl"):
        cfg = _scalar_config(aggregator)
        exact = lossy_moments(cfg)
        x = run(cfg).final["server"][:, 0]
        for sample, value in ((x, exact.mean[-1, 0]), (x * x, exact.second[-1, 0, 0])):
            comparisons.append(abs(sample.mean() - value) / (sample.std(ddof=1) / np.sqrt(len(sample))))
    assert max(comparisons) <= bonferroni_z(len(comparisons))  # 99.9% family-wise


@pytest.mark.parametrize("aggregator, p", [("pga", [1.0, 0.8, 1.0, 0.5]), ("dma", [1.0] * 4)])
def test_lossless_aggregators_equal_the_fedavg_engine(aggregator, p):
    """PGA is FedAvg's pseudo-gradient step with weights alpha over the participants; DMA equals it under full
    participation (with partial participation its unnormalised model average shrinks w)."""
    cfg = _scalar_config(aggregator, rounds=20, every=5, participation={"name": "bernoulli", "p": p})
    mine = lossy_moments(cfg)
    ref = fedavg_moments(cfg.replace(algorithm={"name": "fedavg", "aggregation": "all", "local_steps": 3, "lr": 0.1}))
    np.testing.assert_allclose(mine.mean, ref.mean, atol=1e-12)
    np.testing.assert_allclose(mine.second, ref.second, atol=1e-12)


def test_a_posteriori_g2_on_a_deterministic_run():
    cfg = RunConfig(problem={"name": "scalar_quadratic", "centers": [1.0, 3.0], "curvatures": [1.0, 2.0]},
                    participation={"name": "bernoulli", "p": [1.0, 1.0]},
                    algorithm={"name": "packet_loss", "aggregator": "pga", "local_steps": 2, "lr": 0.2},
                    rounds=3, every=1)
    quad = build("testbed", cfg.problem)
    g2 = local_gradient_second_moments(quad, lossy_moments(cfg), make_schedule(0.2), 2)
    w, a, c, expected = 0.0, np.array([1.0, 2.0]), np.array([1.0, 3.0]), []
    for _ in range(3):  # deterministic: local iterates by hand
        first = w - 0.2 * a * (w - c)
        expected.append(np.stack([(a * (w - c)) ** 2, (a * (first - c)) ** 2], axis=1))
        w = w + 0.5 * np.sum(first - 0.2 * a * (first - c) - w)
    np.testing.assert_allclose(g2, np.asarray(expected), rtol=1e-12)


def test_engine_refusals():
    with pytest.raises(ValueError, match="covers the 'packet_loss' kernel"):
        lossy_moments(_scalar_config("upga_pl", algorithm={"name": "fedavg"}))
    with pytest.raises(ValueError, match="needs a channel"):
        lossy_moments(_scalar_config("upga_pl", channel=None))
    cfg = _scalar_config("upga_pl", every=4)
    with pytest.raises(ValueError, match="every round"):
        local_gradient_second_moments(build("testbed", cfg.problem), lossy_moments(cfg), make_schedule(0.1), 3)
