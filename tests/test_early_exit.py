"""The nested linear early-exit testbed (theorylab.testbeds.early_exit): exact moments, minimisers, gaps, the loss bound and
the trust-region helpers, against independent computations (digest 001 ch4-6 §3.5)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from theorylab.testbeds.early_exit import (THESIS_LIKE, ExitQuadratic, NestedLinear, ball_minimum, ball_sup_abs, combine,
                                 exit_quadratics, layer_sizes, loss_bound, minimiser, optimum_gap, population,
                                 sample_moments, smoothness, value)
from theorylab.cis.rates import SEVEN_NODE
from theorylab.rng import Streams


def _data(seed=0):
    streams = Streams(seed, 1)
    sizes = np.array([3, 5])
    signs = np.where(streams.uniform("data", (8, THESIS_LIKE.dim + 1)).numpy()[0] < 0.5, -1.0, 1.0)
    return sizes, signs


def test_sample_moments_match_a_direct_computation():
    sizes, signs = _data()
    x = signs[:, :-1] * np.asarray(THESIS_LIKE.scales)
    y = x @ np.asarray(THESIS_LIKE.beta) + THESIS_LIKE.label_noise * signs[:, -1]
    sxx, sxy, syy = (m[0] for m in sample_moments(THESIS_LIKE, sizes, Streams(0, 1)))
    np.testing.assert_allclose(sxx[1], x[3:].T @ x[3:] / 5, atol=1e-12)
    np.testing.assert_allclose(sxy[0], x[:3].T @ y[:3] / 3, atol=1e-12)
    np.testing.assert_allclose(syy[1], np.mean(y[3:] ** 2), atol=1e-12)
    np.testing.assert_allclose(np.diagonal(sxx, axis1=-2, axis2=-1), np.broadcast_to(np.square(THESIS_LIKE.scales),
                                                                                     (2, 6)))  # Rademacher: exact


def test_exit_losses_equal_the_mean_squared_error_plus_ridge():
    sizes, signs = _data()
    x = signs[:3, :-1] * np.asarray(THESIS_LIKE.scales)
    y = x @ np.asarray(THESIS_LIKE.beta) + THESIS_LIKE.label_noise * signs[:3, -1]
    q = exit_quadratics(THESIS_LIKE, *(m[0, 0] for m in sample_moments(THESIS_LIKE, sizes, Streams(0, 1))))
    w = np.linspace(-1, 1, 6)
    for e in range(3):
        mask = THESIS_LIKE.masks()[e]
        direct = 0.5 * np.mean((y - x @ (mask * w)) ** 2) + 0.5 * THESIS_LIKE.ridge * w @ w
        sub = ExitQuadratic(q.hess[e], q.lin[e], q.const[e])
        assert value(sub, w) == pytest.approx(direct, rel=1e-12)
        assert value(sub, w) - value(sub, minimiser(sub)) == pytest.approx(optimum_gap(sub, w), rel=1e-9)


def test_population_minimiser_and_smoothness():
    pop = population(THESIS_LIKE)
    full = ExitQuadratic(pop.hess[2], pop.lin[2], pop.const[2])
    s2 = np.square(THESIS_LIKE.scales)
    np.testing.assert_allclose(minimiser(full), s2 * np.asarray(THESIS_LIKE.beta) / (s2 + THESIS_LIKE.ridge))
    L, mu = smoothness(pop)
    assert L == pytest.approx(1.0 + THESIS_LIKE.ridge) and mu == pytest.approx(THESIS_LIKE.ridge)
    mix = combine(pop, [0.5, 0.25, 0.25])
    np.testing.assert_allclose(mix.hess, 0.5 * pop.hess[0] + 0.25 * pop.hess[1] + 0.25 * pop.hess[2])


def test_loss_bound_dominates_losses_on_the_ball():
    rng = np.random.default_rng(0)
    m = loss_bound(THESIS_LIKE, 2.0)
    signs = rng.choice([-1.0, 1.0], size=(2000, 7))
    x = signs[:, :6] * np.asarray(THESIS_LIKE.scales)
    y = x @ np.asarray(THESIS_LIKE.beta) + THESIS_LIKE.label_noise * signs[:, 6]
    w = rng.normal(size=(2000, 6))
    w *= 2.0 / np.linalg.norm(w, axis=1, keepdims=True)
    losses = 0.5 * (y - np.sum(w * x, 1)) ** 2 + 0.5 * THESIS_LIKE.ridge * 4.0
    assert losses.max() <= m


@pytest.mark.parametrize("case", ["indefinite", "interior", "singular", "boundary"])
def test_ball_minimum_matches_a_constrained_optimiser(case):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 4))
    hess = {"indefinite": a + a.T, "interior": a @ a.T + np.eye(4), "singular": np.diag([0.0, 0.0, 1.0, 2.0]),
            "boundary": a @ a.T}[case]
    lin = {"singular": np.array([0.0, 0.0, 0.3, 0.2]), "interior": 0.1 * rng.normal(size=4)}.get(case,
                                                                                                 rng.normal(size=4))
    q = ExitQuadratic(hess, lin, np.array(0.5))
    f = lambda w: 0.5 * w @ hess @ w - lin @ w + 0.5  # noqa: E731
    best = min(minimize(f, rng.normal(size=4), constraints=[{"type": "ineq", "fun": lambda w: 1.0 - w @ w}]).fun
               for _ in range(10))
    assert ball_minimum(q, 1.0) == pytest.approx(best, abs=1e-6)
    neg = ExitQuadratic(-hess, -lin, np.array(-0.5))
    assert ball_sup_abs(q, 1.0) == pytest.approx(max(-best, -ball_minimum(neg, 1.0)))


def test_layer_sizes_and_bad_inputs():
    np.testing.assert_array_equal(layer_sizes(SEVEN_NODE[1], (1 / 3, 1 / 3, 1 / 3), 1200),
                                  [100] * 4 + [200] * 2 + [400])
    with pytest.raises(ValueError, match="partition must hold 3 shares"):
        layer_sizes(SEVEN_NODE[1], (0.5, 0.5), 100)
    with pytest.raises(ValueError, match="ridge > 0"):
        NestedLinear((1, 1), (1.0, 1.0), (1.0, 1.0), ridge=0.0)
    with pytest.raises(ValueError, match="scales must hold 2 values > 0"):
        NestedLinear((1, 1), (1.0,), (1.0, 1.0))
    with pytest.raises(ValueError, match="sizes must hold one integer >= 1"):
        sample_moments(THESIS_LIKE, [0, 2], Streams(0, 1))
    with pytest.raises(ValueError, match="radius must be > 0"):
        loss_bound(THESIS_LIKE, 0.0)


def test_early_exit_mlp_step_matches_plain_autograd():
    import torch

    from theorylab.testbeds.early_exit_net import exit_logits, init_params, layout, train_fedcis, unflatten

    shapes = layout(4, 3, 2, 2)
    assert [s for _, s in shapes] == [(4, 3), (3,), (3, 2), (2,), (3, 3), (3,), (3, 2), (2,)]
    x = torch.linspace(-1, 1, 40).reshape(10, 4)
    y = torch.tensor([0, 1] * 5)
    p, alpha = np.array([[0.0, 1.0]]), np.array([[0.0, 1.0]])
    theta0 = init_params(shapes, Streams(3, 2))
    theta = train_fedcis(x, y, [10], p, alpha, 1, 1, 4, lambda t: 0.5, Streams(3, 2), shapes, momentum=0.0,
                         weight_decay=0.0)
    # redo replica 1's step by hand: the same batch indices, plain autograd through exit 2
    streams = Streams(3, 2)
    order = torch.argsort(streams.uniform("data", (10,)), dim=1)[1]
    init_params(shapes, streams)
    streams.uniform("participation", (1,))
    index = order[(streams.uniform("gradient", (1, 1, 4))[1, 0, 0] * 10).long()]
    w = theta0[1:2].clone().requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(exit_logits(w, x[index][None], shapes)[1][0], y[index])
    loss.backward()
    torch.testing.assert_close(theta[1], (theta0[1] - 0.5 * w.grad[0]), rtol=1e-5, atol=1e-6)
    assert unflatten(theta, shapes)["W1"].shape == (2, 3, 3)
    single = train_fedcis(x, y, [10], p, alpha, 1, 1, 4, lambda t: 0.5, Streams(3, 1), shapes)
    torch.testing.assert_close(single[0], train_fedcis(x, y, [10], p, alpha, 1, 1, 4, lambda t: 0.5,
                                                       Streams(3, 2), shapes)[0])
    with pytest.raises(ValueError, match="node_sizes must be >= 1"):
        train_fedcis(x, y, [11], p, alpha, 1, 1, 4, lambda t: 0.5, Streams(3, 1), shapes)


def test_relabelled_hidden_units_leave_every_exit_unchanged():
    """The helpers of thesis.ch5.assumptions: relabelling block 1's units is an exact symmetry of all exits, and the
    direction on the later blocks leaves exit 1's loss (and only its ridge) unchanged."""
    import torch

    from theorylab.testbeds.early_exit_net import exit_logits, init_params, layout
    from theorylab.validations.thesis.fedcis.ablation import exit1_loss, later_blocks, relabel

    shapes = layout(4, 3, 2, 3)
    theta = init_params(shapes, Streams(5, 1))[0].double()
    x, y = torch.linspace(-1, 1, 40).reshape(10, 4).double(), torch.tensor([0, 1] * 5)
    twin = relabel(theta, shapes, torch.tensor([2, 0, 1]))
    assert float((twin - theta).norm()) > 0 and float(twin.norm()) == pytest.approx(float(theta.norm()))
    for a, b in zip(exit_logits(theta[None], x[None], shapes), exit_logits(twin[None], x[None], shapes)):
        torch.testing.assert_close(a, b)
    v = later_blocks(theta, shapes)
    assert float(v.norm()) == pytest.approx(1.0)
    data = (x, y)
    assert exit1_loss(theta + v, data, shapes, 0.0) == pytest.approx(exit1_loss(theta, data, shapes, 0.0), abs=1e-14)
    second = (exit1_loss(theta + v, data, shapes, 0.1) + exit1_loss(theta - v, data, shapes, 0.1)
              - 2 * exit1_loss(theta, data, shapes, 0.1))
    assert second == pytest.approx(0.1)  # the ridge's curvature along a unit direction
