"""The factored exact-moment engine against the literal N x N recursion of digest §5.2 and against Monte Carlo."""

import numpy as np
import pytest

from theorylab.testbeds.gaussian_mean import gaussian_mean
from theorylab.config import RunConfig
from theorylab.exact.pfedavg_moments import pfedavg_moments, propagate, step_sizes
from theorylab.kernels.pfedavg import full_participation
from theorylab.performative.schemes import gradient_scales, weight_moments
from theorylab.runner import run

MEANS, EPS, P = [2.0, -1.0, 4.0, 0.5], [0.3, 1.3, -0.4, 0.8], [0.1, 0.4, 0.2, 0.3]
LR = {"name": "inverse", "lr0": 0.3, "t0": 5}


def literal(problem, E, lr, scheme, k, T):
    """Digest §5.2 verbatim: mu <- A mu + b, S <- A S A + A mu b^T + b mu^T A + b b^T + diag(noise); aggregation
    mu <- 1 a_bar^T mu, S <- tr(Omega S) 1 1^T."""
    p, n = problem.p, problem.n_clients
    q = gradient_scales(scheme, p)
    abar, omega = weight_moments(scheme, p, k)
    mu, S = np.full(n, problem.theta0), np.full((n, n), problem.theta0 ** 2)
    means, seconds, cons = [p @ mu], [p @ S @ p], [p @ np.diag(S) - p @ S @ p]
    for t, eta in enumerate(step_sizes(lr, T)):
        A = np.diag(1 - eta * q * (1 - problem.eps))
        b = eta * q * problem.m
        S = A @ S @ A + np.outer(A @ mu, b) + np.outer(b, A @ mu) + np.outer(b, b) + np.diag((eta * q * problem.sigma) ** 2)
        mu = A @ mu + b
        if (t + 1) % E == 0:
            mu, S = np.full(n, abar @ mu), np.full((n, n), np.sum(omega * S))
        means.append(p @ mu)
        seconds.append(p @ S @ p)
        cons.append(p @ np.diag(S) - p @ S @ p)
    return np.array(means), np.array(seconds), np.array(cons)


@pytest.mark.parametrize("scheme, k", [("full", None), ("I", 3), ("II", 2), ("II_rescaled", 2), ("full_uniform", None)])
def test_factored_equals_literal_recursion(scheme, k):
    problem = gaussian_mean(MEANS, EPS, P, sigma=0.8, theta0=-3.0)
    E, rounds = 3, 12
    got = propagate(problem, E, LR, scheme, k, rounds)
    means, seconds, cons = literal(problem, E, LR, scheme, k, E * rounds)
    assert np.allclose(got.mean, means, rtol=1e-11, atol=1e-11)
    assert np.allclose(got.second, seconds, rtol=1e-11, atol=1e-11)
    assert np.allclose(got.consensus, cons, rtol=1e-9, atol=1e-11)
    assert np.all(got.consensus[::E] == 0.0)


@pytest.mark.parametrize("eta", [1e-3, 1e-9])
def test_consensus_error_is_accurate_at_tiny_steps(eta):
    """The literal recursion in exact rational arithmetic (float inputs converted exactly, the weights as the decimals
    they are) against the engine,
    at a constant step.  The consensus error is O(eta^2) while E(theta_bar^2) stays O(1), so computing it as
    sum_i p_i E theta_i^2 - E theta_bar^2 in floats would leave only rounding (about 1e-15) at eta = 1e-9, where it
    is about 1e-17: the engine must get it to 1e-12 relative."""
    from fractions import Fraction

    problem = gaussian_mean(MEANS, EPS, P, sigma=0.8, theta0=-3.0)
    E, rounds = 3, 2
    p = [Fraction(str(x)) for x in P]  # exactly 1/10, 4/10, ...: summing to one, as the weights are meant to
    m, sl, noise = ([Fraction(float(x)) for x in arr] for arr in
                    (problem.m, 1 - problem.eps, problem.sigma ** 2 + 0 * problem.p))
    step, n = Fraction(eta), len(p)
    mu, S = [Fraction(float(problem.theta0))] * n, [[Fraction(float(problem.theta0)) ** 2] * n for _ in range(n)]
    exact = []
    for t in range(E * rounds):
        a = [1 - step * sl[i] for i in range(n)]
        b = [step * m[i] for i in range(n)]
        S = [[a[i] * a[j] * S[i][j] + a[i] * mu[i] * b[j] + b[i] * a[j] * mu[j] + b[i] * b[j]
              + (step * step * noise[i] if i == j else 0) for j in range(n)] for i in range(n)]
        mu = [a[i] * mu[i] + b[i] for i in range(n)]
        if (t + 1) % E == 0:  # full participation: theta_i <- sum_j p_j theta_j
            bar, sq = sum(p[i] * mu[i] for i in range(n)), sum(p[i] * p[j] * S[i][j] for i in range(n) for j in range(n))
            mu, S = [bar] * n, [[sq] * n for _ in range(n)]
        sq_bar = sum(p[i] * p[j] * S[i][j] for i in range(n) for j in range(n))
        exact.append(float(sum(p[i] * S[i][i] for i in range(n)) - sq_bar))
    got = propagate(problem, E, eta, "full", None, rounds).consensus[1:]
    np.testing.assert_allclose(got, exact, rtol=1e-12, atol=0.0)
    if eta == 1e-9:  # the regime the test is about: the error itself far below a float subtraction's rounding
        assert max(exact) < 1e-15


