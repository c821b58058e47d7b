"""Markov analytics against independent computations: numpy.linalg, explicit Kronecker products built from the
definition (A.210), matrix powers and simulations driven by Streams."""

import itertools
import math

import numpy as np
import pytest
import torch

from helpers import draw_masks
from theorylab.participation import markov_analytics as ma
from theorylab.participation.markov import clustered_markov, markov, thesis_spatial_setting
from theorylab.registry import build

DEFECTIVE = np.array([[0, 0, 1], [1 / 8, 0, 7 / 8], [0, 1 / 2, 1 / 2]])  # eigenvalue -1/4 in a 2x2 Jordan block


def test_two_state_matrix_round_trip_and_spectrum():
    pi = np.array([0.9, 0.1, 0.5, 0.3, 0.5])
    lam = np.array([0.9, 0.0, -0.5, -3 / 7, -1.0])  # the last two sit on the feasible boundary
    P = ma.two_state_matrix(pi, lam)
    assert np.allclose(P.sum(-1), 1.0, atol=1e-15) and P.min() >= 0
    back_pi, back_lam = ma.two_state_parameters(P)
    np.testing.assert_allclose(back_pi, pi, atol=1e-12)
    np.testing.assert_allclose(back_lam, lam, atol=1e-12)
    for Pi, p, l in zip(P, pi, lam):
        np.testing.assert_allclose(np.sort(np.linalg.eigvals(Pi).real), np.sort([1.0, l]), atol=1e-12)
        np.testing.assert_allclose(ma.stationary_law(Pi), [1 - p, p], atol=1e-12)
        assert ma.second_modulus(Pi) == pytest.approx(abs(l), abs=1e-12)


@pytest.mark.parametrize("pi, lam, message", [
    (0.9, -0.2, r"lam\[0\] = -0.2 is outside the feasible range \[-0.111111, 1\) for pi\[0\] = 0.9"),
    (0.3, 1.0, r"feasible range \[-0.428571, 1\)"),
    (0.0, 0.5, r"pi\[0\] = 0 is outside the allowed range \(0, 1\)"),
    ([0.5, 0.5], [0.1], "same shape"),
])
def test_infeasible_two_state_parameters_name_the_range(pi, lam, message):
    with pytest.raises(ValueError, match=message):
        ma.two_state_matrix(pi, lam)


@pytest.mark.parametrize("P, message", [
    (np.ones((2, 3)) / 3, "square"), (np.array([[0.5, 0.6], [0.5, 0.5]]), "sum to 1"),
    (np.array([[1.5, -0.5], [0.5, 0.5]]), r"entries in \[0, 1\]")])
def test_non_stochastic_matrices_are_refused(P, message):
    with pytest.raises(ValueError, match=message):
        ma.spectrum(P)


def test_stationary_law_and_spectrum_of_a_general_chain():
    P = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.4, 0.4, 0.2]])
    w, v = np.linalg.eig(P.T)
    left = np.real(v[:, np.argmin(np.abs(w - 1))])
    np.testing.assert_allclose(ma.stationary_law(P), left / left.sum(), atol=1e-12)
    eig = ma.spectrum(P)
    assert eig[0] == pytest.approx(1.0) and np.all(np.diff(np.abs(eig)) <= 1e-12)
    assert ma.thesis_lambda(ma.second_modulus(P)) == pytest.approx((np.sort(np.abs(w))[-2] + 1) / 2)


def test_product_chain_matches_the_definition_and_the_product_rule():
    pi, lam = np.array([0.9, 0.2, 0.6]), np.array([0.5, -0.2, 0.7])
    mats = ma.two_state_matrix(pi, lam)
    P, rho = ma.product_chain(mats)
    states = list(itertools.product((0, 1), repeat=3))
    explicit = np.array([[np.prod([mats[i][a[i], b[i]] for i in range(3)]) for b in states] for a in states])
    np.testing.assert_allclose(P, explicit, atol=1e-15)  # (A.210), client 0 the most significant digit
    np.testing.assert_allclose(rho, [np.prod([pi[i] if a[i] else 1 - pi[i] for i in range(3)]) for a in states])
    products = sorted(np.prod(c) for c in itertools.product(*[(1.0, l) for l in lam]))  # Prop. F.3
    np.testing.assert_allclose(np.sort(np.linalg.eigvals(P).real), products, atol=1e-12)
    assert ma.second_modulus(P) == pytest.approx(ma.product_second_modulus(lam)) == pytest.approx(0.7)


def test_c_p_closed_form_log_space_rule_and_bound():
    pi, lam = np.array([0.1, 0.7, 0.4]), np.array([0.9, -0.3, 0.5])
    mats = ma.two_state_matrix(pi, lam)
    for Pi, p in zip(mats, pi):
        const = ma.mixing_constants(Pi)
        assert const.t_p == 0 and const.blocks == (1,)
        assert const.c_p == pytest.approx(float(ma.two_state_c_p(p)), rel=1e-12)
    P, rho = ma.product_chain(mats)
    const = ma.mixing_constants(P)
    assert math.log(const.c_p) == pytest.approx(ma.log_c_p_product(mats), rel=1e-10)
    assert const.lam == pytest.approx((0.9 + 1) / 2)
    t = np.arange(200)
    assert np.all(ma.max_entry_gap(P, 200, rho) <= const.c_p * const.lam ** t)
    huge = ma.log_c_p_product([mats[0]] * 100)  # 2^100 states: only the log is finite
    assert huge == pytest.approx(0.5 * math.log(2.0 ** 100 - 1) + 100 * math.log(float(ma.two_state_c_p(0.1))))


