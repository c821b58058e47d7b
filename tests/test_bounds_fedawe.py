"""FedAWE theory calculators, exact staleness moments, the two-client exact chain and the analysis terms."""

import math

import numpy as np
import pytest

from theorylab.bounds.fedawe import (Constants, condition11, corollary1_rhs, corollary1_steps, corollary1_t_min,
                                     corollary2_rhs, corollary3_rhs, lemma3_condition, lemma3_rhs, lemma5_rhs,
                                     lemma6_condition, lemma6_rhs, proposition2_rhs, rate_terms, theorem1_rhs)
from theorylab.bounds.fedawe_terms import fedawe_terms
from theorylab.bounds.staleness import (lemma2_bounds, staleness_moments, staleness_product_formula,
                                        stationary_staleness)
from theorylab.config import RunConfig
from theorylab.exact.fedawe_two_client import fedawe_two_client_moments
from theorylab.runner import run
from theorylab.trace import mean_ci

# rho = 0.25 makes 1 - sqrt(rho) = 0.5; with L = 1, delta = 0.5, delta_max = 1 every constant is a short fraction.
C = Constants(L=1.0, sigma2=2.0, beta2=1.0, zeta2=3.0, delta=0.5, delta_max=1.0, rho=0.25, m=4, s=2)


def test_rate_bounds_by_hand():
    # eta = 0.01, s = 2, T = 100, Delta_0 = 5:
    #   first = k0 * 5 / (0.01 * 2 * 100) = 2.5 k0;  second = k1 * 0.01 * 1 * 1 * 2 / (4 * 0.25) = 0.02 k1;
    #   drift = (0.01 * 2 * 1)^2 / (0.5 * 0.5)^2 = 0.0064;  third = k2 * 0.0064 * 2;  fourth = k3 * 0.0064 * 3.
    def expected(k):
        return 2.5 * k[0] + 0.02 * k[1] + 0.0128 * k[2] + 0.0192 * k[3]

    assert theorem1_rhs(C, 0.01, 1.0, 100, 5.0) == pytest.approx(expected((6, 24, 15, 2800)))
    assert corollary2_rhs(C, 0.01, 1.0, 100, 5.0) == pytest.approx(expected((12, 48, 31, 5600)))
    assert corollary3_rhs(C, 0.01, 1.0, 100, 5.0) == pytest.approx(expected((3, 12, 28, 1600)))


def test_lemma_bounds_by_hand():
    # Prop. 2: 6 (0.01*2/0.5)^2 = 0.0096 times (2 * 0.3 + 3 + 1 * 0.2).
    assert proposition2_rhs(C, 0.01, 1.0, 0.3, 0.2) == pytest.approx(0.0096 * 3.8)
    # Lemma 6: 3*0.25*2*1e-4*2/(0.5*0.5)^2 + 40*0.25*(2*0.01/0.5)^2*(3 + 2*0.3) = 0.0048 + 0.016*3.6.
    assert lemma6_rhs(C, 0.01, 1.0, 0.3) == pytest.approx(0.0048 + 0.0576)
    # Lemma 3 with eta_l = 0.01, eta_g = 1: -0.005*g + 2*0.02*2*(0.01 + 4.5*4*1e-4*2)/16*k2 + 35*1e-6*8/4*kg
    #   + 2.2*0.02*a + 0.01*c.
    value = lemma3_rhs(C, 0.01, 1.0, 1.0, 10.0, 20.0, 0.5, 0.25)
    assert value == pytest.approx(-0.005 + 0.08 * 0.0136 / 16 * 10 + 7e-5 * 20 + 0.044 * 0.5 + 0.01 * 0.25)
    assert lemma5_rhs(C, 0.1, 1.0) == pytest.approx(4 * 0.01 * 8 * 2 + 16 * 0.01 * 16)


