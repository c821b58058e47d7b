"""The afga kernel (seed 002 Alg. 1-2; digest 002 §1.3-1.6, §5 V3-V6): two rounds by hand, the numpy replay, the
reductions, the (a) sub-ring and bad inputs."""

import numpy as np
import pytest
import torch

from theorylab.figures.afga_sweeps import fedamsgrad, quadratic
from theorylab.config import RunConfig
from theorylab.kernels.afga import reporting_ring
from theorylab.kernels.algorithm import Round
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.runner import run
from theorylab.validations.afga.paths import states
from theorylab.validations.afga.replay import replay

W2 = [[2 / 3, 1 / 3], [1 / 3, 2 / 3]]
SERVER = fedamsgrad(0.1, 1e-2)


def test_two_rounds_by_hand():
    """N = 2 scalar clients F_i = (x - u_i)^2 / 2, u = (0, 1), one reports and computes (no re-sampling), W = W2."""
    problem = build("testbed", {"name": "scalar_quadratic", "centers": [0.0, 1.0], "x0": 0.5})
    process = build("participation", {"name": "uniform_k", "n_clients": 2, "k": 1})
    algo = build("algorithm", {"name": "afga", "local_steps": 2, "lr": 0.5, "topology": W2, "resample": False,
                               "server": SERVER})
    streams = Streams(3, 1)
    state, pstate = algo.init(problem, problem.initial_point(1, streams)), process.init(1, streams)
    x, m, v, vhat = 0.5, 0.0, 0.0, 0.0
    for t in range(2):
        pstate, active = process.draw(pstate, t, streams)
        state = algo.step(state, Round(t, active, process.probabilities(t), streams), problem)
        i = int(active[0].nonzero())
        u = (0.0, 1.0)
        X = np.array([x, x])
        for _ in range(2):  # client i steps, then both mix
            X[i] -= 0.5 * (X[i] - u[i])
            X = np.array([2 / 3 * X[0] + 1 / 3 * X[1], 1 / 3 * X[0] + 2 / 3 * X[1]])
        delta = X[i] - x
        m, v = 0.9 * m + 0.1 * delta, 0.99 * v + 0.01 * delta ** 2
        vhat = max(vhat, v)
        x += 0.1 * m / np.sqrt(vhat + 1e-2)
        assert float(state["x"]) == pytest.approx(x, rel=1e-13)
        assert float(state["afga.delta"]) == pytest.approx(delta, rel=1e-13)


