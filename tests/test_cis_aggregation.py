"""Fed-CIS's sampling, aggregation, strategies and training loop (theorylab.cis) against hand computations
(seed 001 Ch. 5 Alg. 6, Lemmas D.2-D.3; digest 001 ch4-6 §3.2-3.4)."""

import numpy as np
import pytest

from theorylab.cis.aggregation import (aggregate, aggregation_weights, expected_update, node_variance,
                                       node_variance_bound, project_ball, sampling_factor)
from theorylab.cis.rates import SEVEN_NODE
from theorylab.cis.sampling import check_sampling, draw, exit_data_sizes, outcomes, participants, preset
from theorylab.cis.strategies import balanced_adj, equal_weight, flops_prop, serving_rate
from theorylab.cis.training import cosine_schedule, mean_fedcis, run_fedcis
from theorylab.rng import Streams


def test_preset_matches_the_thesis_example():
    p = preset(SEVEN_NODE[1], 0.2)
    np.testing.assert_allclose(p[0], [1, 0, 0])
    np.testing.assert_allclose(p[4], [0.2, 0.8, 0])
    np.testing.assert_allclose(p[6], [0.2, 0.2, 0.6])
    assert [c.tolist() for c in participants(preset(SEVEN_NODE[1], 0.0))] == [[0, 1, 2, 3], [4, 5], [6]]
    assert [c.tolist() for c in participants(p)] == [list(range(7)), [4, 5, 6], [6]]


def test_exit_data_sizes_and_weights_by_hand():
    p, sizes = np.array([[1.0, 0.0], [0.5, 0.5]]), [10, 30]
    np.testing.assert_allclose(exit_data_sizes(p, sizes), [40, 30])
    alpha = aggregation_weights(p, sizes, [0.6, 0.4], server_lr=2.0)
    np.testing.assert_allclose(alpha, [[2 * 0.6 * 10 / 40, 0.0], [2 * 0.6 * 30 / 40, 2 * 0.4 * 30 / 30]])


def test_draw_maps_uniforms_to_one_exit_or_none():
    p = np.array([[0.2, 0.3], [0.0, 1.0]])
    u = np.array([[0.1, 0.5], [0.3, 0.0], [0.7, 0.99]])
    np.testing.assert_array_equal(draw(p, u), [[0, 1], [1, 1], [-1, 1]])
    choices, probs = outcomes(p)
    assert sorted(map(tuple, choices.tolist())) == [(-1, 1), (0, 1), (1, 1)]
    assert probs.sum() == pytest.approx(1.0)


def test_aggregate_by_hand_and_lemma_d2_by_enumeration():
    p = np.array([[0.5, 0.0], [0.25, 0.75]])
    alpha = np.array([[0.4, 0.0], [0.3, 0.3]])
    deltas = np.arange(8, dtype=float).reshape(2, 2, 2)
    chosen = np.array([[0, 1]])
    picked = deltas[[0, 1], [0, 1]][None]
    expected = 1.0 + 0.4 / 0.5 * deltas[0, 0] + 0.3 / 0.75 * deltas[1, 1]
    np.testing.assert_allclose(aggregate(np.ones((1, 2)), picked, chosen, p, alpha)[0], expected)
    choices, probs = outcomes(p)
    nodes = np.arange(2)
    ups = aggregate(np.zeros((len(choices), 2)), deltas[nodes, np.maximum(choices, 0)], choices, p, alpha)
    np.testing.assert_allclose(probs @ ups, expected_update(alpha, deltas), atol=1e-12)
    var = probs @ np.sum((ups - expected_update(alpha, deltas)) ** 2, 1)
    assert node_variance(alpha, p, deltas).sum() == pytest.approx(var)


def test_variance_bound_is_exact_for_one_exit_and_fails_for_opposite_updates():
    p, alpha = np.array([[0.5, 0.0]]), np.array([[0.5, 0.0]])
    u = np.array([[[1.0, 2.0], [0.0, 0.0]]])
    assert node_variance(alpha, p, u)[0] == pytest.approx(node_variance_bound(alpha, p, u)[0])
    p2, alpha2 = np.array([[0.5, 0.5]]), np.array([[0.5, 0.5]])
    opposite = np.array([[[1.0, 0.0], [-1.0, 0.0]]])
    assert node_variance(alpha2, p2, opposite)[0] == pytest.approx(2 * node_variance_bound(alpha2, p2, opposite)[0])
    repaired = node_variance_bound(alpha2, p2, opposite, "fixed")[0]
    assert node_variance(alpha2, p2, opposite)[0] == pytest.approx(repaired)


def test_sampling_factor_readings_and_the_repaired_bound():
    p = np.array([[0.25, 0.0, 0.75]])
    np.testing.assert_allclose(sampling_factor(p), [[3.0, 0.0, 1 / 3]])
    np.testing.assert_allclose(sampling_factor(p, "fixed"), [[4.0, 0.0, 4 / 3]])
    rng = np.random.default_rng(0)
    alpha, updates = np.array([[0.3, 0.0, 0.2]]), rng.normal(size=(200, 1, 3, 4))
    repaired = [node_variance_bound(alpha, p, u, "fixed")[0] - node_variance(alpha, p, u)[0] for u in updates]
    assert min(repaired) >= 0  # the 1/p factor bounds the variance for any updates
    with pytest.raises(ValueError, match="reading must be one of"):
        sampling_factor(p, "x")


