import numpy as np
import pytest
import torch

from theorylab.testbeds.quadratic import random_quadratic, scalar_quadratic
from theorylab.config import RunConfig
from theorylab.exact.fedavg_moments import fedavg_mean_limit, fedavg_moments, weight_moments
from theorylab.exact.local_drift import local_drift
from theorylab.exact.poisson_binomial import enumerate_moments, inverse_count_moments, subset_probabilities, subsets
from theorylab.kernels.aggregation import aggregation_weights
from theorylab.runner import run
from theorylab.trace import mean_ci


@pytest.mark.parametrize("p", [[0.9, 0.1], [0.9, 0.1, 0.5, 0.3, 0.7], [1.0, 0.0, 0.4, 0.6, 0.2, 0.95, 0.05]])
@pytest.mark.parametrize("power", [1, 2])
def test_quadrature_equals_enumeration(p, power):
    first, pair = inverse_count_moments(p, power)

    def inverse_count(masks):
        n = masks.sum(1, keepdims=True)
        return masks / np.maximum(n, 1) ** power

    e_first, _ = enumerate_moments(p, inverse_count)
    assert np.allclose(first, e_first, atol=1e-14)
    assert np.allclose(pair, _pair_expectation(p, power), atol=1e-14)


def _pair_expectation(p, power):
    """E[1{i in S} 1{j in S} / |S|^power] by summing over all subsets."""
    masks = subsets(len(p)).astype(float)
    prob = subset_probabilities(p, masks.astype(bool))
    n = np.maximum(masks.sum(1), 1)
    return np.einsum("s,si,sj->ij", prob / n ** power, masks, masks)


def test_two_client_closed_form():
    """Digest 000 §4: q_1 = p_1 (1 - p_2/2) for two clients."""
    first, _ = inverse_count_moments([0.9, 0.1], 1)
    assert np.allclose(first, [0.9 * (1 - 0.05), 0.1 * (1 - 0.45)])


@pytest.mark.parametrize("kind", ["active", "all", "known_p"])
def test_weight_moments_match_enumerating_the_kernel_rule(kind):
    p, q = np.array([0.8, 0.3, 0.55, 0.1]), np.array([0.25] * 4)
    mean, second = weight_moments(kind, q, p)
    rule = lambda masks: aggregation_weights(kind, torch.as_tensor(masks), torch.as_tensor(q), p).numpy()
    e_mean, e_second = enumerate_moments(p, rule)
    assert np.allclose(mean, e_mean, atol=1e-14) and np.allclose(second, e_second, atol=1e-14)


@pytest.mark.parametrize("kind, dynamics, q, noise", [
    ("active", "sine", None, "gaussian"),
    ("all", "staircase", None, "gaussian"),
    ("known_p", "stationary", None, "gaussian"),
    ("active", "stationary", [0.1, 0.4, 0.3, 0.2], "gaussian"),  # the non-uniform q branch of the weight moments
    ("all", "sine", None, "sphere"),  # bounded noise with the same covariance sigma^2/d I
])
def test_exact_moments_agree_with_monte_carlo(kind, dynamics, q, noise):
    testbed = {"name": "random_quadratic", "n_clients": 4, "dim": 3, "sigma": 0.5, "seed": 1, "noise": noise}
    cfg = RunConfig(problem=testbed,
                    participation={"name": "bernoulli", "p": [0.9, 0.2, 0.5, 0.7], "dynamics": dynamics},
                    algorithm={"name": "fedavg", "local_steps": 3, "lr": 0.1, "aggregation": kind, "q": q,
                               "server": {"name": "sgd", "lr": 0.8}},
                    rounds=24, replicas=3000, every=8, seed=5)
    exact = fedavg_moments(cfg)
    trace = run(cfg)
    problem = random_quadratic(4, 3, seed=1, sigma=0.5, noise=noise)
    expected = exact.metrics(problem)
    for name in ("server.dist2", "server.gap"):
        lo, hi = trace.ci(name, level=0.999)
        assert np.all((lo[1:] <= expected[name][1:]) & (expected[name][1:] <= hi[1:])), name
    lo, hi = mean_ci(trace.final["server"], level=0.999)
    assert np.all((lo <= exact.mean[-1]) & (exact.mean[-1] <= hi))


