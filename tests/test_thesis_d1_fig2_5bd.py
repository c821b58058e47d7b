"""Thesis Table D.1 analogue (per-exit gradient variance) and Figs. 2.5b-d stand-in (CA-Fed with cluster-
heterogeneous clients): the closed form against an enumeration of every minibatch and against Monte Carlo, the
network estimate's support, the reduction of 2.5b-d to 2.5a on homogeneous data, and both recipes drawing."""

import itertools

import numpy as np

from theorylab.claims import Context
from theorylab.figures import thesis_fig2_5, thesis_fig2_5bd, thesis_table_d1
from theorylab.registry import build
from theorylab.testbeds.early_exit import THESIS_LIKE, NestedLinear, population
from theorylab.testbeds.early_exit_net import layout

TINY = NestedLinear(blocks=(1, 2), scales=(1.0, 0.7, 1.3), beta=(0.5, -1.0, 0.8), label_noise=0.4, ridge=0.2)


def per_sample_gradients(tb, w, x, y) -> np.ndarray:
    """``(E, n, d)``: g_e(w, z_k) = P_e x_k (w^T P_e x_k - y_k) + mu_0 w, written out."""
    masks = tb.masks()
    return np.stack([(m * x) * ((m * x) @ w - y)[:, None] + tb.ridge * w for m in masks])


def rademacher(tb, n, rng):
    signs = rng.choice([-1.0, 1.0], size=(n, tb.dim + 1))
    x = signs[:, :tb.dim] * np.asarray(tb.scales)
    return x, x @ np.asarray(tb.beta) + tb.label_noise * signs[:, tb.dim]


def test_closed_form_equals_the_enumeration_of_every_minibatch():
    """A 5-sample data set and B = 2 draws with replacement: all 25 minibatches, each of probability 1/25."""
    rng = np.random.Generator(np.random.PCG64(3))
    x, y = rademacher(TINY, 5, rng)
    w = rng.normal(size=TINY.dim)
    grads = per_sample_gradients(TINY, w, x, y)  # (E, n, d)
    full = grads.mean(1)
    batches = np.array([grads[:, list(pair)].mean(1) for pair in itertools.product(range(5), repeat=2)])
    enumerated = ((batches - full) ** 2).mean(0)  # (E, d), per coordinate
    moments = (x.T @ x / 5, x.T @ y / 5, y @ y / 5)
    closed = thesis_table_d1.gradient_variance(TINY, w, 2, moments)
    assert np.allclose(closed, enumerated, rtol=1e-10, atol=1e-13)
    assert np.all(closed[0, 1:] == 0) and np.all(closed.sum(1) > 0)  # exit 1 reaches only block 1


def test_closed_form_matches_monte_carlo_minibatches_of_the_population():
    """E||g_B - grad F_e||^2 at a random w: 20000 minibatches of B = 4 fresh samples, within 4 standard errors."""
    rng = np.random.Generator(np.random.PCG64(7))
    w, batch, draws = rng.normal(size=THESIS_LIKE.dim), 4, 20_000
    q = population(THESIS_LIKE)
    full = np.einsum("eij,j->ei", q.hess, w) - q.lin  # exact population gradient of every exit
    x, y = rademacher(THESIS_LIKE, batch * draws, rng)
    g = per_sample_gradients(THESIS_LIKE, w, x, y).reshape(THESIS_LIKE.n_exits, draws, batch, -1).mean(2)
    sq = ((g - full[:, None]) ** 2).sum(-1)  # (E, draws)
    closed = thesis_table_d1.gradient_variance(THESIS_LIKE, w, batch).sum(1)
    se = sq.std(1, ddof=1) / np.sqrt(draws)
    assert np.all(np.abs(sq.mean(1) - closed) < 4 * se), (sq.mean(1), closed, se)
    assert np.all(np.abs(sq.mean(1) - 1.5 * closed) > 4 * se)  # the test resolves a 50 % error


