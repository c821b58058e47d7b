"""AFGA/CAFGA theory calculators (theorylab.bounds.afga): constants and conditions by hand, the eq. 30-32 chain,
eq. 25's two coefficients, Lemma F.6 against a direct enumeration, bad inputs."""

import itertools
import math

import numpy as np
import pytest

from theorylab.bounds.afga import (c0, c_beta, c_beta_eta, c_local, eq25_step_limit, eq27_step_limit, eq30, eq31,
                                   global_lr_schedule, h_factor, lemma_f6_bound, local_lr_schedule, rate_eq3,
                                   rate_eq8, rho_threshold, smoothness_step_limit)


def test_constants_by_hand():
    assert h_factor(24, 0.5) == 2.0 and h_factor(24, 0.99) == 24.0 and h_factor(3, 0.0) == 1.0
    assert c0(0.1, 10, 2.0, 1e-4) == pytest.approx(math.sqrt(4.0 + 1e-4))
    assert c0(0.1, 10, 0.0, 0.25) == 0.5
    assert c_local(1) == pytest.approx(1.5) and c_local(24) == pytest.approx(1 + 1.5 / 95)
    assert c_beta(0.9) == pytest.approx(9.0) and c_beta(0.0) == 0.0
    # eta L / eps (C_beta^2 + 3) = 2 * 0.5 / 0.01 * (81 + 3)
    assert c_beta_eta(2.0, 0.5, 0.01, 0.9) == pytest.approx(8400.0)


def test_conditions_by_hand():
    assert rho_threshold(5, 50) == pytest.approx(5 / 55)
    assert eq31(1, 10, 0.5) == pytest.approx((0.5, 0.01))
    # n(n-m)/(m^2(n-1)) H rho^2 with n = 10, m = 2, I = 24, rho = 0.5: 80/36 * 2 * 0.25
    assert eq30(2, 10, 24, 0.5) == pytest.approx((80 / 36 * 0.5, 0.1))
    assert eq30(1, 1, 5, 0.3) == (0.0, 1.0)
    assert smoothness_step_limit(24, 2.0) == pytest.approx(1 / 384)


def test_eq32_implies_eq31_implies_eq30():
    for n in range(2, 40):
        for m in range(1, n + 1):
            rho = rho_threshold(m, n)
            lhs31, rhs31 = eq31(m, n, rho)
            assert lhs31 <= rhs31 and lhs31 / rhs31 == pytest.approx(n / (m + n))
            for I in (1, 5, 100):
                lhs30, rhs30 = eq30(m, n, I, rho)
                assert lhs30 <= rhs30 * (1 + 1e-12)


def test_eq25_coefficients():
    args = dict(eta=1.0, L=1.0, eps=1e-4, beta1=0.9, I=24, G=0.0, N=50, m=5, n=50)
    # G = 0: C_0 = 0.01, C_{beta,eta} = 84 / 1e-4; bracket = c * 4/49 / 2500 + 2 * 26 * 5 / 125000
    for c in (16.0, 4.0):
        bracket = c * (4 / 49) / 2500 + 260 / 125000
        assert eq25_step_limit(0.5, **args, coefficient=c) == pytest.approx(1 / (4 * 0.01 * 840000 * bracket))
    assert eq25_step_limit(0.5, **args, coefficient=4.0) > eq25_step_limit(0.5, **args)
    one = dict(args, m=1)
    assert eq25_step_limit(0.5, **one, coefficient=4.0) == eq25_step_limit(0.5, **one)


def test_eq27_by_hand():
    # eps^(1/4) / sqrt(18 L^2 C_0 C_1 I (I + rho^2 H)) with eps = 1e-4, G = 0 (C_0 = 0.01), I = 4, rho = 0.5 (H = 2)
    assert eq27_step_limit(0.1, 1.0, 1e-4, 4, 0.0, 0.5, 2.0) == pytest.approx(0.1 / math.sqrt(18 * 0.01 * 2 * 4 * 4.5))
    assert eq27_step_limit(0.1, 1.0, 1e-4, 4, 0.0, 0.5, 2.0, alpha=2.0) == pytest.approx(
        eq27_step_limit(0.1, 1.0, 1e-4, 4, 0.0, 0.5, 2.0) / 2)


