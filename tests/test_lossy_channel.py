"""The i.i.d. packet-loss channel (seed 001 Ch. 4, A14): its law, its draws and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from theorylab.channels.bernoulli_loss import BernoulliLoss, bernoulli_loss
from theorylab.config import RunConfig
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.runner import run


def test_delivery_law_multiplies_the_two_links():
    law = BernoulliLoss([0.1, 0.5, 0.0], [0.2, 0.0, 0.9]).probabilities()
    np.testing.assert_allclose(law.received, [0.9 * 0.8, 0.5, 0.1])
    np.testing.assert_allclose(law.loss, [1 - 0.72, 0.5, 0.9])  # q_i = 1 - (1 - q_si)(1 - q_is)
    np.testing.assert_allclose(law.downlink, [0.9, 0.5, 1.0])
    np.testing.assert_allclose(law.uplink, [0.8, 1.0, 0.1])


def test_draw_frequencies_match_the_law():
    channel = build("channel", {"name": "bernoulli_loss", "downlink": [0.3, 0.0], "uplink": [0.5, 0.9]})
    replicas = 4000
    streams = Streams(3, replicas)
    _, links = channel.draw(channel.init(replicas, streams), 0, streams)
    assert links.downlink.shape == links.uplink.shape == (replicas, 2) and links.downlink.dtype == torch.bool
    law = channel.probabilities()
    for observed, p in ((links.downlink, law.downlink), (links.uplink, law.uplink),
                        (links.downlink & links.uplink, law.received)):
        freq = observed.double().mean(0).numpy()
        se = np.sqrt(p * (1 - p) / replicas) + 1e-12
        assert np.all(np.abs(freq - p) <= 5 * se)  # 5 standard errors: false alarm < 1e-6 per entry
    assert links.downlink[:, 1].all()  # q_si = 0 never loses


def test_replica_draws_do_not_depend_on_the_replica_count():
    channel = bernoulli_loss(uplink=[0.4, 0.6, 0.5])
    small, large = Streams(7, 2), Streams(7, 5)
    a = [channel.draw(None, t, small)[1].uplink for t in range(3)]
    b = [channel.draw(None, t, large)[1].uplink for t in range(3)]
    for x, y in zip(a, b):
        assert torch.equal(x, y[:2])


def test_channel_leaves_participation_and_gradient_draws_alone():
    base = RunConfig(problem={"name": "random_quadratic", "n_clients": 3, "dim": 2, "sigma": 0.5},
                     participation={"name": "bernoulli", "p": [0.9, 0.5, 0.7]},
                     algorithm={"name": "fedavg", "local_steps": 2, "lr": 0.1}, rounds=5, replicas=3, seed=4)
    plain, lossy = run(base), run(base.replace(channel={"name": "bernoulli_loss", "uplink": [0.5] * 3}))
    np.testing.assert_array_equal(plain.final["server"], lossy.final["server"])  # fedavg ignores the links


@pytest.mark.parametrize("kwargs, match", [
    ({"uplink": [0.2, 1.0]}, r"uplink\[1\] = 1 is outside the allowed range \[0, 1\)"),
    ({"downlink": [-0.1, 0.2]}, r"downlink\[0\] = -0.1 is outside"),
    ({"downlink": [0.1, 0.2], "uplink": [0.1]}, "downlink and uplink need one loss probability per client"),
    ({"uplink": [0.1, 0.2], "n_clients": 3}, "n_clients = 3 does not match"),
    ({}, "bernoulli_loss needs downlink, uplink or n_clients"),
    ({"uplink": [float("nan")]}, r"uplink\[0\]"),
    ({"n_clients": -3}, r"n_clients must be an integer in \[1, inf\]; got -3"),
])
def test_bad_loss_probabilities_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bernoulli_loss(**kwargs)


def test_n_clients_alone_gives_a_lossless_channel():
    law = bernoulli_loss(n_clients=4).probabilities()
    np.testing.assert_array_equal(law.received, np.ones(4))