def test_defective_chain_jordan_constants_and_bound():
    const = ma.mixing_constants(DEFECTIVE)
    assert const.blocks == (2,) and const.lam == pytest.approx(5 / 8)
    r = math.log(const.lam / 0.25)
    assert const.t_p == max(math.ceil(2 * 2 * 1 * (math.log(4 / r) - 1) / (3 * r)), 0)
    gap = ma.max_entry_gap(DEFECTIVE, 60)
    t = np.arange(60)
    assert np.all(gap[const.t_p:] <= const.c_p * const.lam ** t[const.t_p:])
    assert ma.t_p_formula([1, 1, 1], 0.3) == 0
    with pytest.raises(ValueError, match="lambda_bar2"):
        ma.t_p_formula([2], 0.0)


def test_worst_tv_mixing_times_and_levin_peres_bounds():
    pi, lam = np.array([0.3, 0.8]), np.array([0.7, -0.2])
    mats = ma.two_state_matrix(pi, lam)
    for Pi, p, l in zip(mats, pi, lam):
        np.testing.assert_allclose(ma.worst_tv(Pi, 40), ma.two_state_tv(p, l, np.arange(40)), atol=1e-14)
        for eps in (0.25, 0.01):
            assert ma.mixing_time(Pi, eps) == ma.two_state_mixing_time(p, l, eps)[0]
    P, rho = ma.product_chain(mats)
    t_rel = ma.relaxation_time(ma.second_modulus(P))
    for eps in (0.25, 0.01):
        low, high = ma.levin_peres_bounds(t_rel, eps, rho.min())
        assert low <= ma.mixing_time(P, eps, rho) <= high
    with pytest.raises(ValueError, match="eps"):
        ma.levin_peres_bounds(2.0, 0.7, 0.1)


def test_activation_time_and_autocorrelation_match_a_simulation():
    pi, lam = np.array([0.1, 0.6]), np.array([0.9, -0.4])
    masks = draw_masks(markov(pi, lam), 3000, 8, seed=3).numpy()  # (T, R, m)
    acf = ma.autocorrelation(masks, [0, 1, 2, 5])
    np.testing.assert_allclose(acf.mean(1), lam ** np.array([[0], [1], [2], [5]]), atol=0.05)
    sojourns = ma.inactive_sojourns(masks[:, :, 0])
    runs = [[len(list(g)) for _, g in itertools.groupby(masks[:, r, 0])] for r in range(masks.shape[1])]
    first_active = [int(masks[0, r, 0]) for r in range(masks.shape[1])]
    inner = [n for r, row in enumerate(runs) for k, n in enumerate(row[1:-1], 1) if (k + first_active[r]) % 2 == 0]
    assert sorted(sojourns.tolist()) == sorted(inner)  # interior runs, by itertools.groupby
    expected = ma.activation_time(pi, lam)[0]
    assert expected == pytest.approx(100.0)
    assert abs(np.mean(sojourns) - expected) <= 5 * np.std(sojourns) / math.sqrt(len(sojourns))
    with pytest.raises(ValueError, match="lags"):
        ma.autocorrelation(masks, [3000])


def test_clustered_chain_shares_states_and_reduces_to_markov():
    setting = thesis_spatial_setting(clients_per_cluster=3)
    process = build("participation", {"name": "clustered_markov", **setting})
    masks = draw_masks(process, 50, 4, seed=1)
    by_cluster = masks.reshape(50, 4, 10, 3)
    assert torch.equal(by_cluster, by_cluster[..., :1].expand_as(by_cluster))
    assert process.lambda_bar == pytest.approx(0.9) and process.n_clients == 30
    np.testing.assert_allclose(process.probabilities(7), np.repeat(setting["pi"], 3))
    pi, lam = [0.3, 0.8, 0.5], [0.6, 0.1, -0.5]
    single = draw_masks(clustered_markov([0, 1, 2], pi, lam), 30, 3, seed=5)
    assert torch.equal(single, draw_masks(markov(pi, lam), 30, 3, seed=5))


@pytest.mark.parametrize("clusters, message", [([0, 0, 1], r"every cluster index in \[0, 2\]"),
                                               ([0.0, 1.0, 2.0], "integer"), ([0, 1, 3], "every cluster")])
def test_bad_clusters_are_refused(clusters, message):
    with pytest.raises(ValueError, match=message):
        clustered_markov(clusters, [0.3, 0.8, 0.5], [0.6, 0.1, -0.5])


def test_mixing_constants_of_a_product_with_repeated_eigenvalues():
    """Memoryless clients (lambda_2 = 0) repeat the eigenvalue 0; numpy's eigenvectors for it can be dependent.
    The bound (2.5) must still hold with the returned C_P: P^t = 1 rho^T exactly for t >= 1."""
    from theorylab.participation.markov_analytics import mixing_constants

    factors = [np.array([[1 - p, p], [1 - p, p]]) for p in (0.7, 0.4, 0.8)]
    P = factors[0]
    for F in factors[1:]:
        P = np.kron(P, F)
    c = mixing_constants(P)
    assert np.isfinite(c.c_p) and c.t_p == 0 and c.lam == pytest.approx(0.5)
    rho = np.linalg.matrix_power(P, 50)[0]
    for t in range(0, 6):
        gap = np.abs(np.linalg.matrix_power(P, t) - rho).max()
        assert gap <= c.c_p * c.lam ** t + 1e-12