def test_rate_shapes_and_schedules():
    assert rate_eq3(100, 4, 1, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0) == pytest.approx(1 / 20)
    assert rate_eq3(100, 4, 1, 0.5, 0.0, 1.0, 4.0, 0.0, 1.0) == pytest.approx(4 / 20 + (1 + 0.25 * 4 / 4) / 100)
    # K = 1, sigma_c = 0, sigma_l = sigma_g: eq. (8) is eq. (3) plus the sigma^2/K term of the leading part
    a = rate_eq3(400, 8, 5, 0.3, 1.0, 2.0, 0.5, 0.7, 1.5)
    b = rate_eq8(400, 8, 5, 1, 0.3, 1.0, 2.0, 0.5, 0.7, 0.0, 1.5)
    assert b - a == pytest.approx(0.5 * 2.0 / math.sqrt(400 * 8 * 5))
    assert local_lr_schedule(2.0, 24, 400) == pytest.approx(2 / 480)
    assert global_lr_schedule(1.0, 50, 20, 5) == pytest.approx(100.0)


def test_lemma_f6_bound_matches_enumeration_for_one_cluster():
    y = np.random.default_rng(3).standard_normal((1, 7, 2))
    exact = np.mean([np.sum(y[0, list(s)].sum(0) ** 2) for s in itertools.combinations(range(7), 3)])
    assert lemma_f6_bound(y, 3) == pytest.approx(exact, rel=1e-12)
    with pytest.raises(ValueError, match="shape"):
        lemma_f6_bound(np.ones((3, 2)), 1)


@pytest.mark.parametrize("call,match", [
    (lambda: h_factor(24, 1.0), "rho_max"), (lambda: h_factor(0, 0.5), "I must"),
    (lambda: c0(0.0, 4, 1.0, 1e-4), "eta_l"), (lambda: c0(0.1, 4, -1.0, 1e-4), "G must"),
    (lambda: c0(0.1, 4, 1.0, 0.0), "eps"), (lambda: c_beta(1.0), "beta1"),
    (lambda: rho_threshold(6, 5), "m must"), (lambda: eq31(1, 5, -0.1), "rho_max"),
    (lambda: eq25_step_limit(0.1, 1.0, 1.0, 1e-4, 0.9, 4, 0.0, 5, 2, 10), "N must"),
    (lambda: eq27_step_limit(0.1, 1.0, 1e-4, 4, 0.0, 0.5, 1.0, alpha=0.5), "alpha"),
    (lambda: eq27_step_limit(0.1, 1.0, 1e-4, 4, 0.0, 0.5, 0.0), "C1"),
    (lambda: rate_eq3(0, 4, 1, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0), "R must"),
    (lambda: rate_eq8(10, 4, 1, 0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0), "K must"),
    (lambda: local_lr_schedule(1.0, 2.5, 100), "I must"), (lambda: global_lr_schedule(1.0, 4, 2, 5), "m must"),
    (lambda: smoothness_step_limit(4, float("nan")), "L must"),
])
def test_bad_inputs_name_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_lemma_f6_readings_of_the_sampling():
    """Without replacement the K = 1 bound is an identity; with replacement (S = the distinct clients of m draws) the
    witness y = (1, -1, 0, 0), n = 4, m = 3 gives 2(p_1 - p_2) = 19/32 > 1/2; with m = 1 the readings agree."""
    from theorylab.validations.afga.theory import WITH, WITHOUT, WITNESS, expected_square

    assert expected_square(WITNESS, 3, WITHOUT) == pytest.approx(0.5) == lemma_f6_bound(WITNESS, 3)
    assert expected_square(WITNESS, 3, WITH) == pytest.approx(19 / 32)
    y = np.random.default_rng(4).standard_normal((2, 5, 3))
    assert expected_square(y, 1, WITH) == pytest.approx(expected_square(y, 1, WITHOUT), rel=1e-12)
