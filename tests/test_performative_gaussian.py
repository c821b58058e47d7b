"""Gaussian-mean testbed: closed forms against independent numerics, the authors' generator, exact constants."""

import numpy as np
import pytest
import torch
from scipy.optimize import minimize_scalar

from theorylab.testbeds.gaussian_mean import gaussian_mean, gaussian_mean_paper, paper_parameters
from theorylab.rng import Streams

MEANS, EPS, P = [2.0, -1.0, 4.0], [0.3, 1.3, -0.4], [0.2, 0.5, 0.3]


@pytest.mark.parametrize("loss", ["squared", "linear"])
def test_ps_is_the_fixed_point_and_po_the_minimiser(loss):
    g = gaussian_mean(MEANS, [0.1, 0.3, 0.2], P, sigma=0.5, loss=loss)
    theta = 0.0
    for _ in range(200):
        theta = float(g.phi(theta))
    assert theta == pytest.approx(g.theta_ps, abs=1e-12)
    res = minimize_scalar(lambda th: float(g.performative_risk(th)), bracket=(-10, 10), tol=1e-12)
    assert res.x == pytest.approx(g.theta_po, abs=1e-6)
    # Phi is the minimiser of the decoupled risk f(.; theta~)
    for deployed in (-3.0, 5.0):
        res = minimize_scalar(lambda th: float(g.decoupled_risk(th, deployed)), bracket=(-50, 50), tol=1e-12)
        assert res.x == pytest.approx(float(g.phi(deployed)), abs=1e-6)


def test_decoupled_risk_matches_monte_carlo():
    g = gaussian_mean(MEANS, EPS, P, sigma=0.7)
    rng = np.random.Generator(np.random.PCG64(0))
    theta, deployed, n = 1.5, -0.5, 400_000
    z = np.asarray(g.m) + np.asarray(g.eps) * deployed + 0.7 * rng.standard_normal((n, 3))
    mc = (0.5 * (theta - z) ** 2).mean(0) @ g.p
    assert float(g.decoupled_risk(theta, deployed)) == pytest.approx(mc, rel=3e-3)


def test_stochastic_gradient_is_unbiased_at_each_local_model():
    g = gaussian_mean(MEANS, EPS, P, sigma=2.0)
    streams = Streams(1, 4000)
    x = torch.tensor([[0.5], [-1.0], [3.0]], dtype=torch.float64).expand(4000, 3, 1)
    grads = g.stochastic_grads(x, g.sample(streams, 1)[0])[:, :, 0].numpy()
    exact = (1 - np.asarray(EPS)) * np.array([0.5, -1.0, 3.0]) - np.asarray(MEANS)
    assert np.all(np.abs(grads.mean(0) - exact) < 5 * 2.0 / np.sqrt(4000))
    assert np.allclose(grads.std(0), 2.0, rtol=0.05)


def test_varsigma_is_the_smallest_valid_constant():
    g = gaussian_mean(MEANS, EPS, P)
    theta = g.theta_ps + np.r_[-np.logspace(-3, 7, 400), np.logspace(-3, 7, 400)]
    diff = g.client_gradients(theta) - (g.client_gradients(theta) @ g.p)[:, None]
    ratio = (diff ** 2 / (1 + (theta - g.theta_ps) ** 2)[:, None]).max()
    assert ratio <= g.varsigma2 * (1 + 1e-12)
    assert ratio >= g.varsigma2 * (1 - 1e-6)  # attained asymptotically or at the Cauchy-Schwarz point


def test_example_2_7_gradients():
    g = gaussian_mean([0.0, 0.0], [0.5, -0.5], [0.5, 0.5])
    assert np.allclose(g.client_gradients(2.0), [1.0, 3.0]) and g.client_gradients(2.0) @ g.p == pytest.approx(2.0)
    assert g.varsigma2 == pytest.approx(0.25) and g.theta_ps == 0.0


@pytest.mark.parametrize("weights, variance", [("random", "unweighted"), ("uniform", "unweighted"), ("random", "weighted")])
def test_generator_moments(weights, variance):
    m, eps, p = paper_parameters(25, 0.1, 0.6, weights, 0, variance)
    assert p.sum() == pytest.approx(1.0) and p @ eps == pytest.approx(0.9) and p @ m == pytest.approx(10.0)
    var = (lambda x: np.var(x)) if variance == "unweighted" else (lambda x: p @ (x - p @ x) ** 2)
    assert var(eps) == pytest.approx(0.1) and var(m) == pytest.approx(0.6)


def test_generator_reproduces_the_digest():
    """Digest 003 §4.1.3 / §4.1.4 values (authors' generator, seed 0)."""
    assert gaussian_mean_paper(weights="uniform").theta_po == pytest.approx(8.7195, abs=5e-5)
    assert gaussian_mean_paper(weights="random").theta_po == pytest.approx(8.8494, abs=5e-5)
    wide = gaussian_mean_paper(eps_var=0.6, mu_var=0.6, weights="random")
    assert wide.eps_bar_w1 == pytest.approx(1.020, abs=5e-4) and wide.theta_ps == pytest.approx(100.0)
    assert gaussian_mean_paper().varsigma2 == pytest.approx(3820, abs=0.5)


def test_metrics_and_constants():
    g = gaussian_mean(MEANS, EPS, P, sigma=0.3)
    x = torch.tensor([[g.theta_ps], [g.theta_po]], dtype=torch.float64)
    out = g.metrics(x)
    assert out["dist2"][0].item() == pytest.approx(0.0, abs=1e-20)
    assert np.allclose(out["risk"].numpy(), g.performative_risk(np.array([g.theta_ps, g.theta_po])))
    assert g.sigma2 == pytest.approx(0.09) and np.isinf(g.G2) and np.isinf(g.lipschitz_z(1.0))
    assert gaussian_mean(MEANS, EPS, P, loss="linear").lipschitz_z(-2.0) == 2.0
    assert g.contraction_factor == pytest.approx(abs(np.dot(P, EPS)))


@pytest.mark.parametrize("kwargs, message", [
    (dict(means=[1.0, 2.0], sensitivities=[0.1]), "one entry per client"),
    (dict(means=[1.0], sensitivities=[0.1], sigma=-1.0), "sigma"),
    (dict(means=[1.0], sensitivities=[0.1], loss="cubic"), "loss"),
    (dict(means=[1.0], sensitivities=[0.1], weights=[-1.0]), "weights"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gaussian_mean(**kwargs)


def test_no_ps_at_eps_one_and_no_po_when_pr_is_concave():
    with pytest.raises(ValueError, match="eps_bar = 1"):
        _ = gaussian_mean([1.0, 3.0], [0.9, 1.1]).theta_ps
    with pytest.raises(ValueError, match="not strictly convex"):
        _ = gaussian_mean([1.0], [0.6], loss="linear").theta_po
    assert gaussian_mean([1.0, 3.0], [1.0, 1.2]).theta_ps == pytest.approx(2.0 / (1 - 1.1))  # exists, repels