def test_mean_limit_example1():
    problem = scalar_quadratic([0.0, 1.0])
    assert fedavg_mean_limit(problem, "all", [0.9, 0.1], 5, 0.05)[0] == pytest.approx(0.1, abs=1e-12)
    assert fedavg_mean_limit(problem, "known_p", [0.9, 0.1], 5, 0.05)[0] == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("change, message", [
    ({"participation": {"name": "markov", "pi": [0.5, 0.5], "lam": [0.3, 0.3]}}, "memoryless"),
    ({"algorithm": {"name": "fedavg", "server": {"name": "adam"}}}, "SGD server"),
])
def test_exact_moments_refuse_what_they_cannot_do(change, message):
    cfg = RunConfig(problem={"name": "scalar_quadratic", "centers": [0, 1]},
                    participation={"name": "bernoulli", "p": [0.5, 0.5]}, algorithm={"name": "fedavg"}, rounds=2)
    with pytest.raises(ValueError, match=message):
        fedavg_moments(cfg.replace(**change))


def test_unbiased_weights_remove_the_bias_and_plain_weights_do_not():
    """Thesis (2.4): the generic scheme converges to the optimum of sum_i pi_i q_i F_i; q = alpha/pi gives x*."""
    from theorylab.kernels.aggregation import unbiased_weights

    problem = random_quadratic(3, 2, seed=5)
    pi = np.array([0.9, 0.5, 0.2])
    for q, target in ((unbiased_weights(problem.alpha, pi), problem.x_star), (np.ones(3), problem.optimum(pi))):
        limit = fedavg_mean_limit(problem, "all", pi, local_steps=1, lr=0.1, q=q)
        assert np.allclose(limit, target, atol=1e-12)


def test_local_drift_matches_a_step_by_step_propagation():
    q = random_quadratic(n_clients=3, dim=4, seed=7, sigma=0.8)
    x0, lr, steps = np.linspace(-1.0, 1.0, 4), 0.07, 6
    mean, noise = local_drift(q, x0, lr, steps)
    for i in range(3):
        A, B = q.A[i], np.eye(4) - lr * q.A[i]
        g, e, D = A @ (x0 - q.u[i]), np.zeros(4), np.zeros(4)
        maps = [np.zeros((4, 4)) for _ in range(steps)]  # d D / d eps_j, accumulated step by step
        carry = [np.zeros((4, 4)) for _ in range(steps)]  # d e_r / d eps_j
        for r in range(steps):
            D = D + A @ e
            maps = [M + A @ C for M, C in zip(maps, carry)]
            e = B @ e - lr * g
            carry = [B @ C - (lr * np.eye(4) if j == r else 0) for j, C in enumerate(carry)]
        assert np.allclose(mean[i], D, atol=1e-14)
        assert noise[i] == pytest.approx(q.sigma2 / 4 * sum((M ** 2).sum() for M in maps), rel=1e-12)


def test_exact_engines_take_any_quadratic_model_and_name_what_a_problem_lacks():
    """The engines read a protocol, not a testbed class: a bare namespace with the quadratic's members works
    (compared against the testbed object it copies), and another testbed is refused by the members it lacks."""
    from types import SimpleNamespace

    from theorylab.exact.local_drift import local_drift
    from theorylab.exact.models import QuadraticModel, require
    from theorylab.registry import build

    problem = build("testbed", {"name": "random_quadratic", "n_clients": 3, "dim": 2, "seed": 4, "sigma": 0.3})
    bare = SimpleNamespace(**{name: getattr(problem, name) for name in
                              ("n_clients", "dim", "A", "u", "alpha", "sigma2", "x_init", "x_star", "hessian_mean")})
    for a, b in zip(local_drift(bare, np.ones(2), 0.1, 4), local_drift(problem, np.ones(2), 0.1, 4)):
        np.testing.assert_array_equal(a, b)
    gaussian = build("testbed", {"name": "gaussian_mean", "means": [1.0, 2.0], "sensitivities": [0.1, 0.2]})
    with pytest.raises(ValueError, match="QuadraticModel: GaussianMean lacks A, alpha, hessian_mean, u, x_init, x_star$"):
        require(gaussian, QuadraticModel, "exact moments")
