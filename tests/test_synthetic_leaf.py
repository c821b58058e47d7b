"""Synthetic LEAF testbed: the recipe's shapes and seeding, a gradient step by hand, gradients against finite
differences, the Newton optimum against scipy's L-BFGS and its gradient norm, active-only gradients, bad inputs."""

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from theorylab.testbeds.synthetic_leaf import CLASSES, FEATURES, WIDTH, SyntheticLeaf, generate, synthetic_leaf
from theorylab.config import RunConfig
from theorylab.rng import Streams
from theorylab.runner import run


@pytest.fixture(scope="module")
def leaf():
    return synthetic_leaf(n_clients=4, gamma=0.5, delta=0.5, seed=8)


def _loss(theta, X, Y, ridge):
    """Mean cross-entropy plus ridge, written independently in numpy."""
    z = X @ theta.reshape(CLASSES, WIDTH).T
    z = z - z.max(1, keepdims=True)
    return float(np.mean(np.log(np.exp(z).sum(1)) - z[np.arange(len(Y)), Y]) + 0.5 * ridge * theta @ theta)


def _loss_and_grad(theta, X, Y, ridge):
    z = X @ theta.reshape(CLASSES, WIDTH).T
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    grad = ((p - np.eye(CLASSES)[Y]).T @ X / len(Y)).ravel() + ridge * theta
    return _loss(theta, X, Y, ridge), grad


def test_recipe_shapes_sizes_split_and_seed():
    a, b, c = generate(5, 0.5, 0.5, 7), generate(5, 0.5, 0.5, 7), generate(5, 0.5, 0.5, 8)
    assert all(np.array_equal(x1, x2) and np.array_equal(y1, y2) for (x1, y1), (x2, y2) in zip(a, b))
    assert not np.array_equal(a[0][0][:5], c[0][0][:5])
    assert all(x.shape == (len(y), FEATURES) and len(y) >= 50 and set(y) <= set(range(CLASSES)) for x, y in a)
    p = SyntheticLeaf(5, 0.5, 0.5, 7)
    n = np.array([len(y) for _, y in a])
    np.testing.assert_array_equal(p.n_train, (0.9 * n).astype(int))
    np.testing.assert_array_equal(p.n_train + p.n_test, n)
    np.testing.assert_allclose(p.alpha, p.n_train / p.n_train.sum())
    np.testing.assert_array_equal(p.X[:, -1], 1.0)  # the bias coordinate


def test_gradient_step_by_hand(leaf):
    """One row, one client: (softmax(W x + b) - e_y) x~^T + ridge theta."""
    rng = np.random.default_rng(0)
    theta = rng.normal(size=leaf.dim) * 0.1
    row = 5
    x, y = leaf.X[row], leaf.Y[row]
    z = theta.reshape(CLASSES, WIDTH) @ x
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    expected = (np.outer(p - np.eye(CLASSES)[y], x)).ravel() + leaf.ridge * theta
    one = SyntheticLeaf(4, 0.5, 0.5, 8, batch=1)
    got = one.stochastic_grads(torch.as_tensor(theta).reshape(1, 1, -1).expand(1, 4, -1).clone(),
                               torch.full((1, 4, 1), row))
    np.testing.assert_allclose(got[0, 0].numpy(), expected, rtol=1e-12, atol=1e-14)


def test_minibatch_and_full_gradients_match_finite_differences(leaf):
    rng = np.random.default_rng(1)
    theta = rng.normal(size=leaf.dim) * 0.05
    batch = leaf.sample(Streams(0, 1), 1)[0]  # (1, m, 32) pooled row indices
    rows = batch[0, 2].numpy()
    assert np.all(leaf.owner[rows] == 2)  # client 2 draws only its own rows
    grad = leaf.stochastic_grads(torch.as_tensor(theta).expand(1, 4, -1).clone(), batch)[0, 2].numpy()
    full = leaf.full_gradient(theta)
    value = lambda t: float(leaf.client_values(t) @ leaf.alpha)  # noqa: E731
    for k in rng.choice(leaf.dim, 6, replace=False):
        e = np.zeros(leaf.dim)
        e[k] = 1e-5
        fd = (_loss(theta + e, leaf.X[rows], leaf.Y[rows], leaf.ridge)
              - _loss(theta - e, leaf.X[rows], leaf.Y[rows], leaf.ridge)) / 2e-5
        assert grad[k] == pytest.approx(fd, rel=1e-6, abs=1e-8)
        assert full[k] == pytest.approx((value(theta + e) - value(theta - e)) / 2e-5, rel=1e-6, abs=1e-8)