def test_step_conditions_by_hand():
    assert lemma3_condition(C, 0.0449, 1.0)["eta_l*eta_g (Lemma 3)"] == (0.0449, 0.045, True)
    conditions = lemma6_condition(C, 0.02, 1.0)
    assert conditions["eta_l (Lemma 6)"][1] == pytest.approx(0.0125)  # delta / (20 s L)
    assert conditions["eta_l*eta_g (Lemma 6)"][1] == pytest.approx(0.5 * 0.5 / (20 * 1.5))
    assert not conditions["eta_l (Lemma 6)"][2]
    h = math.sqrt(2.0 * 2.0)  # sqrt((beta^2 + 1)(1 + L^2))
    c11 = condition11(C, 1e-5, 1.0)
    assert c11["eta_l*eta_g (11)"][1] == pytest.approx(0.5 * 0.5 / (80 * 2 * 2 * 1.5 * h))
    assert c11["eta_l (11)"][1] == pytest.approx(0.5 / (200 * 2 * h))


def test_corollary1_t_min_is_where_condition_11_starts_to_hold():
    t_min = corollary1_t_min(C)
    for T, holds in ((t_min * 1.0001, True), (t_min * 0.999, False)):
        assert all(ok for _, _, ok in condition11(C, *corollary1_steps(C, T)).values()) is holds
    eta_l, eta_g = corollary1_steps(C, 10_000)
    assert eta_l == pytest.approx(1 / (2 * 100)) and eta_g == pytest.approx(math.sqrt(2 * 0.5 * 4))
    assert corollary1_rhs(C, 10_000, 5.0) == corollary2_rhs(C, eta_l, eta_g, 10_000, 5.0)


def test_constants_and_conventions_are_checked():
    with pytest.raises(ValueError, match="delta"):
        Constants(L=1, sigma2=1, beta2=0, zeta2=0, delta=0.0, delta_max=0.5, rho=0.5, m=2, s=1)
    with pytest.raises(ValueError, match="rho"):
        Constants(L=1, sigma2=1, beta2=0, zeta2=0, delta=0.5, delta_max=0.5, rho=1.0, m=2, s=1)
    with pytest.raises(ValueError, match="eta_g >= 1"):
        corollary3_rhs(C, 0.01, 0.5, 10, 1.0)


def test_staleness_moments_three_ways():
    table = np.random.default_rng(0).uniform(0.1, 0.9, size=(30, 3))
    first, second = staleness_moments(table)
    for i in range(3):
        assert (first[25, i], second[25, i]) == pytest.approx(staleness_product_formula(table[:, i], 25))
    first, second = staleness_moments(np.full((40, 1), 0.3))
    assert (first[40, 0], second[40, 0]) == pytest.approx(stationary_staleness(0.3, 40))
    assert second[40, 0] == pytest.approx((2 - 0.3) / 0.3 ** 2, rel=1e-5)
    assert lemma2_bounds(0.25) == (4.0, 32.0)


def test_two_client_chain_against_monte_carlo():
    exact = fedawe_two_client_moments((0.7, 0.4), lr=0.05, local_steps=3, rounds=30, every=10)
    config = RunConfig(problem={"name": "scalar_quadratic", "centers": [0.0, 1.0]},
                       participation={"name": "bernoulli", "p": [0.7, 0.4]},
                       algorithm={"name": "fedawe", "local_steps": 3, "lr": 0.05}, rounds=30, replicas=4000, every=30)
    trace = run(config)
    for point, value in (("mean", exact.mean_model[-1]), ("server", exact.server_model[-1])):
        lo, hi = mean_ci(trace.final[point][:, 0], 0.999)
        assert lo <= value <= hi


def test_two_client_chain_full_participation_is_gradient_descent():
    # p = (1, 1): staleness 1, both clients take the same local GD from the common model.
    exact = fedawe_two_client_moments((1.0, 1.0), lr=0.1, local_steps=2, rounds=5, every=1)
    c = 0.9 ** 2
    x = 0.0
    for t in range(5):
        x = 0.5 * ((c * x + (1 - c) * 0.0) + (c * x + (1 - c) * 1.0))
        assert exact.server_model[t + 1] == pytest.approx(x) and exact.mean_model[t + 1] == pytest.approx(x)


