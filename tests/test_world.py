"""The round contract's optional world models (lossy channel, asynchronous clock) as the runner wires them.

A channel that delivers everything and a clock whose every available client arrives fresh at each step must leave a
synchronous kernel's trace bit-identical (the kernels never read the new fields), and the world's metrics are recorded.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from theorylab import runner
from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Arrivals, Links, Round

BASE = RunConfig(problem={"name": "random_quadratic", "n_clients": 4, "dim": 3, "seed": 1, "sigma": 0.5},
                 participation={"name": "bernoulli", "p": [0.9, 0.5, 0.3, 0.7]},
                 algorithm={"name": "fedavg", "local_steps": 2, "lr": 0.1}, rounds=6, replicas=3, seed=5, every=2)


class PerfectChannel:
    n_clients = 4

    def init(self, replicas, streams):
        return None

    def draw(self, state, t, streams):
        u = streams.uniform("channel", (self.n_clients,))  # consumes its own stream only
        ones = torch.ones_like(u, dtype=torch.bool)
        return state, Links(ones, ones)


class InstantClock:
    n_clients = 4

    def init(self, replicas, streams):
        return torch.zeros(replicas, dtype=torch.float64)

    def draw(self, time, t, streams, available):
        time = time + 1.0
        zeros = torch.zeros(available.shape, dtype=torch.int64)
        return time, Arrivals(available, zeros, torch.ones_like(available), time)

    def metrics(self, time):
        return {"time": time}


@pytest.fixture
def toy_world(monkeypatch):
    seen = []
    real = runner.build

    def build(kind, spec, **context):
        if kind in ("channel", "clock"):
            return {"channel": PerfectChannel, "clock": InstantClock}[kind]()
        return real(kind, spec, **context)

    monkeypatch.setattr(runner, "build", build)
    return seen


def test_none_fields_stay_out_of_the_config_dict():
    assert "channel" not in BASE.as_dict() and "clock" not in BASE.as_dict()
    assert RunConfig(**BASE.as_dict()).key() == BASE.key()
    assert BASE.replace(channel={"name": "x"}).key() != BASE.key()


def test_round_defaults_leave_links_and_arrivals_empty():
    rnd = Round(0, torch.ones(1, 2, dtype=torch.bool), np.ones(2), None)
    assert rnd.links is None and rnd.arrivals is None


def test_transparent_world_models_leave_the_trace_unchanged(toy_world):
    plain = runner.run(BASE)
    lossless = runner.run(BASE.replace(channel={"name": "perfect"}))
    instant = runner.run(BASE.replace(clock={"name": "instant"}))
    for other in (lossless, instant):
        for key, value in plain.metrics.items():
            np.testing.assert_array_equal(other.metrics[key], value)
    np.testing.assert_array_equal(instant.metrics["clock.time"][0], plain.rounds.astype(float))


def test_world_with_wrong_client_count_is_refused(monkeypatch):
    class Small(InstantClock):
        n_clients = 2

    real = runner.build
    monkeypatch.setattr(runner, "build", lambda kind, spec, **c: Small() if kind == "clock" else real(kind, spec, **c))
    with pytest.raises(ValueError, match="clock has 2 clients but the testbed has 4"):
        runner.run(BASE.replace(clock={"name": "small"}))
