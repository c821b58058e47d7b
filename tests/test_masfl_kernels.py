"""MasFL / AdaMasFL kernels (seed 004 Alg. 1-4): server and client steps against a hand computation on a stale
schedule, the control-variate invariant, exact scale invariance, and refused inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers import drive
from theorylab.config import RunConfig
from theorylab.kernels.masfl import adamasfl, corrected_local_steps, masfl
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.runner import run

A = np.array([[1.0, 0.5], [2.0, 1.0], [0.5, 3.0]])  # diagonal Hessians of three 2-d clients
U = np.array([[1.0, -2.0], [-1.0, 0.5], [3.0, 1.0]])
# (arrived, staleness, dispatched): client 2 stays busy for two steps, then 0 and 1 arrive stale
SCHEDULE = [([1, 1, 0], [0, 0, 0], [1, 1, 0]),
            ([0, 0, 1], [0, 0, 1], [0, 0, 1]),
            ([1, 0, 0], [1, 0, 0], [1, 0, 0]),
            ([0, 1, 1], [0, 2, 1], [1, 1, 1])]


def problem(scale=1.0, sigma=0.0):
    hessians = np.stack([np.diag(a) for a in scale * A])
    return build("testbed", {"name": "quadratic", "hessians": hessians.tolist(), "centers": U.tolist(),
                             "sigma": scale * sigma})


def by_hand(beta, gamma, eta, K, normalise):
    """Alg. 1-4 read line by line, one client and one local step at a time (sigma = 0)."""
    grad = lambda i, th: A[i] * (th - U[i])  # noqa: E731
    N = len(U)
    theta = np.zeros(2)
    c_i = [grad(i, theta) for i in range(N)]  # K noiseless gradients at theta^0
    c = sum(c_i) / N
    g = c.copy()
    start = [(theta, c.copy()) for _ in range(N)]  # u^0 = c^0
    for arrived, _, dispatched in SCHEDULE:
        uploads = {}
        for i in np.flatnonzero(arrived):
            th0, u = start[i]
            th, grads = th0.copy(), []
            for _ in range(K):
                grads.append(grad(i, th))
                step = beta * (grads[-1] - c_i[i]) + u
                th = th - eta * (step / np.linalg.norm(step) if normalise else step)
            uploads[i] = (sum(grads) / K, (th0 - th) / (eta * K))
        S = len(uploads)
        change = sum(uploads[i][0] - c_i[i] for i in uploads)
        g = beta * (change / S + c) + (1 - beta) * g
        theta = theta - gamma * (sum(d for _, d in uploads.values()) / S if normalise else g)
        c = c + change / N
        for i, (new, _) in uploads.items():
            c_i[i] = new
        for i in np.flatnonzero(dispatched):
            start[i] = (theta, beta * c + (1 - beta) * g)
    return theta, g, c, np.array(c_i)


@pytest.mark.parametrize("kernel,normalise", [(masfl, False), (adamasfl, True)])
def test_stale_schedule_matches_hand_computation(kernel, normalise):
    state = drive(kernel(beta=0.4, gamma=0.3, eta=0.1, local_steps=3), problem(), SCHEDULE)
    theta, g, c, c_i = by_hand(0.4, 0.3, 0.1, 3, normalise)
    np.testing.assert_allclose(state["x"][0].numpy(), theta, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(state["g"][0].numpy(), g, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(state["c"][0].numpy(), c, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(state["c_i"][0].numpy(), c_i, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("kernel", [masfl, adamasfl])
def test_control_variate_invariant_with_noise(kernel):
    state = drive(kernel(beta=0.3, gamma=0.2, eta=0.05, local_steps=2), problem(sigma=0.7), SCHEDULE * 5, replicas=3)
    np.testing.assert_allclose(state["c"].numpy(), state["c_i"].mean(1).numpy(), rtol=0, atol=1e-14)


def test_adamasfl_local_steps_have_length_eta():
    p = problem(sigma=0.5)
    streams = Streams(0, 2)
    start = torch.zeros(2, 3, 2, dtype=torch.float64)
    one, _ = corrected_local_steps(p, start, torch.ones_like(start), 0.5, 0.01, 1, streams, None, normalise=True)
    np.testing.assert_allclose(torch.linalg.vector_norm(one, dim=-1).numpy(), 0.01, rtol=1e-14)


def test_scale_invariance_is_exact_for_powers_of_two():
    """AdaMasFL on 4f (noise x4) is the same trajectory; MasFL on 4f with (gamma, eta) is MasFL on f with
    (4 gamma, 4 eta) (digest 004 §2.6): powers of two scale every float exactly."""
    sched = SCHEDULE * 3
    ada = [drive(adamasfl(0.4, 0.05, 0.02, 3), problem(s, 0.6), sched, replicas=2)["x"] for s in (1.0, 4.0)]
    assert torch.equal(ada[0], ada[1])
    big = drive(masfl(0.4, 0.05, 0.02, 3), problem(4.0, 0.6), sched, replicas=2)["x"]
    small = drive(masfl(0.4, 0.2, 0.08, 3), problem(1.0, 0.6), sched, replicas=2)["x"]
    np.testing.assert_allclose(big.numpy(), small.numpy(), rtol=1e-13, atol=1e-15)


def test_synchronous_round_without_clock_runs_and_is_reproducible():
    cfg = RunConfig(problem={"name": "random_quadratic", "n_clients": 5, "dim": 3, "sigma": 0.2, "seed": 2},
                    participation={"name": "bernoulli", "p": [0.6] * 5},
                    algorithm={"name": "adamasfl", "gamma": 0.05, "eta": 0.02}, rounds=12, replicas=3, seed=4)
    one, two = run(cfg), run(cfg.replace(replicas=1))
    np.testing.assert_array_equal(one.final["server"][:1], two.final["server"])


@pytest.mark.parametrize("kwargs,name", [({"beta": 1.5}, "beta"), ({"beta": -0.1}, "beta"), ({"gamma": 0.0}, "gamma"),
                                         ({"eta": -1.0}, "eta"), ({"local_steps": 0}, "local_steps")])
@pytest.mark.parametrize("kernel", [masfl, adamasfl])
def test_bad_parameters_are_refused(kernel, kwargs, name):
    with pytest.raises(ValueError, match=name):
        kernel(**kwargs)


def test_unequal_weights_are_refused():
    p = build("testbed", {"name": "scalar_quadratic", "centers": [0.0, 1.0], "weights": [0.3, 0.7]})
    with pytest.raises(ValueError, match="equal objective weights"):
        masfl().init(p, torch.zeros(1, 1, dtype=torch.float64))


def test_round_driver_replays_the_runner_and_replicas_are_independent():
    from theorylab.figures.masfl_curves import async_quadratic
    from theorylab.validations.masfl.trajectory import rounds

    cfg = RunConfig(algorithm={"name": "masfl", "gamma": 0.05, "eta": 0.02}, rounds=15, replicas=3, seed=2,
                    **async_quadratic(8, 2, 4, sigma=0.3))
    *_, (_, _, state) = rounds(cfg)
    np.testing.assert_array_equal(state["x"].numpy(), run(cfg).final["server"])
    np.testing.assert_array_equal(run(cfg.replace(replicas=1)).final["server"], run(cfg).final["server"][:1])


def test_plateau_width_interpolates_between_decades():
    from theorylab.validations.masfl.robustness import plateau

    # good (<= 0.1) at m = 1e-1 and 1 only; linear in log between 1e-2 (ratio 1) and 1e-1 (ratio 0.01) crosses
    # log 0.1 half-way, and likewise between 1 and 10
    ratios = np.array([[1.0, 1.0, 0.01, 0.01, 1.0, 1.0]])
    np.testing.assert_allclose(plateau(ratios), [2.0], atol=0.011)


def test_local_sgd_fixed_point_is_a_fixed_point():
    from theorylab.validations.masfl.optimum import local_sgd_fixed_point

    p = problem()
    x = local_sgd_fixed_point(p, 0.1, 3)
    ends = []
    for i in range(3):
        y = x.copy()
        for _ in range(3):
            y = y - 0.1 * A[i] * (y - U[i])
        ends.append(y)
    np.testing.assert_allclose(np.mean(ends, axis=0), x, atol=1e-14)


@pytest.mark.parametrize("pool, distinct", [("idle", 90 * (1 - (89 / 90) ** 10)), ("all", 90 * (1 - 0.99 ** 10))])
def test_multiset_refill_starts_the_distinct_idle_clients_of_its_draws(pool, distinct):
    from theorylab.figures.masfl_staleness import N, MultisetRefill

    # 10 of 100 clients running, target 20: ten uniform draws with replacement, from the 90 idle clients or from all
    # 100 (a draw hitting a running client is lost); the expected number of distinct idle clients drawn is exact
    replicas = 4000
    state = {"finish": torch.full((replicas, N), torch.inf, dtype=torch.float64),
             "version": torch.zeros((replicas, N), dtype=torch.int64),
             "pending": torch.zeros((replicas, N), dtype=torch.bool),
             "now": torch.zeros(replicas, dtype=torch.float64)}
    state["finish"][:, :10] = 1.0
    everyone = torch.ones((replicas, N), dtype=torch.bool)
    new, chosen = MultisetRefill(20, pool)._launch(state, Streams(0, replicas), everyone, 3, 20)
    started = chosen.sum(1).double()
    assert not chosen[:, :10].any() and bool((new["version"][chosen] == 3).all())
    assert abs(float(started.mean()) - distinct) < 5 * float(started.std()) / replicas ** 0.5


def test_asynchrony_performance_reads_the_last_quarter_or_the_whole_run():
    from theorylab.validations.masfl.robustness import performance

    logs = np.array([[0.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0]])
    np.testing.assert_allclose(performance(logs), [-6.5])
    np.testing.assert_allclose(performance(logs, "run-average gap"), [-3.5])
