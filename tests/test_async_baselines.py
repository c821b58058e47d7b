"""FedBuff, CA2FL and FADAS (seed 004's baselines, EXTERNAL definitions of digest 004 §2.7) on a stale schedule
against a hand computation; FedBuff without a clock is FedAvg bit for bit; refused inputs."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import drive
from theorylab.config import RunConfig
from theorylab.kernels.ca2fl import ca2fl
from theorylab.kernels.fadas import fadas
from theorylab.kernels.fedbuff import fedbuff
from theorylab.registry import build
from theorylab.runner import run

A = np.array([[1.0, 0.5], [2.0, 1.0], [0.5, 3.0]])
U = np.array([[1.0, -2.0], [-1.0, 0.5], [3.0, 1.0]])
SCHEDULE = [([1, 1, 0], [0, 0, 0], [1, 1, 0]),
            ([0, 0, 1], [0, 0, 1], [0, 0, 1]),
            ([1, 0, 0], [1, 0, 0], [1, 0, 0]),
            ([0, 1, 1], [0, 2, 1], [1, 1, 1])]
PROBLEM = {"name": "quadratic", "hessians": [np.diag(a).tolist() for a in A], "centers": U.tolist()}


def updates(K, lr):
    """Generator over the schedule: yields (arrived, staleness, Delta_i of each arrived client, server model) and
    receives the new server model; Delta_i = K noiseless local SGD steps from the client's start snapshot."""
    x = np.zeros(2)
    start = [x] * len(U)
    for arrived, staleness, dispatched in SCHEDULE:
        deltas = {}
        for i in np.flatnonzero(arrived):
            y = start[i].copy()
            for _ in range(K):
                y = y - lr * A[i] * (y - U[i])
            deltas[i] = y - start[i]
        x = yield deltas, staleness, x
        for i in np.flatnonzero(dispatched):
            start[i] = x
    yield None


def replay(server):
    """Run ``server(deltas, staleness, x) -> x'`` over the schedule by hand; returns the final model."""
    gen, x = updates(3, 0.1), None
    item = next(gen)
    while item is not None:
        x = server(*item)
        item = gen.send(x)
    return x


def test_fedbuff_with_staleness_weights_by_hand():
    def server(deltas, staleness, x):
        return x + 0.7 * sum(d / np.sqrt(1 + staleness[i]) for i, d in deltas.items()) / len(deltas)

    state = drive(fedbuff(3, 0.1, staleness_weight=True, server={"name": "sgd", "lr": 0.7}), build("testbed", PROBLEM),
                  SCHEDULE)
    np.testing.assert_allclose(state["x"][0].numpy(), replay(server), rtol=1e-13)


def test_ca2fl_by_hand():
    h = np.zeros((3, 2))

    def server(deltas, staleness, x):
        v = h.mean(0) + sum(d - h[i] for i, d in deltas.items()) / len(deltas)
        for i, d in deltas.items():
            h[i] = d
        return x + 0.8 * v

    state = drive(ca2fl(3, 0.1, server={"name": "sgd", "lr": 0.8}), build("testbed", PROBLEM), SCHEDULE)
    np.testing.assert_allclose(state["x"][0].numpy(), replay(server), rtol=1e-13)


@pytest.mark.parametrize("adaptive", [True, False])
def test_fadas_by_hand(adaptive):
    mem = {"m": np.zeros(2), "v": np.zeros(2), "vhat": np.zeros(2)}

    def server(deltas, staleness, x):
        d = sum(deltas.values()) / len(deltas)
        mem["m"] = 0.9 * mem["m"] + 0.1 * d
        mem["v"] = 0.99 * mem["v"] + 0.01 * d * d
        mem["vhat"] = np.maximum(mem["vhat"], mem["v"])
        tau = max(staleness[i] for i in deltas)
        eta = 0.8 if (not adaptive or tau <= 1) else min(0.8, 1 / tau)
        return x + eta * mem["m"] / (np.sqrt(mem["vhat"]) + 1e-8)

    state = drive(fadas(3, 0.1, server_lr=0.8, delay_adaptive=adaptive), build("testbed", PROBLEM), SCHEDULE)
    np.testing.assert_allclose(state["x"][0].numpy(), replay(server), rtol=1e-12)


@pytest.mark.parametrize("server", [None, {"name": "adam", "lr": 0.05, "amsgrad": True}])
def test_fedbuff_without_clock_is_fedavg_bit_for_bit(server):
    base = dict(problem={"name": "random_quadratic", "n_clients": 6, "dim": 3, "sigma": 0.3, "seed": 1},
                participation={"name": "bernoulli", "p": [0.5, 0.2, 0.9, 0.5, 0.4, 0.7]}, rounds=25, replicas=4,
                seed=3)
    mine = run(RunConfig(algorithm={"name": "fedbuff", "local_steps": 3, "lr": 0.1, "server": server}, **base))
    ref = run(RunConfig(algorithm={"name": "fedavg", "local_steps": 3, "lr": 0.1, "server": server}, **base))
    np.testing.assert_array_equal(mine.final["server"], ref.final["server"])
    for key, value in ref.metrics.items():
        np.testing.assert_array_equal(mine.metrics[key], value)


@pytest.mark.parametrize("factory,kwargs,name", [(fedbuff, {"local_steps": 0}, "local_steps"),
                                                 (ca2fl, {"lr": -1.0}, "lr"),
                                                 (fadas, {"server_lr": 0.0}, "server_lr"),
                                                 (fadas, {"tau_c": -1.0}, "tau_c"),
                                                 (fadas, {"beta1": 1.0}, "beta1")])
def test_bad_parameters_are_refused(factory, kwargs, name):
    with pytest.raises(ValueError, match=name):
        factory(**kwargs)
