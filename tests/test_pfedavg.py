"""P-FedAvg: aggregation schemes against enumeration, the kernel against hand-computed rounds."""

import itertools

import numpy as np
import pytest
import torch

from theorylab.testbeds.gaussian_mean import gaussian_mean
from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Round
from theorylab.kernels.pfedavg import full_participation, pfedavg
from theorylab.performative.schemes import SCHEMES, gradient_scales, sample_weights, sampling_variance, weight_moments
from theorylab.rng import Streams
from theorylab.runner import run

P4 = np.array([0.1, 0.2, 0.3, 0.4])


def enumerated_moments(scheme, p, k):
    """(E a, E aa^T) by summing over every outcome of the sample (independent of the closed forms)."""
    n = len(p)
    outcomes = []
    if scheme == "I":
        for draw in itertools.product(range(n), repeat=k):
            a = np.bincount(draw, minlength=n) / k
            outcomes.append((np.prod(p[list(draw)]), a))
    else:
        subsets = list(itertools.combinations(range(n), k))
        for s in subsets:
            a = np.zeros(n)
            a[list(s)] = p[list(s)] * n / k if scheme == "II" else 1.0 / k
            outcomes.append((1.0 / len(subsets), a))
    mean = sum(w * a for w, a in outcomes)
    second = sum(w * np.outer(a, a) for w, a in outcomes)
    return mean, second


@pytest.mark.parametrize("scheme, k", [("I", 1), ("I", 3), ("II", 2), ("II", 3), ("II_rescaled", 2)])
def test_weight_moments_equal_enumeration(scheme, k):
    mean, second = weight_moments(scheme, P4, k)
    e_mean, e_second = enumerated_moments(scheme, P4, k)
    assert np.allclose(mean, e_mean, atol=1e-14) and np.allclose(second, e_second, atol=1e-14)


def test_lemma_c2_closed_forms():
    w = np.array([1.0, -2.0, 0.5, 3.0])
    disp = P4 @ (w - P4 @ w) ** 2
    assert sampling_variance("I", P4, 3, w) == pytest.approx(disp / 3, rel=1e-12)
    u = np.full(4, 0.25)
    disp_u = u @ (w - u @ w) ** 2
    assert sampling_variance("II", u, 2, w) == pytest.approx((4 - 2) / (2 * 3) * disp_u, rel=1e-12)
    assert sampling_variance("full", P4, None, w) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("scheme, k", [("I", 3), ("II", 2), ("II_rescaled", 2), ("full", None), ("full_uniform", None)])
def test_sampler_matches_its_law(scheme, k):
    R, draws = 2000, 10
    streams = Streams(3, R)
    p = torch.as_tensor(P4)
    a = torch.cat([sample_weights(scheme, p, k, streams) for _ in range(draws)]).numpy()
    mean, second = weight_moments(scheme, P4, k)
    n = a.shape[0]
    assert np.all(np.abs(a.mean(0) - mean) <= 5 * a.std(0) / np.sqrt(n) + 1e-12)
    outer = np.einsum("ri,rj->rij", a, a)
    assert np.all(np.abs(outer.mean(0) - second) <= 5 * outer.std(0) / np.sqrt(n) + 1e-12)
    if scheme == "I":
        assert np.allclose(a.sum(1), 1.0) and np.allclose(a * 3, np.round(a * 3))
    if scheme in ("II", "II_rescaled"):
        assert np.all((a > 0).sum(1) == 2)


def test_gradient_scales():
    assert np.allclose(gradient_scales("II_rescaled", P4), 4 * P4)
    assert np.allclose(gradient_scales("II", P4), 1.0)


def one_round(scheme, k, E=2, lr=0.1, seed=0, R=3):
    problem = gaussian_mean([1.0, -2.0, 0.5, 3.0], [0.5, 0.9, -0.3, 1.2], P4, sigma=0.0, theta0=2.0)
    algo = pfedavg(local_steps=E, lr=lr, scheme=scheme, k=k)
    streams = Streams(seed, R)
    state = algo.init(problem, problem.initial_point(R, streams))
    state = algo.step(state, Round(0, torch.ones(R, 4, dtype=torch.bool), np.ones(4), streams), problem)
    return problem, algo.points(state)["server"][:, 0].numpy()


