"""FedAWE's mixing analytics (seed 000 eq. (4), Lemmas 1 and 4; digest 000 §2.2) against closed forms and enumeration."""

import itertools

import numpy as np
import pytest
import torch

from theorylab.exact.poisson_binomial import subset_probabilities, subsets
from theorylab.mixing import (consensus_radius, contraction_superoperator, enumerate_mixing, enumerate_mixing_exact,
                              exact_contraction, expected_mixing, lemma4_bound, lemma4_gap, mixing_matrix, rho_of,
                              rho_schedule, second_eigenvalue, uniform_k_rho)
from theorylab.participation.bernoulli import bernoulli


def test_mixing_matrix_by_hand():
    W = mixing_matrix(torch.tensor([True, False, True]))
    expected = torch.tensor([[0.5, 0, 0.5], [0, 1, 0], [0.5, 0, 0.5]], dtype=torch.float64)
    assert torch.equal(W, expected)
    assert torch.equal(mixing_matrix(torch.zeros(4, dtype=torch.bool)), torch.eye(4, dtype=torch.float64))


def test_mixing_matrix_is_a_doubly_stochastic_projection():
    masks = torch.as_tensor(np.random.default_rng(0).random((200, 7)) < 0.4)
    W = mixing_matrix(masks)
    assert torch.allclose(W @ W, W, atol=1e-15) and torch.equal(W, W.transpose(1, 2))
    assert torch.allclose(W.sum(-1), torch.ones(200, 7, dtype=torch.float64), atol=1e-15)


@pytest.mark.parametrize("p", [[0.9, 0.1], [0.9, 0.1, 0.5, 0.3, 0.7], [1.0, 0.0, 0.4, 0.6, 0.2, 0.95, 0.05],
                               list(np.linspace(0.05, 0.95, 10))])
def test_quadrature_equals_exact_rational_enumeration(p):
    assert np.abs(expected_mixing(p) - enumerate_mixing_exact(p)).max() <= 1e-15


@pytest.mark.parametrize("m", [5, 12])
def test_quadrature_equals_float_enumeration_of_w_and_w_squared(m):
    p = np.linspace(0.05, 0.95, m)
    mean, square = enumerate_mixing(p)
    M = expected_mixing(p)  # the float sums over 2^m sets carry their own rounding (see the rational test)
    assert np.abs(M - mean).max() <= 1e-14 and np.abs(M - square).max() <= 5e-14


def test_two_clients_closed_form():
    """Digest 000 §2.2: M = [[1 - p1p2/2, p1p2/2], [p1p2/2, 1 - p1p2/2]], rho = 1 - p1 p2."""
    p1, p2 = 0.9, 0.1
    h = p1 * p2 / 2
    assert np.allclose(expected_mixing([p1, p2]), [[1 - h, h], [h, 1 - h]], atol=1e-15)
    assert rho_of([0.9, 0.1]) == pytest.approx(0.91, abs=1e-14)
    assert rho_of([0.5, 0.5]) == pytest.approx(0.75, abs=1e-14)


def test_digest_values():
    assert rho_of([0.9, 0.1, 0.5, 0.3, 0.7]) == pytest.approx(0.91592, abs=5e-6)  # digest §3.2
    assert lemma4_bound(0.1, 2) == pytest.approx(0.99999955, abs=5e-9)  # digest §3.2 table
    assert lemma4_bound(0.5, 2) == pytest.approx(0.99561, abs=5e-6)
    assert lemma4_gap(1.0, 3) == pytest.approx(1 / 8)


def test_zero_probability_gives_rho_one():
    assert rho_of([0.0, 0.3, 0.8]) == pytest.approx(1.0, abs=1e-14)
    inter = bernoulli([0.05, 0.5, 0.9], dynamics="interleaved_sine")  # 0.05 g(t) < delta_0 = 0.1: never available
    assert np.allclose(rho_schedule(inter, 20), 1.0, atol=1e-12)


def test_rho_schedule_follows_the_laws():
    process = bernoulli([0.3, 0.6, 0.9], dynamics="staircase")
    rho = rho_schedule(process, 20)
    assert rho[0] == pytest.approx(rho_of([0.3, 0.6, 0.9])) and rho[15] == pytest.approx(rho_of([0.12, 0.24, 0.36]))


def test_uniform_k_rho_matches_enumeration():
    m, k = 6, 3
    sets = np.array([[i in c for i in range(m)] for c in itertools.combinations(range(m), k)])
    M = mixing_matrix(torch.as_tensor(sets)).numpy().mean(0)
    assert second_eigenvalue(M) == pytest.approx(uniform_k_rho(m, k), abs=1e-14)
    assert uniform_k_rho(10, 1) == 1.0 and uniform_k_rho(10, 10) == 0.0


def test_superoperator_is_e_wxw():
    p = [0.8, 0.3, 0.5]
    X = np.random.default_rng(1).standard_normal((3, 3))
    masks = subsets(3)
    W = mixing_matrix(torch.as_tensor(masks)).numpy()
    direct = np.einsum("s,sij,jk,skl->il", subset_probabilities(p, masks), W, X, W)
    assert np.allclose((contraction_superoperator(p) @ X.ravel()).reshape(3, 3), direct, atol=1e-15)


def test_exact_contraction_by_enumerating_pairs_of_rounds():
    """t = 2 with different laws: sum over all (S1, S2) of P(S1)P(S2) ||B(W1 W2 - J)||_F^2."""
    laws = [np.array([0.9, 0.1, 0.5, 0.3]), np.array([0.2, 0.6, 0.7, 0.4])]
    B = np.random.default_rng(2).standard_normal((2, 4))
    masks = subsets(4)
    W = mixing_matrix(torch.as_tensor(masks)).numpy()
    J = np.full((4, 4), 0.25)
    p1, p2 = (subset_probabilities(law, masks) for law in laws)
    value = sum(p1[a] * p2[b] * ((B @ (W[a] @ W[b] - J)) ** 2).sum() for a in range(16) for b in range(16))
    assert exact_contraction(B, laws)[1] == pytest.approx(value, rel=1e-13)


def test_bad_inputs():
    with pytest.raises(ValueError, match="probabilities"):
        expected_mixing([0.5, 1.2])
    with pytest.raises(ValueError, match="m <= 12"):
        enumerate_mixing(np.full(13, 0.5))
    with pytest.raises(ValueError, match="delta"):
        lemma4_bound(1.5, 3)
    with pytest.raises(ValueError, match="memoryless"):
        from theorylab.participation.uniform_k import uniform_k

        rho_schedule(uniform_k(4, 2), 3)


def test_consensus_radius_is_the_decay_rate_of_lemma1s_left_side():
    p = (0.8, 0.3, 0.55, 0.2)
    B = np.random.default_rng(3).standard_normal((2, 4))
    curve = exact_contraction(B, [p] * 100)  # still well above the ~1e-16 cancellation floor of the trace
    assert curve[-1] / curve[-2] == pytest.approx(consensus_radius(p), rel=1e-5)  # ratios converge geometrically
    assert consensus_radius(p) <= rho_of(p)
    assert consensus_radius((0.6, 0.7)) == pytest.approx(1 - 0.6 * 0.7, abs=1e-14)  # the one centred direction