def test_network_variance_lives_on_each_exits_parameters():
    shapes = layout(64, 32, 10, 3)
    masks = thesis_table_d1.exit_masks(shapes, 3)
    sizes = {name: int(np.prod(shape)) for name, shape in shapes}
    expected = [sum(sizes[f"{k}{b}"] for b in range(e + 1) for k in "Wb") + sizes[f"H{e}"] + sizes[f"c{e}"]
                for e in range(3)]
    assert masks.sum(1).tolist() == expected
    out = thesis_table_d1.network_variance(seed=0, replicas=2, batch=200)
    assert out["own"].shape == out["all"].shape == (2, 3) and np.all(out["own"] > 0)
    # outside its own parameters an exit's gradient is exactly zero, so the all-parameter mean is a rescaling
    assert np.allclose(out["all"] * masks.shape[1], out["own"] * masks.sum(1), rtol=1e-6)


def test_homogeneous_data_reduce_figs_2_5bd_to_2_5a():
    ctx = Context(quick=True, seed=4)
    config = thesis_fig2_5bd.hetero_config(4, 3, 0.0, 0.0, 20, 2)
    assert config == thesis_fig2_5.spatial_config(4, 3, 20, 2)
    reference, homogeneous = thesis_fig2_5.compute(ctx, 3, 2), thesis_fig2_5.record(
        thesis_fig2_5bd.hetero_config(4, 3, 0.0, 0.0, clients_per_cluster=2))
    for key in ("active", "included", "excluded"):
        assert np.array_equal(reference[key], homogeneous[key])
    hetero = thesis_fig2_5.record(thesis_fig2_5bd.hetero_config(4, 3, 1.0, 0.5, clients_per_cluster=2))
    assert np.array_equal(hetero["active"], reference["active"])  # the chains do not see the data
    assert not np.array_equal(hetero["included"], reference["included"])


def test_cluster_structure_and_gaps_of_the_heterogeneous_clients():
    config = thesis_fig2_5bd.hetero_config(0, 1, 1.0, 0.0, 5, 3)
    u, members = np.asarray(config.problem["centers"]), np.asarray(config.participation["clusters"])
    for c in range(10):  # setting (b): homogeneous within a cluster
        assert np.all(u[members == c] == u[members == c][0])
    problem = build("testbed", thesis_fig2_5bd.hetero_config(0, 1, 1.0, 0.5, 5, 3).problem)
    gaps = problem.client_values(problem.x_star) - problem.c  # the testbed's own F_i(x*) - F_i*
    by_cluster = [gaps[members == c].mean() for c in range(10)]
    assert np.allclose(thesis_fig2_5bd.cluster_gaps(thesis_fig2_5bd.hetero_config(0, 1, 1.0, 0.5, 5, 3)), by_cluster)


def test_recipes_draw(tmp_path):
    ctx = Context(quick=True, seed=0)
    d1 = thesis_table_d1.compute(ctx, replicas=2, train_epochs=1)
    assert len(d1["rows"]) == 12 and all(len(mean) == 3 for mean, _ in d1["rows"].values())
    bd = thesis_fig2_5bd.compute(ctx, replicas=2, clients_per_cluster=2, rounds=10)
    assert set(bd["curves"]) == {"CA-Fed", "AdaFed", "Unbiased"} and bd["curves"]["CA-Fed"].shape[0] == 2
    for setting in (bd["homogeneous"], *bd["settings"].values()):  # available-and-excluded implies q_i = 0
        assert np.all(setting["excluded"] <= setting["dropped"] + 1e-12) and np.all(setting["dropped"] >= -1e-12)
    paths = [thesis_table_d1.draw(d1, tmp_path / "d1.png", "t"), thesis_fig2_5bd.draw(bd, tmp_path / "bd.png", "t")]
    assert all(p.exists() and p.stat().st_size > 10_000 for p in paths)