@pytest.mark.parametrize("scheme, k", [(s, 2) for s in SCHEMES])
def test_kernel_round_by_hand(scheme, k):
    E, lr = 2, 0.1
    problem, got = one_round(scheme, k, E, lr)
    q = gradient_scales(scheme, problem.p)
    w = np.full(4, 2.0)
    for _ in range(E):  # sigma = 0: theta <- theta - eta q_i ((1 - eps_i) theta - m_i)
        w = w - lr * q * ((1 - problem.eps) * w - problem.m)
    a = sample_weights(scheme, torch.as_tensor(problem.p), k, Streams(0, 3)).numpy()  # the kernel's draw
    assert np.allclose(got, a @ w, atol=1e-13)


def test_kernel_step_size_indexed_by_local_iteration():
    """Round t = 1 with E = 2 uses eta at local iterations 2 and 3."""
    problem = gaussian_mean([1.0], [0.5], sigma=0.0, theta0=0.0)
    lr = {"name": "inverse", "lr0": 0.5, "t0": 1.0}
    algo = pfedavg(local_steps=2, lr=lr, scheme="full")
    streams = Streams(0, 1)
    state = algo.init(problem, problem.initial_point(1, streams))
    for t in range(2):
        state = algo.step(state, Round(t, torch.ones(1, 1, dtype=torch.bool), np.ones(1), streams), problem)
    theta = 0.0
    for step in range(4):
        theta -= 0.5 / (1 + step) * (0.5 * theta - 1.0)
    assert state["x"].item() == pytest.approx(theta, abs=1e-14)


def test_kernel_refuses_partial_availability_and_bad_parameters():
    problem = gaussian_mean([1.0, 2.0], [0.1, 0.2])
    algo = pfedavg(scheme="II", k=1)
    streams = Streams(0, 1)
    state = algo.init(problem, problem.initial_point(1, streams))
    with pytest.raises(ValueError, match="full participation"):
        algo.step(state, Round(0, torch.tensor([[True, False]]), np.ones(2), streams), problem)
    with pytest.raises(ValueError, match="K must be <= N"):
        pfedavg(scheme="II", k=3).init(problem, problem.initial_point(1, streams))
    with pytest.raises(ValueError, match="scheme"):
        pfedavg(scheme="III")
    with pytest.raises(ValueError, match="local_steps"):
        pfedavg(local_steps=0)
    with pytest.raises(ValueError, match="sample size K"):
        pfedavg(scheme="I").init(problem, problem.initial_point(1, streams))


def test_fresh_samples_are_drawn_at_the_local_model():
    """With sigma > 0 the kernel's first local gradient is (1-eps) theta - m - sigma xi, xi from the data stream."""
    problem = gaussian_mean([1.0, 2.0], [0.5, -0.5], sigma=0.7, theta0=3.0)
    noise = problem.sample(Streams(5, 1), 1)[0][0, :, 0].numpy()  # the draw the kernel will see
    algo = pfedavg(local_steps=1, lr=0.1, scheme="full")
    streams = Streams(5, 1)
    state = algo.step(algo.init(problem, problem.initial_point(1, streams)),
                      Round(0, torch.ones(1, 2, dtype=torch.bool), np.ones(2), streams), problem)
    w = 3.0 - 0.1 * ((1 - problem.eps) * 3.0 - problem.m - noise)
    assert state["x"].item() == pytest.approx(problem.p @ w, abs=1e-12)


def test_same_seed_same_trace_and_runner_integration():
    cfg = RunConfig(problem={"name": "gaussian_mean", "means": [1.0, 2.0, 3.0], "sensitivities": [0.2, 0.4, 0.6],
                             "sigma": 0.5},
                    participation=full_participation(3), algorithm={"name": "pfedavg", "scheme": "I", "k": 2, "lr": 0.05},
                    rounds=20, replicas=4, seed=7, every=5)
    a, b = run(cfg), run(cfg)
    assert np.array_equal(a.metrics["server.dist2"], b.metrics["server.dist2"])
    assert set(a.metrics) >= {"server.dist2", "server.theta", "server.risk"}
