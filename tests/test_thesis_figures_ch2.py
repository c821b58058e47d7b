"""Thesis Ch. 2 figure recipes (Figs. 2.1, 2.1d, 2.4a, 2.5a): shapes, values checked independently of the engine's
counters, and that the recipes draw."""

import numpy as np
import pytest

from theorylab.figures import thesis_fig2_1, thesis_fig2_1d, thesis_fig2_4, thesis_fig2_5
from theorylab.claims import Context
from theorylab.registry import build
from theorylab.participation import estimators as est
from theorylab.participation.markov import markov
from theorylab.rng import Streams


def test_row_losses_average_to_the_client_losses():
    """Per client, the mean of the row cross-entropies plus the ridge term is the testbed's F_i (its own code)."""
    spec = thesis_fig2_1.leaf_problem(8)
    problem = build("testbed", spec)
    theta = np.random.Generator(np.random.PCG64(5)).normal(scale=0.1, size=problem.dim)
    rows = thesis_fig2_1.row_losses(problem, theta)
    by_client = np.array([rows[problem.owner == i].mean() for i in range(8)]) + 0.5 * problem.ridge * theta @ theta
    assert np.allclose(by_client, problem.client_values(theta), rtol=1e-10)
    assert thesis_fig2_1.minibatch_noise(spec) > 0


def test_cafed_modes_differ_only_in_the_minimum_estimate():
    problem = thesis_fig2_1.leaf_problem(8)
    oracle, running = (thesis_fig2_1.methods(problem, 10, others=(), mode=m)["CA-Fed"]
                       for m in thesis_fig2_1.CAFED_MODES)
    assert oracle["f_star"] == "oracle" and "loss_noise" not in oracle
    assert running["f_star"] == "running_min" and running["loss_noise"] == thesis_fig2_1.minibatch_noise(problem)
    assert {k: v for k, v in oracle.items() if k != "f_star"} == \
        {k: v for k, v in running.items() if k not in ("f_star", "loss_noise")}
    with pytest.raises(ValueError, match="mode"):
        thesis_fig2_1.methods(problem, 10, mode="exact")


def test_estimator_errors_match_counts_by_hand():
    """pi_hat = (c + 1)/(t + 2) and lambda_hat from conditional transition frequencies, recounted in numpy."""
    ctx, checkpoints, n = Context(quick=True, seed=3), (2, 5, 9), 8
    data = thesis_fig2_4.compute(ctx, replicas=3, checkpoints=checkpoints, n_clients=n)
    assert data["pi"].shape == data["lam"].shape == (3, 3) and list(data["t"]) == list(checkpoints)
    pi, lam = map(np.asarray, thesis_fig2_4.availability(n))
    masks = np.stack([m.numpy() for _, m in est.observe(markov(pi, lam), 9, Streams(3, 3))]).astype(float)
    for k, t in enumerate(checkpoints):
        a = masks[:t]
        assert np.allclose(np.abs((a.sum(0) + 1) / (t + 2) - pi).mean(1), data["pi"][:, k], atol=1e-12)
        prev, nxt = a[:-1], a[1:]
        p11 = ((prev * nxt).sum(0) + 1) / (prev.sum(0) + 2)
        p00 = (((1 - prev) * (1 - nxt)).sum(0) + 1) / ((1 - prev).sum(0) + 2)
        assert np.allclose(np.abs(p00 + p11 - 1 - lam).mean(1), data["lam"][:, k], atol=1e-12)
    with pytest.raises(ValueError, match="checkpoints"):
        thesis_fig2_4.compute(ctx, replicas=2, checkpoints=(5, 3))


def test_spatial_maps_include_only_active_clients():
    data = thesis_fig2_5.compute(Context(quick=True, seed=1), replicas=3, clients_per_cluster=2)
    active, included, members = data["active"], data["included"], data["clusters"]
    assert active.shape == included.shape == (thesis_fig2_5.ROUNDS, 20) and data["excluded"].shape == (3, 20)
    assert not np.any(included & ~active)  # an included client is active
    for c in range(10):  # clients of a cluster share one chain
        assert np.all(active[:, members == c] == active[:, members == c][:, :1])
    assert np.allclose(data["excluded"][0], (active & ~included).mean(0))
    assert np.all((data["excluded"] >= 0) & (data["excluded"] <= 1))


def test_cumulative_weights_are_unbiased_when_no_client_is_dropped():
    """kappa2 -> infinity forbids every drop, so q^(t) = alpha / pi in every round and its time average too."""
    data = thesis_fig2_1d.compute(Context(quick=True, seed=0), rounds=4, kappa2=1e9)
    assert data["q_mean"].shape == (8, 20) and np.bincount(data["classes"]).tolist() == [5, 5, 5, 5]
    assert np.allclose(data["q_mean"], data["unbiased"], rtol=1e-12)
    dropping = thesis_fig2_1d.compute(Context(quick=True, seed=0), rounds=4, kappa2=0.0)["q_mean"]
    assert np.all(dropping <= data["unbiased"] * (1 + 1e-12)) and np.any(dropping < data["unbiased"] * 0.99)


def test_recipes_draw(tmp_path):
    ctx = Context(quick=True, seed=0)
    paths = [thesis_fig2_4.draw(thesis_fig2_4.compute(ctx, 3, (10, 100)), tmp_path / "a.png", "t"),
             thesis_fig2_5.draw(thesis_fig2_5.compute(ctx, 2, 2), tmp_path / "b.png", "t"),
             thesis_fig2_1d.draw(thesis_fig2_1d.compute(ctx, rounds=3), tmp_path / "c.png", "t")]
    assert all(p.exists() and p.stat().st_size > 10_000 for p in paths)
