"""Every kernel's update rule against a step computed by hand."""

import numpy as np
import pytest
import torch

from theorylab.testbeds.quadratic import scalar_quadratic
from theorylab.kernels.algorithm import Round
from theorylab.kernels.fedavg import fedavg
from theorylab.kernels.server import make_server
from theorylab.rng import Streams

# Two scalar clients F_1 = (x-0)^2/2, F_2 = (x-2)^2 (curvature 2), x0 = 1, two local steps of size 0.1:
#   client 1: 1 -> 0.9 -> 0.81, delta_1 = -0.19;  client 2: 1 -> 1.2 -> 1.36, delta_2 = +0.36.
D1, D2 = -0.19, 0.36
MASKS = torch.tensor([[True, True], [False, True], [False, False]])
PROBS = np.array([0.5, 0.25])


def one_round(**kwargs):
    problem = scalar_quadratic([0.0, 2.0], curvatures=[1.0, 2.0], x0=1.0)
    algo = fedavg(local_steps=2, lr=0.1, **kwargs)
    streams = Streams(0, 3)
    state = algo.init(problem, problem.initial_point(3, streams))
    state = algo.step(state, Round(0, MASKS, PROBS, streams), problem)
    return algo.points(state)["server"][:, 0].numpy()


@pytest.mark.parametrize("kwargs, expected", [
    (dict(aggregation="active"), [1 + (D1 + D2) / 2, 1 + D2, 1.0]),
    (dict(aggregation="all"), [1 + 0.5 * D1 + 0.5 * D2, 1 + 0.5 * D2, 1.0]),
    (dict(aggregation="known_p"), [1 + 0.5 * D1 / 0.5 + 0.5 * D2 / 0.25, 1 + 0.5 * D2 / 0.25, 1.0]),
    (dict(aggregation="all", q=[0.3, 0.7]), [1 + 0.3 * D1 + 0.7 * D2, 1 + 0.7 * D2, 1.0]),
    (dict(aggregation="active", q=[0.3, 0.7]), [1 + 0.3 * D1 + 0.7 * D2, 1 + D2, 1.0]),
    (dict(aggregation="active", server={"name": "sgd", "lr": 2.0}), [1 + (D1 + D2), 1 + 2 * D2, 1.0]),
    (dict(aggregation="active", server={"name": "momentum", "lr": 1.0, "beta": 0.5}), [1 + (D1 + D2) / 2, 1 + D2, 1.0]),
])
def test_fedavg_round_by_hand(kwargs, expected):
    assert np.allclose(one_round(**kwargs), expected, atol=1e-14)


def test_local_sgd_uses_the_drawn_noise():
    problem = scalar_quadratic([0.0, 2.0], sigma=1.0, x0=1.0)
    streams = Streams(4, 1)
    noise = torch.stack(list(problem.sample(Streams(4, 1), 1)))[0]  # the same draw the kernel will see
    algo = fedavg(local_steps=1, lr=0.1, aggregation="all")
    state = algo.step(algo.init(problem, problem.initial_point(1, streams)),
                      Round(0, torch.tensor([[True, True]]), PROBS, streams), problem)
    grads = torch.tensor([[1.0 - 0.0, 1.0 - 2.0]], dtype=torch.float64) + noise[..., 0]
    assert torch.allclose(state["x"][0, 0], 1 - 0.1 * 0.5 * grads.sum())


def test_server_momentum_by_hand():
    opt = make_server({"name": "momentum", "lr": 2.0, "beta": 0.5})
    x = torch.zeros(1, 1, dtype=torch.float64)
    state = opt.init(x)
    x, state = opt.update(state, x, torch.ones_like(x))
    assert x.item() == pytest.approx(2.0)
    x, state = opt.update(state, x, torch.ones_like(x))
    assert x.item() == pytest.approx(2.0 + 2.0 * 1.5)


