import numpy as np
import pytest
from scipy.optimize import minimize

from theorylab.testbeds import heterogeneity as het
from theorylab.testbeds.quadratic import random_quadratic


def _a4_lhs_minus_rhs(problem, beta2, e):
    x = problem.x_star + e
    g_i = np.einsum("mij,mj->mi", problem.A, x - problem.u)
    g = problem.alpha @ g_i
    return problem.alpha @ ((g_i - g) ** 2).sum(1) - beta2 * (g ** 2).sum()


def test_a4_zeta2_is_the_supremum_of_the_dissimilarity_gap():
    problem = random_quadratic(4, 3, seed=3, mu=0.4, L=1.0, weights=[0.1, 0.2, 0.3, 0.4])
    beta2 = 1.5 * het.a4_beta2_min(problem) + 0.01
    zeta2 = het.a4_zeta2(problem, beta2)
    best = minimize(lambda e: -_a4_lhs_minus_rhs(problem, beta2, e), np.zeros(3), method="BFGS",
                    options={"gtol": 1e-12})
    assert -best.fun == pytest.approx(zeta2, rel=1e-7)
    rng = np.random.default_rng(0)
    assert all(_a4_lhs_minus_rhs(problem, beta2, e) <= zeta2 + 1e-12 for e in rng.normal(size=(200, 3)) * 3)


def test_a4_below_beta2_min_is_unbounded():
    problem = random_quadratic(4, 3, seed=3)
    assert het.a4_zeta2(problem, 0.5 * het.a4_beta2_min(problem)) == np.inf


def test_a4_shared_hessians_closed_form():
    problem = random_quadratic(6, 2, seed=4, hessians="shared")
    A = problem.A[0]
    u_bar = problem.alpha @ problem.u
    expected = problem.alpha @ ((np.einsum("ij,mj->mi", A, problem.u - u_bar)) ** 2).sum(1)
    assert het.a4_beta2_min(problem) == pytest.approx(0.0, abs=1e-12)
    assert het.a4_zeta2(problem, 0.0) == pytest.approx(expected, rel=1e-12)


def test_thesis_remark_1_3_1_inequalities():
    """Gamma_ch1 <= sigma_g^2 / (2 mu) and sigma_g^2 <= 2 L Gamma_ch1 (thesis (1.8)-(1.9))."""
    for seed in range(20):
        p = random_quadratic(5, 3, seed=seed, mu=0.2, L=1.5, weights=np.arange(1, 6))
        g1, s2 = het.gamma_ch1(p), het.sigma_g2_at_optimum(p)
        assert g1 <= s2 / (2 * p.mu) + 1e-12
        assert s2 <= 2 * p.L * g1 + 1e-12
        assert het.gamma_ch2(p) >= 0 and het.gamma_prime(p, np.ones(5)) >= 0


def test_weight_distances():
    assert het.chi2([0.5, 0.5], [0.5, 0.5]) == 0
    assert het.chi2([0.5, 0.5], [0.25, 0.75]) == pytest.approx(0.25 ** 2 / 0.25 + 0.25 ** 2 / 0.75)
    assert het.chi2([0.5, 0.5], [1.0, 0.0]) == np.inf
    assert het.total_variation([1, 0], [0, 1]) == 1.0