@pytest.mark.parametrize("clusters, rows", [(1, False), (2, False), (1, True)])
def test_kernel_matches_numpy_replay(clusters, rows, monkeypatch):
    if rows:  # this small problem computes densely; the rows layout is replayed too
        monkeypatch.setattr("theorylab.kernels.client_work.ROWS_MIN", 0)
    spec, N = quadratic(8, 2, 0.5), 8
    sampler = ({"name": "uniform_k", "n_clients": N, "k": 2} if clusters == 1 else
               {"name": "cluster_uniform_k", "n_clients": N, "clusters": 2, "k": 1})
    topo = {"name": "block_diagonal", "sizes": [N // clusters] * clusters}
    W = build("topology", topo).W
    cfg = RunConfig(problem=spec, participation=sampler, rounds=3, replicas=2, seed=4,
                    algorithm={"name": "afga", "local_steps": 3, "lr": 0.2, "topology": topo, "clusters": clusters,
                               "server": SERVER})
    ref = replay(spec, sampler, W, 3, 0.2, 3, 4, 2, clusters=clusters, server=SERVER)
    np.testing.assert_allclose(run(cfg).final["server"], ref["x"][:, -1], rtol=0, atol=1e-13)


def _base(**algorithm):
    return dict(problem=quadratic(6, 3, 0.3), participation={"name": "uniform_k", "n_clients": 6, "k": 2}, rounds=6,
                seed=2, algorithm={"name": "afga", "local_steps": 3, "lr": 0.1, "server": SERVER, **algorithm})


def test_v4_no_resample_no_gossip_is_fedamsgrad_bit_for_bit():
    mine = run(RunConfig(replicas=3, **_base(resample=False, gossip=False)))
    base = _base()
    base["algorithm"] = {"name": "fedavg", "local_steps": 3, "lr": 0.1, "server": SERVER}
    assert np.array_equal(mine.final["server"], run(RunConfig(replicas=3, **base)).final["server"])


def test_v4_holds_under_bernoulli_participation_with_empty_rounds():
    base = _base(resample=False, gossip=False)
    base["participation"] = {"name": "bernoulli", "p": [0.15] * 6}  # about 38% of the rounds are empty
    mine = run(RunConfig(replicas=4, **base)).final["server"]
    base["algorithm"] = {"name": "fedavg", "local_steps": 3, "lr": 0.1, "server": SERVER}
    assert np.array_equal(mine, run(RunConfig(replicas=4, **base)).final["server"])


def test_replica_independent_of_batch_size():
    one = run(RunConfig(replicas=1, **_base(topology={"name": "ring", "n": 6})))
    three = run(RunConfig(replicas=3, **_base(topology={"name": "ring", "n": 6})))
    assert np.array_equal(one.final["server"][0], three.final["server"][0])


def test_reporting_ring_is_a_subring_per_cluster():
    active = torch.tensor([[True, False, True, False, True, True], [False, True, True, True, False, True]])
    W = reporting_ring(active, 2, 1 / 3).numpy()
    np.testing.assert_allclose(W.sum(1), 1.0)
    np.testing.assert_allclose(W.sum(2), 1.0)
    np.testing.assert_allclose(W[0][np.ix_([0, 2], [0, 2])], [[1 / 3, 2 / 3], [2 / 3, 1 / 3]])  # ring of 2
    assert W[0, 1, 1] == 1.0 and W[0, 0, 4] == 0.0  # idle client alone; no weight across clusters


def test_gossip_messages_count_the_ring_edges():
    counts = states(RunConfig(replicas=1, **_base(topology={"name": "ring", "n": 6})),
                    ("afga.gossip_messages", "afga.uploads"))
    assert counts["afga.gossip_messages"][0, -1] == 6 * 2 * 3 * 6  # N clients x 2 neighbours x I steps x rounds
    assert counts["afga.uploads"][0, -1] == 2 * 6  # M uploads per round


@pytest.mark.parametrize("algorithm, participation, match", [
    ({"gossip_scope": "some"}, None, "gossip_scope"),
    ({"resample_pool": "x"}, None, "resample_pool"),
    ({"topology": [[0.5, 0.6], [0.5, 0.4]]}, None, "topology"),
    ({}, None, "topology is required"),
    ({"topology": {"name": "ring", "n": 6}, "gossip": False}, None, "unused"),
    ({"topology": {"name": "ring", "n": 6}, "clusters": 4}, None, "clusters"),
    ({"topology": {"name": "ring", "n": 6}, "clusters": 2}, None, "block-diagonal"),
    ({"topology": {"name": "ring", "n": 5}}, None, "topology has 5 clients"),
    ({"topology": {"name": "ring", "n": 6}}, {"name": "bernoulli", "p": [0.5] * 6}, "same number of clients"),
    ({"topology": {"name": "ring", "n": 6}}, {"name": "uniform_k", "n_clients": 6, "k": 7}, "k must"),
])
def test_bad_inputs_are_refused(algorithm, participation, match):
    base = _base(**algorithm)
    if participation is not None:
        base["participation"] = participation
    with pytest.raises(ValueError, match=match):
        run(RunConfig(replicas=2, **base))


def test_cluster_uniform_k_samples_m_per_cluster_and_reduces_to_uniform_k():
    flat, per = build("participation", {"name": "uniform_k", "n_clients": 12, "k": 3}), \
        build("participation", {"name": "cluster_uniform_k", "n_clients": 12, "clusters": 1, "k": 3})
    a, b = Streams(5, 4), Streams(5, 4)
    assert torch.equal(flat.draw(None, 0, a)[1], per.draw(None, 0, b)[1])
    four = build("participation", {"name": "cluster_uniform_k", "n_clients": 12, "clusters": 4, "k": 2})
    mask = four.draw(None, 0, Streams(1, 64))[1]
    assert (mask.reshape(64, 4, 3).sum(-1) == 2).all()
    np.testing.assert_allclose(four.probabilities(0), 2 / 3)
    for spec, match in (({"clusters": 5, "k": 1}, "clusters"), ({"clusters": 4, "k": 4}, "k must")):
        with pytest.raises(ValueError, match=match):
            build("participation", {"name": "cluster_uniform_k", "n_clients": 12, **spec})


def test_worst_path_of_lemma_f8_by_closed_form():
    """One step on ring(10) with self-weight 1/3 from a block of 4 sampled clients: the block's mean displacement is
    (4 - 2/3)/4 (its two ends keep 2/3), the all-client mean is 4/10, and m_r = (1 - beta1^r) Delta_r."""
    from theorylab.validations.afga.lemmas import worst_path

    one = worst_path(n_clients=10, block=4, steps=1, beta1=0.9, rounds=3)
    assert one["delta"] == pytest.approx((4 - 2 / 3) / 4) and one["delta_bar"] == pytest.approx(0.4)
    np.testing.assert_allclose(one["m"], (1 - 0.9 ** np.arange(1, 4)) * one["delta"], rtol=1e-12)
    many = worst_path(n_clients=50, block=5, steps=24, beta1=0.9, rounds=2)
    assert many["delta_bar"] == pytest.approx(5 * 24 / 50) and many["delta_bar"] < many["delta"] <= 24