def test_optimum_against_lbfgs_and_its_gradient_norm(leaf):
    """Strong convexity certifies the Newton optimum: F(x*) - min F <= ||grad F(x*)||^2 / (2 ridge); a generic solver
    (L-BFGS, a few hundred iterations) never gets below it and agrees to its own accuracy."""
    x_star, f_star = leaf.optimum()
    gnorm = np.linalg.norm(leaf.full_gradient(x_star))
    assert gnorm <= 1e-10 and gnorm ** 2 / (2 * leaf.ridge) <= 1e-18
    ref = minimize(_loss_and_grad, np.zeros(leaf.dim), args=(leaf.X, leaf.Y, leaf.ridge), jac=True,
                   method="L-BFGS-B", options={"maxiter": 300})  # alpha_i = n_i / n: F is the pooled mean
    assert f_star <= ref.fun + 1e-14 and f_star == pytest.approx(ref.fun, abs=1e-5)
    assert float(leaf.client_values(x_star) @ leaf.alpha) == pytest.approx(f_star, abs=1e-12)
    own = leaf.client_values(x_star)
    assert np.all(leaf.c <= own) and leaf.optimum_value(leaf.alpha * 3.0) == pytest.approx(f_star, abs=1e-12)
    one_hot = np.eye(4)[1]
    assert leaf.client_values(leaf.optimum(one_hot)[0])[1] == pytest.approx(leaf.c[1], abs=1e-12)


def test_inactive_rows_are_zero_and_active_rows_unchanged(leaf):
    x = torch.randn(2, 4, leaf.dim, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 0.1
    batch = leaf.sample(Streams(1, 2), 1)[0]
    active = torch.tensor([[True, False, True, False], [False, False, True, True]])
    full, part = leaf.stochastic_grads(x, batch), leaf.stochastic_grads(x, batch, active)
    assert torch.equal(part[active], full[active]) and torch.all(part[~active] == 0)


def test_runs_under_cafed_and_metrics():
    pi, lam = [0.9, 0.9, 0.1, 0.1], [0.9, 0.0, 0.9, 0.0]
    trace = run(RunConfig(problem={"name": "synthetic_leaf", "n_clients": 4, "seed": 8},
                          participation={"name": "markov", "pi": pi, "lam": lam},
                          algorithm={"name": "cafed", "pi": pi, "lam": lam, "local_steps": 2, "lr": 0.05},
                          rounds=6, replicas=2, seed=0, every=3))
    assert set(trace.metrics) == {"server.loss", "server.gap", "server.dist2", "server.test_acc"}
    assert np.all(trace.metrics["server.gap"] >= 0) and np.all((trace.metrics["server.test_acc"] >= 0)
                                                                & (trace.metrics["server.test_acc"] <= 1))
    assert trace.metrics["server.gap"][:, -1].max() < trace.metrics["server.gap"][:, 0].min()


@pytest.mark.parametrize("kwargs, name", [({"n_clients": 0}, "n_clients"), ({"gamma": -0.1}, "gamma"),
                                          ({"delta": float("nan")}, "delta"), ({"ridge": 0.0}, "ridge"),
                                          ({"batch": 2.5}, "batch")])
def test_bad_inputs(kwargs, name):
    with pytest.raises(ValueError, match=name):
        SyntheticLeaf(**{"n_clients": 2, **kwargs})


def test_bad_mixture_weights(leaf):
    with pytest.raises(ValueError, match="p must be 4"):
        leaf.optimum([1.0, 0.0])


def test_figure_setting_availability_classes():
    from theorylab.figures.thesis_fig2_1 import availability

    pi, lam = availability(100)
    assert len(pi) == len(lam) == 100 and pi.count(0.9) == pi.count(0.1) == 50
    assert lam[:25] == [0.9] * 25 and lam[50:75] == [0.9] * 25 and max(map(abs, lam[25:50] + lam[75:])) < 0.05
    with pytest.raises(ValueError, match="n_clients"):
        availability(10)
