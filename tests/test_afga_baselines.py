"""Seed 002's baselines [EXTERNAL definitions, digest 002 §1.7], two rounds each written out by hand on scalar
clients F_i(y) = (y - u_i)^2 / 2 without noise, and their bad inputs."""

import numpy as np
import pytest
import torch

from theorylab.kernels.algorithm import Round
from theorylab.registry import build
from theorylab.rng import Streams

U = np.array([0.0, 2.0, 4.0])
ACTIVE = [[True, False, True], [False, True, True]]
STEPS, LR, X0 = 2, 0.5, 1.0
W = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]


def _kernel_states(spec):
    problem = build("testbed", {"name": "scalar_quadratic", "centers": U.tolist(), "x0": X0})
    algo = build("algorithm", {"local_steps": STEPS, "lr": LR, **spec})
    streams = Streams(0, 1)
    state = algo.init(problem, problem.initial_point(1, streams))
    out = []
    for t, mask in enumerate(ACTIVE):
        state = algo.step(state, Round(t, torch.tensor([mask]), np.full(3, 2 / 3), streams), problem)
        out.append(float(algo.points(state)["server"]))
    return out


def test_fedprox_by_hand():
    x, mu, expected = X0, 0.5, []
    for mask in ACTIVE:
        ends = []
        for i in np.flatnonzero(mask):
            y = x
            for _ in range(STEPS):
                y -= LR * ((y - U[i]) + mu * (y - x))
            ends.append(y)
        x += np.mean(ends) - x
        expected.append(x)
    np.testing.assert_allclose(_kernel_states({"name": "fedprox", "mu": mu}), expected, rtol=1e-14)


def test_scaffold_by_hand():
    x, c, ci, expected = X0, 0.0, np.zeros(3), []
    for mask in ACTIVE:
        ends, new_ci = {}, ci.copy()
        for i in np.flatnonzero(mask):
            y = x
            for _ in range(STEPS):
                y -= LR * ((y - U[i]) - ci[i] + c)
            ends[i] = y
            new_ci[i] = ci[i] - c + (x - y) / (STEPS * LR)
        x += np.mean(list(ends.values())) - x
        c += sum(new_ci[i] - ci[i] for i in ends) / 3
        ci = new_ci
        expected.append(x)
    np.testing.assert_allclose(_kernel_states({"name": "scaffold"}), expected, rtol=1e-14)


def test_feddyn_by_hand():
    x, h, prev, alpha, expected = X0, 0.0, np.zeros(3), 0.5, []
    for mask in ACTIVE:
        thetas = {}
        for i in np.flatnonzero(mask):
            th = x
            for _ in range(STEPS):
                th -= LR * ((th - U[i]) - prev[i] + alpha * (th - x))
            thetas[i] = th
        for i, th in thetas.items():
            prev[i] -= alpha * (th - x)
        h -= alpha * sum(th - x for th in thetas.values()) / 3
        x = np.mean(list(thetas.values())) - h / alpha
        expected.append(x)
    np.testing.assert_allclose(_kernel_states({"name": "feddyn", "alpha": alpha}), expected, rtol=1e-14)


@pytest.mark.parametrize("average_every", [None, 3])
def test_dsgd_and_pga_by_hand(average_every):
    X, Wm, expected, k = np.full(3, X0), np.array(W), [], 0
    for _ in ACTIVE:  # decentralised: every client computes, the mask is not read
        for _ in range(STEPS):
            X = Wm @ X - LR * (X - U)
            k += 1
            if average_every and k % average_every == 0:
                X = np.full(3, X.mean())
        expected.append(X.mean())
    spec = {"name": "dsgd", "topology": W, "average_every": average_every}
    np.testing.assert_allclose(_kernel_states(spec), expected, rtol=1e-14)


def test_dadam_by_hand():
    X, Wm, expected = np.full(3, X0), np.array(W), []
    m, v, vmax = np.zeros(3), np.zeros(3), np.zeros(3)
    for _ in ACTIVE:
        for _ in range(STEPS):
            g = X - U
            m, v = 0.9 * m + 0.1 * g, 0.99 * v + 0.01 * g * g
            vmax = np.maximum(vmax, v)
            X = Wm @ X - LR * m / np.sqrt(vmax + 1e-8)
        expected.append(X.mean())
    np.testing.assert_allclose(_kernel_states({"name": "dadam", "topology": W}), expected, rtol=1e-13)


@pytest.mark.parametrize("spec, match", [
    ({"name": "fedprox", "mu": -1.0}, "mu"),
    ({"name": "feddyn", "alpha": 0.0}, "alpha"),
    ({"name": "dsgd"}, "topology is required"),
    ({"name": "dsgd", "topology": [[1.0, 0.5], [0.0, 0.5]]}, "topology"),
    ({"name": "dsgd", "topology": W, "average_every": 0}, "average_every"),
    ({"name": "dadam", "topology": W, "beta1": 1.0}, "beta1"),
])
def test_bad_inputs_are_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        build("algorithm", spec)


def test_fedprox_without_prox_term_is_fedavg_bit_for_bit():
    from theorylab.config import RunConfig
    from theorylab.runner import run

    base = dict(problem={"name": "random_quadratic", "n_clients": 6, "dim": 3, "sigma": 0.3},
                participation={"name": "uniform_k", "n_clients": 6, "k": 2}, rounds=5, replicas=3, seed=1)
    prox = run(RunConfig(algorithm={"name": "fedprox", "mu": 0.0, "local_steps": 3}, **base)).final["server"]
    avg = run(RunConfig(algorithm={"name": "fedavg", "local_steps": 3}, **base)).final["server"]
    assert np.array_equal(prox, avg)


def test_train_topology_option_only_for_afga():
    from theorylab.app.train import _topology_spec

    assert _topology_spec("ring", {"name": "afga"}, 20) == {"name": "ring", "n": 20}
    assert _topology_spec('{"name": "torus", "a": 4, "b": 5}', {"name": "afga"}, 20)["name"] == "torus"
    with pytest.raises(ValueError, match="--topology"):
        _topology_spec("ring", {"name": "fedavg"}, 20)