def test_two_client_chain_mean_limit_is_the_center_average():
    """Equal curvatures: the echoed weights re-equalise (Prop. 1), so lim E[xbar^t] = (u_1 + u_2)/2 exactly."""
    exact = fedawe_two_client_moments((0.8, 0.3), centers=(-1.0, 2.0), lr=0.02, local_steps=4, rounds=800, every=800)
    assert exact.mean_model[-1] == pytest.approx(0.5, abs=1e-9)


def _terms_config(p, lr=0.05, sigma=0.5, rounds=25, replicas=3000):
    return RunConfig(problem={"name": "random_quadratic", "n_clients": 4, "dim": 3, "seed": 2, "sigma": sigma},
                     participation={"name": "bernoulli", "p": p},
                     algorithm={"name": "fedawe", "local_steps": 3, "lr": lr}, rounds=rounds, replicas=replicas, seed=1)


def test_terms_follow_the_run_and_the_recursion():
    config = _terms_config([0.3, 0.5, 0.7, 0.9], replicas=8)
    terms = fedawe_terms(config)
    trace = run(config.replace(every=1))
    assert np.allclose(terms["grad_xbar2"], trace.metrics["mean.gradnorm2"][:, :-1], rtol=1e-12)
    assert terms["recursion_gap"].max() <= 1e-12 * terms["z_scale"].max()
    assert np.all(terms["approx"][:, 0] == 0) and np.all(terms["consensus_z"][:, 0] == 0)


def test_lemma3_conditional_expectation_against_monte_carlo():
    """At t = 0 every replica has the same state, so the mean over replicas of F(zbar^1) - F(zbar^0) estimates the
    exact conditional expectation."""
    terms = fedawe_terms(_terms_config([0.3, 0.5, 0.7, 0.9], rounds=2))
    lo, hi = mean_ci(terms["gap_zbar"][:, 1] - terms["gap_zbar"][:, 0], 0.999)
    assert lo <= terms["lemma3_lhs"][0, 0] <= hi and np.ptp(terms["lemma3_lhs"][:, 0]) == 0


def test_terms_with_full_participation_have_no_staleness():
    terms = fedawe_terms(_terms_config([1.0] * 4, replicas=4))
    assert np.all(terms["approx"] == 0) and np.all(terms["sum_k2"] == 4)


def test_terms_refuse_what_they_cannot_compute():
    config = _terms_config([0.5] * 4, replicas=2)
    with pytest.raises(ValueError, match="fedawe"):
        fedawe_terms(config.replace(algorithm={"name": "fedavg"}))
    with pytest.raises(ValueError, match="no clip"):
        fedawe_terms(config.replace(algorithm={"name": "fedawe", "clip_norm": 1.0}))
    with pytest.raises(ValueError, match="Bernoulli"):
        fedawe_terms(config.replace(participation={"name": "uniform_k", "n_clients": 4, "k": 2}))


def test_rate_terms_sum_to_the_bounds_and_are_named_by_their_constants():
    for result, rhs, k in (("theorem1", theorem1_rhs, 6), ("corollary2", corollary2_rhs, 12),
                           ("corollary3", corollary3_rhs, 3)):
        parts = rate_terms(result, C, 0.1, 1.0, 10, 2.0)
        assert sum(parts.values()) == pytest.approx(rhs(C, 0.1, 1.0, 10, 2.0))
        assert next(iter(parts)).startswith(f"{k} ") and len(parts) == 4
        assert next(iter(parts.values())) == pytest.approx(k * 2.0 / (0.1 * C.s * 10))  # k0 Delta0 / (eta s T)
    with pytest.raises(ValueError, match="eta_g >= 1"):
        rate_terms("corollary3", C, 0.1, 0.5, 10, 2.0)