def test_projection_and_strategies():
    np.testing.assert_allclose(project_ball(np.array([[3.0, 4.0], [0.1, 0.0]]), np.zeros(2), 1.0),
                               [[0.6, 0.8], [0.1, 0.0]])
    np.testing.assert_allclose(equal_weight(4), [0.25] * 4)
    np.testing.assert_allclose(flops_prop([1, 3]), [0.25, 0.75])
    np.testing.assert_allclose(serving_rate([2, 6]), [0.25, 0.75])
    np.testing.assert_allclose(balanced_adj([2, 6], [1, 4], 0.0), serving_rate([2, 6]))
    np.testing.assert_allclose(balanced_adj([1, 1], [1, 4], 1.0), [0.8, 0.2])


def test_bad_inputs_are_refused():
    exits = SEVEN_NODE[1]
    bad = preset(exits, 0.0)
    bad[0, 1] = 0.1
    with pytest.raises(ValueError, match="p\\[0\\]: node 0 holds exits 1..1"):
        check_sampling(bad, exits)
    with pytest.raises(ValueError, match="p\\[0\\] must sum to at most 1"):
        check_sampling(np.array([[0.6, 0.6]]), [2])
    with pytest.raises(ValueError, match="p must be in \\[0, 1/\\(max E_i - 1\\)\\]"):
        preset(exits, 0.6)
    with pytest.raises(ValueError, match="target: exit 2 has weight 0.2 but no node trains it"):
        aggregation_weights(np.array([[1.0, 0, 0]]), [5], [0.5, 0.2, 0.3])
    with pytest.raises(ValueError, match="sizes must hold one dataset size > 0"):
        exit_data_sizes(np.ones((2, 1)), [1])
    with pytest.raises(ValueError, match="beta must be in \\[0, 1\\]"):
        balanced_adj([1, 1], [1, 1], 2.0)
    with pytest.raises(ValueError, match="flops must be finite values >= 0"):
        flops_prop([0, 0])
    with pytest.raises(ValueError, match="radius must be > 0"):
        project_ball(np.zeros((1, 2)), np.zeros(2), 0.0)


def _tiny_problem():
    hess = np.stack([np.stack([np.diag([1.0, 0.5]), np.diag([2.0, 1.0])])] * 2)  # (2 nodes, 2 exits, 2, 2)
    lin = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [1.0, -1.0]]])
    p = np.array([[1.0, 0.0], [0.4, 0.6]])
    return hess, lin, p, aggregation_weights(p, [1, 3], [0.5, 0.5])


def test_training_is_reproducible_and_replica_independent():
    hess, lin, p, alpha = _tiny_problem()
    noise = np.full(p.shape, 0.3)
    run = lambda r: run_fedcis(hess, lin, noise, p, alpha, np.zeros((r, 2)), 70, 3, lambda t, k: 0.1,  # noqa: E731
                               Streams(4, r), record=(10,))
    a, b, one = run(3), run(3), run(1)
    np.testing.assert_array_equal(a[70], b[70])
    np.testing.assert_array_equal(a[70][0], one[70][0])
    assert set(a) == {10, 70}


def test_noiseless_deterministic_draws_match_the_exact_mean():
    hess, lin, _, _ = _tiny_problem()
    p = np.array([[1.0, 0.0], [0.0, 1.0]])  # every node always trains the same exit
    alpha = aggregation_weights(p, [1, 3], [0.5, 0.5])
    lr = cosine_schedule(0.2, 30)
    sim = run_fedcis(hess, lin, np.zeros(p.shape), p, alpha, np.zeros((2, 2)), 30, 4, lr, Streams(0, 2))[30]
    exact = mean_fedcis(hess, lin, alpha, np.zeros(2), 30, 4, lr)[30]
    np.testing.assert_allclose(sim, np.broadcast_to(exact, sim.shape), atol=1e-13)


def test_training_refuses_bad_shapes_and_optimiser_settings():
    hess, lin, p, alpha = _tiny_problem()
    with pytest.raises(ValueError, match="noise must hold one std >= 0"):
        run_fedcis(hess, lin, np.zeros(3), p, alpha, np.zeros((1, 2)), 1, 1, lambda t, k: 0.1, Streams(0, 1))
    with pytest.raises(ValueError, match="momentum must be in \\[0, 1\\)"):
        run_fedcis(hess, lin, np.zeros(p.shape), p, alpha, np.zeros((1, 2)), 1, 1, lambda t, k: 0.1,
                   Streams(0, 1), momentum=1.0)
    with pytest.raises(ValueError, match="hess must be"):
        run_fedcis(hess[:1], lin[:1], np.zeros(p.shape), p, alpha, np.zeros((1, 2)), 1, 1, lambda t, k: 0.1,
                   Streams(0, 1))
    with pytest.raises(ValueError, match="lr0 must be > 0"):
        cosine_schedule(0.0, 10)


def test_confidence_routing_by_hand():
    from theorylab.cis.routing import cis_accuracy, max_softmax, neg_entropy, random_routing_accuracy, route

    confidence = np.array([[0.9, 0.1, 0.8, 0.2, 0.3],
                           [0.0, 0.7, 0.0, 0.1, 0.6],
                           [0.0, 0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(route(confidence, (40, 40, 20)), [0, 1, 0, 2, 1])
    correct = np.array([[1, 0, 1, 0, 0], [0, 1, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)
    assert cis_accuracy(correct, confidence, (40, 40, 20)) == pytest.approx(4 / 5)
    assert random_routing_accuracy(correct, (40, 40, 20)) == pytest.approx(0.4 * 0.4 + 0.4 * 0.2 + 0.2 * 1.0)
    np.testing.assert_allclose(max_softmax(np.log(np.array([[1.0, 3.0]]))), [0.75])
    np.testing.assert_allclose(neg_entropy(np.log(np.array([[1.0, 3.0], [1.0, 1.0]]))),
                               [0.25 * np.log(0.25) + 0.75 * np.log(0.75), np.log(0.5)])
    with pytest.raises(ValueError, match="split must give one share per exit"):
        route(confidence, (50, 50))