@pytest.mark.parametrize("amsgrad", [False, True])
def test_server_adam_by_hand(amsgrad):
    opt = make_server({"name": "adam", "lr": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-3, "amsgrad": amsgrad})
    x = torch.zeros(1, 1, dtype=torch.float64)
    state = opt.init(x)
    x, state = opt.update(state, x, torch.full_like(x, 2.0))  # m = 0.2, v = 0.04
    assert x.item() == pytest.approx(0.1 * 0.2 / (0.2 + 1e-3))
    x, state = opt.update(state, x, torch.zeros_like(x))  # m = 0.18, v = 0.0396 (vmax stays 0.04)
    denom = (0.04 if amsgrad else 0.0396) ** 0.5 + 1e-3
    assert x.item() == pytest.approx(0.1 * 0.2 / (0.2 + 1e-3) + 0.1 * 0.18 / denom)


def _mean_delta_by_hand(x: float) -> float:
    """Average of the two clients' deltas after two local steps of size 0.1 from x (the set-up above):
    client 1 contracts x -> 0.81 x; client 2 (gradient 2(y - 2)) maps y -> 0.8 y + 0.4 twice, to 0.64 x + 0.72."""
    return 0.5 * ((0.81 * x - x) + (0.64 * x + 0.72 - x))


@pytest.mark.parametrize("server", [
    {"name": "momentum", "lr": 0.7, "beta": 0.5},
    {"name": "adam", "lr": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-3},
    {"name": "adam", "lr": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-3, "amsgrad": True},
])
def test_fedavg_kernel_with_stateful_server_over_rounds_by_hand(server):
    """Four full-participation rounds of the kernel against the server recursions written out in floats."""
    problem = scalar_quadratic([0.0, 2.0], curvatures=[1.0, 2.0], x0=1.0)
    algo = fedavg(local_steps=2, lr=0.1, aggregation="active", server=server)
    streams = Streams(0, 1)
    state = algo.init(problem, problem.initial_point(1, streams))
    x, m, v, vmax = 1.0, 0.0, 0.0, 0.0
    for t in range(4):
        state = algo.step(state, Round(t, torch.ones(1, 2, dtype=torch.bool), PROBS, streams), problem)
        delta = _mean_delta_by_hand(x)
        if server["name"] == "momentum":
            m = server["beta"] * m + delta
            x += server["lr"] * m
        else:
            m = server["beta1"] * m + (1 - server["beta1"]) * delta
            v = server["beta2"] * v + (1 - server["beta2"]) * delta ** 2
            vmax = max(vmax, v)
            x += server["lr"] * m / ((vmax if server.get("amsgrad") else v) ** 0.5 + server["eps"])
        assert state["x"].item() == pytest.approx(x, abs=1e-14)


def test_empty_round_leaves_momentum_state_unchanged():
    problem = scalar_quadratic([0.0, 2.0], x0=1.0)
    algo = fedavg(local_steps=1, lr=0.1, server={"name": "momentum", "lr": 1.0, "beta": 0.9})
    streams = Streams(0, 1)
    state = algo.init(problem, problem.initial_point(1, streams))
    state = algo.step(state, Round(0, torch.tensor([[True, True]]), PROBS, streams), problem)
    after = algo.step(state, Round(1, torch.tensor([[False, False]]), PROBS, streams), problem)
    assert all(torch.equal(after[k], state[k]) for k in state)


def test_full_participation_makes_active_and_all_agree():
    problem = scalar_quadratic([0.0, 1.0, 3.0], sigma=0.5)
    results = []
    for aggregation in ("active", "all"):
        algo = fedavg(local_steps=3, lr=0.1, aggregation=aggregation)
        streams = Streams(1, 2)
        state = algo.init(problem, problem.initial_point(2, streams))
        for t in range(5):
            state = algo.step(state, Round(t, torch.ones(2, 3, dtype=torch.bool), np.ones(3), streams), problem)
        results.append(state["x"])
    assert torch.allclose(*results)


@pytest.mark.parametrize("kwargs, message", [
    (dict(local_steps=0), "local_steps"),
    (dict(aggregation="median"), "aggregation"),
    (dict(lr=-1.0), "step size"),
    (dict(lr={"name": "cosine", "lr0": 1}), "schedule"),
    (dict(server={"name": "lamb"}), "server optimiser"),
    (dict(server={"name": "adam", "beta1": 1.5}), "beta1"),
])
def test_bad_algorithm_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fedavg(**kwargs)