@pytest.mark.parametrize("scheme, k", [("full", None), ("I", 2), ("II_rescaled", 2)])
def test_exact_moments_agree_with_monte_carlo(scheme, k):
    cfg = RunConfig(problem={"name": "gaussian_mean", "means": MEANS, "sensitivities": EPS, "weights": P, "sigma": 0.8,
                             "theta0": -3.0},
                    participation=full_participation(4),
                    algorithm={"name": "pfedavg", "local_steps": 3, "lr": LR, "scheme": scheme, "k": k},
                    rounds=12, replicas=3000, seed=2, every=4)
    exact = pfedavg_moments(cfg)
    trace = run(cfg)
    problem = gaussian_mean(MEANS, EPS, P)
    expected = exact.dist2(problem.theta_ps)[trace.rounds * 3]
    lo, hi = trace.ci("server.dist2", level=0.999)
    assert np.all((lo[1:] <= expected[1:]) & (expected[1:] <= hi[1:]))


def test_engine_refuses_other_testbeds_and_algorithms():
    cfg = RunConfig(problem={"name": "scalar_quadratic", "centers": [0, 1]}, participation=full_participation(2),
                    algorithm={"name": "pfedavg"}, rounds=2)
    with pytest.raises(ValueError, match="GaussianMeanModel: Quadratic lacks eps, m, p, theta0$"):
        pfedavg_moments(cfg)
    with pytest.raises(ValueError, match="pfedavg"):
        pfedavg_moments(cfg.replace(algorithm={"name": "fedavg"}))


@pytest.mark.parametrize("spec", [0.05, {"name": "inverse", "lr0": 0.1, "t0": 50.0},
                                  {"name": "inverse_sqrt", "lr0": 0.2, "t0": 10.0}])
def test_vectorised_schedule_equals_the_scalar_one_bit_for_bit(spec):
    from theorylab.kernels.schedules import make_schedule, schedule_values

    t = np.arange(100_000)
    scalar = make_schedule(spec)
    assert np.array_equal(schedule_values(spec, t), np.array([scalar(int(k)) for k in t]))


def test_cached_blocks_give_the_same_floats_whatever_ran_before():
    """The local pass is cached in blocks of rounds shared across schemes and horizons; a run's floats must not
    depend on what filled the cache (a longer horizon, another scheme) or on the cache at all."""
    import theorylab.exact.pfedavg_moments as engine

    problem = gaussian_mean(MEANS, EPS, P, sigma=0.8, theta0=-3.0)
    rounds = engine.BLOCK + 7  # one whole block and part of the next

    def fields(moments):
        return moments.mean, moments.second, moments.consensus

    engine._CACHE.clear()
    cold = fields(propagate(problem, 3, LR, "I", 2, rounds))
    engine._CACHE.clear()
    propagate(problem, 3, LR, "full", None, 3 * engine.BLOCK)  # fills the cache with another scheme, longer
    warm = fields(propagate(problem, 3, LR, "I", 2, rounds))
    assert all(np.array_equal(a, b) for a, b in zip(cold, warm))
    assert len(engine._CACHE) == 3  # the second run computed nothing new
    shorter = fields(propagate(problem, 3, LR, "I", 2, 10))
    assert all(np.array_equal(a[:31], b) for a, b in zip(cold, shorter))  # T = 30 local iterations, 31 points
