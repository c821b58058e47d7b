"""The packet-loss aggregators (seed 001 Ch. 4 (4.2), (4.4), (4.5)): hand-computed steps, the lossless
equivalence U1 bit for bit, the empty-set policies and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Links, Round
from theorylab.kernels.packet_loss import AGGREGATORS, aggregate, packet_loss
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.runner import run

ALPHA = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
LOSS = torch.tensor([0.5, 0.0, 0.75], dtype=torch.float64)
X = torch.tensor([[1.0]], dtype=torch.float64)
END = torch.tensor([[[3.0], [2.0], [-1.0]]], dtype=torch.float64)  # local models w_i^(t,K)
RECEIVED = torch.tensor([[True, False, True]])


@pytest.mark.parametrize("aggregator, expected", [
    # lossless: every client, weights alpha
    ("dma", 0.5 * 3 + 0.3 * 2 + 0.2 * -1),
    ("pga", 1 + 0.5 * 2 + 0.3 * 1 + 0.2 * -2),
    # clients 0 and 2 received: Delta = (2, -2), local models (3, -1)
    ("dma_pl", (0.5 * 3 + 0.2 * -1) / 0.7),
    ("udma_pl", 0.5 / 0.5 * 3 + 0.2 / 0.25 * -1),
    ("upga_pl", 1 + 0.5 / 0.5 * 2 + 0.2 / 0.25 * -2),
    ("pga_pl", 1 + 0.5 * 2 + 0.2 * -2),
])
def test_each_aggregator_against_a_hand_computation(aggregator, expected):
    received = torch.ones_like(RECEIVED) if aggregator in ("dma", "pga") else RECEIVED
    out = aggregate(aggregator, X, END, received, ALPHA, LOSS)
    assert out.item() == pytest.approx(expected, rel=1e-14)


def test_empty_round_policies():
    empty = torch.zeros_like(RECEIVED)
    assert aggregate("dma_pl", X, END, empty, ALPHA, LOSS).item() == 1.0  # hold (the printed 0/0)
    assert aggregate("udma_pl", X, END, empty, ALPHA, LOSS).item() == 0.0  # (4.4) as printed
    assert aggregate("udma_pl", X, END, empty, ALPHA, LOSS, empty="hold").item() == 1.0
    assert aggregate("dma_pl", X, END, empty, ALPHA, LOSS, empty="zero").item() == 0.0
    for pseudo in ("upga_pl", "pga_pl"):
        assert aggregate(pseudo, X, END, empty, ALPHA, LOSS).item() == 1.0


def test_all_aggregators_coincide_bit_for_bit_without_losses():
    base = dict(problem={"name": "random_quadratic", "n_clients": 4, "dim": 3, "seed": 5, "sigma": 0.7},
                participation={"name": "bernoulli", "p": [1.0] * 4}, rounds=15, replicas=3, seed=2, every=5)
    ref = run(RunConfig(algorithm={"name": "fedavg", "aggregation": "all", "local_steps": 3, "lr": 0.1}, **base))
    for aggregator in AGGREGATORS:
        trace = run(RunConfig(algorithm={"name": "packet_loss", "aggregator": aggregator, "loss": [0.0] * 4,
                                         "local_steps": 3, "lr": 0.1},
                              channel={"name": "bernoulli_loss", "downlink": [0.0] * 4, "uplink": [0.0] * 4}, **base))
        np.testing.assert_array_equal(trace.final["server"], ref.final["server"], err_msg=aggregator)
        for key, value in ref.metrics.items():
            np.testing.assert_array_equal(trace.metrics[key], value)


def test_kernel_reads_both_links_and_the_participation_mask():
    problem = build("testbed", {"name": "scalar_quadratic", "centers": [0.0, 4.0, 8.0]})  # alpha = 1/3
    algo = packet_loss("pga_pl", local_steps=1, lr=1.0)  # one full step: w_i = c_i
    state = algo.init(problem, torch.zeros(1, 1, dtype=torch.float64))
    yes, no = torch.tensor([[True, True, True]]), torch.tensor([[True, False, True]])
    for active, down, up in ((no, yes, yes), (yes, no, yes), (yes, yes, no)):  # client 1 missing in each way
        rnd = Round(0, active, np.ones(3), Streams(0, 1), links=Links(down, up))
        assert algo.step(state, rnd, problem)["x"].item() == pytest.approx((0.0 + 8.0) / 3)


def test_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="aggregator must be one of"):
        packet_loss("fedprox")
    with pytest.raises(ValueError, match="empty must be one of"):
        packet_loss("dma_pl", empty="skip")
    with pytest.raises(ValueError, match="empty='zero' applies to model aggregators only"):
        packet_loss("upga_pl", loss=[0.1], empty="zero")
    problem = build("testbed", {"name": "scalar_quadratic", "centers": [0.0, 1.0]})
    x0 = torch.zeros(1, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"loss\[1\] = 1 is outside the allowed range \[0, 1\)"):
        packet_loss("upga_pl", loss=[0.1, 1.0]).init(problem, x0)
    with pytest.raises(ValueError, match=r"loss must have one probability per client \(2\)"):
        packet_loss("udma_pl", loss=[0.1, 0.2, 0.3]).init(problem, x0)
    with pytest.raises(ValueError, match="needs the loss probabilities"):
        packet_loss("upga_pl").init(problem, x0)
    algo = packet_loss("dma_pl")
    rnd = Round(0, torch.ones(1, 2, dtype=torch.bool), np.ones(2), Streams(0, 1))
    with pytest.raises(ValueError, match="dma_pl needs a lossy channel"):
        algo.step(algo.init(problem, x0), rnd, problem)


def test_same_seed_same_trace_and_replica_independence():
    cfg = RunConfig(problem={"name": "random_quadratic", "n_clients": 4, "dim": 2, "sigma": 0.5},
                    participation={"name": "bernoulli", "p": [1.0] * 4},
                    algorithm={"name": "packet_loss", "aggregator": "upga_pl", "loss": [0.2, 0.5, 0.7, 0.1]},
                    channel={"name": "bernoulli_loss", "uplink": [0.2, 0.5, 0.7, 0.1]}, rounds=6, replicas=5, seed=9)
    a, b, small = run(cfg), run(cfg), run(cfg.replace(replicas=2))
    np.testing.assert_array_equal(a.final["server"], b.final["server"])
    np.testing.assert_array_equal(a.final["server"][:2], small.final["server"])
