"""Theorem 5.3.1 / App. D calculators (theorylab.bounds.thesis_ch5) against hand computations."""

import math

import numpy as np
import pytest

from theorylab.bounds.thesis_ch5 import (Decomposition, bias_bound, d49_bound, gamma_offset, gen_bound, opt_constant,
                                         theorem_lr, tv_distance)


def test_theorem_steps_start_below_one_over_four_l():
    mu, L, K = 0.1, 2.0, 5
    lr = theorem_lr(mu, L / mu, K)
    assert gamma_offset(L / mu, K) == 159
    assert lr(1, 0) == pytest.approx(2 / (mu * 160)) and lr(1, 0) <= 1 / (4 * L)
    assert lr(3, 2) == pytest.approx(2 / (mu * (159 + 2 * 5 + 2 + 1)))
    assert gamma_offset(0.1, 4) == 3  # K dominates 8 kappa


def test_tv_normalises_and_bias_bound_vanishes_at_the_serving_rates():
    assert tv_distance([1, 1, 2], [0.25, 0.25, 0.5]) == 0.0
    assert tv_distance([1, 0], [0, 3]) == 1.0
    assert bias_bound([0.8, 0.15, 0.05], [0.8, 0.15, 0.05], 3.0) == 0.0
    assert bias_bound([0.5, 0.5], [1.0, 0.0], 3.0) == pytest.approx(2 * 3.0 * 0.5)


def test_gen_bound_by_hand_skips_unweighted_exits():
    value = gen_bound([0.5, 0.5, 0.0], [4, 9, 1], [100, 900, 0], loss_max=2.0)
    assert value == pytest.approx(0.5 * 2 * 320 * (math.sqrt(0.04) + math.sqrt(0.01)))


def test_opt_constant_by_hand_and_its_two_readings():
    alpha, p = np.array([[0.5, 0.0], [0.25, 0.25]]), np.array([[1.0, 0.0], [0.5, 0.5]])
    sigma2, L, Gamma, J, diam = np.array([[1.0, 0.0], [2.0, 3.0]]), 2.0, 0.1, 3, 0.5
    g_ie = sigma2 + (L * diam) ** 2  # 2, 1(unused), 3, 4
    G = 4.0
    noise = 0.25 * 1 + 0.0625 * 2 + 0.0625 * 3
    sampling = 4 * 9 * (0.0625 * 1 * 3 + 0.0625 * 1 * 4)
    expected = noise + 6 * L * Gamma + 8 * 4 * G + sampling
    assert opt_constant(alpha, p, sigma2, L, Gamma, J, diam) == pytest.approx(expected)
    printed = opt_constant(alpha, p, sigma2, L, Gamma, J, diam, reading="printed")
    assert printed - expected == pytest.approx(8 * 4 * (G ** 2 - G))
    assert g_ie[0, 0] == 2.0
    fixed = opt_constant(alpha, p, sigma2, L, Gamma, J, diam, sampling="fixed")  # 1/p instead of (1-p)/p
    assert fixed - expected == pytest.approx(4 * 9 * (0.25 * 1 * 2 + 0.0625 * 1 * 3 + 0.0625 * 1 * 4))


def test_d49_by_hand_and_decomposition():
    L, mu, J, T, B, d2 = 1.0, 0.1, 5, 10, 3.0, 2.0
    kappa, gamma = 10.0, 79.0
    assert d49_bound(B, L, mu, J, T, d2) == pytest.approx(kappa / (gamma + 50) * (2 * B / mu + mu * 80 / 2 * d2))
    assert Decomposition(1.0, 2.0, 3.0).total == 9.0


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="alpha must sum to 1"):
        opt_constant(np.array([[0.5]]), np.array([[1.0]]), np.array([[1.0]]), 1.0, 0.0, 2, 1.0)
    with pytest.raises(ValueError, match="reading must be one of"):
        opt_constant(np.array([[1.0]]), np.array([[1.0]]), np.array([[1.0]]), 1.0, 0.0, 2, 1.0, reading="x")
    with pytest.raises(ValueError, match="mu must be > 0"):
        theorem_lr(0.0, 1.0, 2)
    with pytest.raises(ValueError, match="local_steps must be an integer >= 1"):
        gamma_offset(1.0, 0)
    with pytest.raises(ValueError, match="rounds must be >= 1"):
        d49_bound(1.0, 1.0, 0.1, 2, 0, 1.0)
    with pytest.raises(ValueError, match="weights must be non-negative"):
        tv_distance([1, -1], [1, 1])
    with pytest.raises(ValueError, match="pdim and data_sizes must be > 0"):
        gen_bound([1.0], [0], [10], 1.0)
