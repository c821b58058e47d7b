import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from theorylab.testbeds.quadratic import Quadratic, random_quadratic, scalar_quadratic
from theorylab.rng import Streams


@pytest.fixture
def problem():
    return random_quadratic(5, 3, seed=1, mu=0.3, L=2.0, sigma=0.7, weights=[1, 2, 3, 4, 5])


def test_optimum_matches_numerical_minimisation(problem):
    res = minimize(lambda x: problem.value(x), np.zeros(3), method="BFGS", options={"gtol": 1e-12})
    assert np.allclose(problem.x_star, res.x, atol=1e-6)
    assert problem.f_star == pytest.approx(res.fun, abs=1e-10)


def test_biased_optimum_zeroes_the_reweighted_gradient(problem):
    q = np.array([0.5, 0.1, 0.1, 0.2, 0.1])
    x_q = problem.optimum(q)
    grad = np.einsum("m,mij,mj->i", q, problem.A, x_q - problem.u)
    assert np.allclose(grad, 0, atol=1e-12)


def test_smoothness_and_strong_convexity_constants(problem):
    eig = np.linalg.eigvalsh(problem.A)
    assert problem.L == pytest.approx(eig.max()) and problem.mu == pytest.approx(eig.min())
    assert 0.3 <= problem.mu <= problem.L <= 2.0


def test_client_gradients_match_autograd(problem):
    x = torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True)
    A, u = torch.as_tensor(problem.A), torch.as_tensor(problem.u)
    values = 0.5 * torch.einsum("rmi,mij,rmj->", x - u, A, x - u)
    (auto,) = torch.autograd.grad(values, x)
    assert torch.allclose(problem.client_grads(x.detach()), auto)


def test_metrics_match_independent_evaluation(problem):
    x = torch.randn(4, 3, dtype=torch.float64)
    m = problem.metrics(x)
    xs = x.numpy()
    assert np.allclose(m["dist2"].numpy(), ((xs - problem.x_star) ** 2).sum(1))
    assert np.allclose(m["gap"].numpy(), problem.value(xs) - problem.f_star)
    full_grad = np.einsum("m,mij,rmj->ri", problem.alpha, problem.A, xs[:, None, :] - problem.u)
    assert np.allclose(m["gradnorm2"].numpy(), (full_grad ** 2).sum(1))


def test_diagonal_fast_path_equals_general_path():
    a = np.array([[1.0, 2.0], [0.5, 3.0]])
    u = np.array([[1.0, -1.0], [0.0, 2.0]])
    diag = Quadratic(np.stack([np.diag(r) for r in a]), u)
    dense = Quadratic(np.stack([np.diag(r) for r in a]) + 0 * np.eye(2), u)
    dense._diagonal = False
    dense._A = torch.as_tensor(dense.A)
    x = torch.randn(3, 2, 2, dtype=torch.float64)
    assert diag._diagonal and torch.allclose(diag.client_grads(x), dense.client_grads(x))


def test_sphere_noise_has_norm_sigma():
    p = random_quadratic(4, 6, seed=0, sigma=0.3, noise="sphere")
    noise = torch.stack(list(p.sample(Streams(0, 3), 5)))
    assert torch.allclose(torch.linalg.vector_norm(noise, dim=-1), torch.tensor(0.3, dtype=torch.float64))


def test_sphere_noise_is_centred_with_covariance_sigma2_over_d():
    """Uniform on the sphere of radius sigma in R^d: E z = 0, E z z^T = sigma^2/d I (the law the exact moment
    engine assumes).  Tolerances are 6 standard errors from the exact fourth moments
    E z_i^4 = 3 sigma^4/(d(d+2)), E z_i^2 z_j^2 = sigma^4/(d(d+2))."""
    sigma, d = 0.3, 4
    p = random_quadratic(50, d, seed=0, sigma=sigma, noise="sphere")
    z = torch.stack(list(p.sample(Streams(1, 200), 5))).reshape(-1, d).numpy()  # 50,000 draws
    n, s4 = len(z), sigma ** 4 / (d * (d + 2))
    assert np.all(np.abs(z.mean(0)) < 6 * np.sqrt(sigma ** 2 / d / n))
    cov = z.T @ z / n
    se = np.where(np.eye(d, dtype=bool), np.sqrt((3 * s4 - (sigma ** 2 / d) ** 2) / n), np.sqrt(s4 / n))
    assert np.all(np.abs(cov - sigma ** 2 / d * np.eye(d)) < 6 * se)


def test_gaussian_noise_second_moment_is_sigma2():
    p = random_quadratic(50, 4, seed=0, sigma=0.5)
    noise = torch.stack(list(p.sample(Streams(0, 200), 4)))  # 4 x 200 x 50 samples of a 4-vector
    sq = (noise ** 2).sum(-1).flatten()
    se = sq.std().item() / sq.numel() ** 0.5
    assert abs(sq.mean().item() - 0.25) < 5 * se
    assert abs(noise.mean().item()) < 5 * noise.std().item() / noise.numel() ** 0.5


def test_zero_sigma_draws_nothing():
    assert list(scalar_quadratic([0, 1]).sample(Streams(0, 2), 3)) == [None, None, None]


@pytest.mark.parametrize("kwargs, message", [
    (dict(hessians=[[[1.0]], [[-1.0]]], centers=[[0.0], [1.0]]), "positive definite"),
    (dict(hessians=[[[1.0]]], centers=[[0.0], [1.0]]), "shape"),
    (dict(hessians=[[[1.0, 2.0], [0.0, 1.0]]], centers=[[0.0, 0.0]]), "symmetric"),
    (dict(hessians=[[[1.0]]], centers=[[0.0]], sigma=-1.0), "sigma"),
    (dict(hessians=[[[1.0]]], centers=[[0.0]], noise="laplace"), "noise"),
    (dict(hessians=[[[1.0]]], centers=[[0.0]], weights=[-1.0]), "weights"),
])
def test_bad_inputs_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Quadratic(**kwargs)


def test_diagonal_quadratic_is_the_quadratic_with_diagonal_hessians():
    # the same problem from m x d curvatures as from the m x d x d matrices diag(a_i): the same run, bit for bit
    from theorylab.config import RunConfig
    from theorylab.runner import run

    rng = np.random.default_rng(3)
    a, u = rng.uniform(1.0, 4.0, (5, 3)), rng.normal(size=(5, 3))
    full = {"name": "quadratic", "hessians": np.einsum("mi,ij->mij", a, np.eye(3)).tolist(), "centers": u.tolist(),
            "sigma": 0.3}
    diagonal = {"name": "diagonal_quadratic", "curvatures": a.tolist(), "centers": u.tolist(), "sigma": 0.3}
    traces = [run(RunConfig(problem=p, participation={"name": "bernoulli", "p": [0.6] * 5},
                            algorithm={"name": "fedavg", "local_steps": 2, "lr": 0.05}, rounds=6, replicas=2, every=2))
              for p in (full, diagonal)]
    assert all(np.array_equal(traces[0].metrics[k], traces[1].metrics[k]) for k in traces[0].metrics)
    with pytest.raises(ValueError, match="curvatures must have 2 dimensions"):
        run(RunConfig(problem={**diagonal, "curvatures": [1.0, 2.0]}, participation={"name": "bernoulli", "p": [1.0] * 5},
                      algorithm={"name": "fedavg"}, rounds=1))
