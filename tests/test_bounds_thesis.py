"""Thesis ch. 2-3 calculators (theorylab.bounds.thesis_ch2/_ch3/_lower_bound) against hand-computed cases."""

import math

import numpy as np
import pytest

from theorylab.testbeds.nesterov_chain import NesterovChain, chain_matrix
from theorylab.bounds import thesis_ch2 as ch2
from theorylab.bounds import thesis_ch3 as ch3
from theorylab.bounds import thesis_lower_bound as lb


# ----- ch. 2 --------------------------------------------------------------------------------------------------
def test_power_schedule_sums_by_hand():
    s = ch2.PowerSchedule(0.1, 1.0)
    assert s.sum_sq == pytest.approx(0.01 * math.pi ** 2 / 6, rel=1e-14)
    assert s.partial_sum(3) == pytest.approx(0.1 * (1 + 1 / 2 + 1 / 3), rel=1e-14)
    assert s.steps(0) == pytest.approx(0.1)  # eta_0 := eta_1


def test_mixing_rounds_by_hand():
    chain = ch2.ChainMixing(C_P=1.0, T_P=2, lam=math.exp(-1.0), M=4)
    # J(t) = min(max(ceil(ln(2 * 1 * 0.5 * t) / 1), 2), t) with H = 0.5: ln t
    assert ch2.mixing_rounds([1, 2, 3, 20, 1000], chain, 0.5).tolist() == [1, 2, 2, 3, 7]


def test_phi_series_upper_end_brackets_a_long_sum():
    sched, chain = ch2.PowerSchedule(0.05, 0.8), ch2.ChainMixing(2.0, 0, 0.9, 4)
    head, upper = ch2.phi_series(sched, chain, 1.5, terms=2000)
    long_head, _ = ch2.phi_series(sched, chain, 1.5, terms=400_000)
    assert head <= long_head <= upper


def test_eps_opt_bound_by_hand():
    sched, chain = ch2.PowerSchedule(0.01, 1.0), ch2.ChainMixing(1.0, 1, 0.5, 2)
    c = ch2.Ch2Constants(L=1.0, K=1, diam=2.0, D=1.0, G=2.0, H=1.0, Gamma=0.5, pi=(0.5,), sigma2=(4.0,))
    e = ch2.eps_opt_bound([2.0], c, chain, sched, terms=1000)
    S2 = 1e-4 * math.pi ** 2 / 6
    assert e.sigma_diag[0] == pytest.approx(2 * 2 * 0.5 * 4 * S2)
    assert e.v == pytest.approx(2 * 4 + 0.25 * 2 * 2 * (S2 + math.pi ** 2 / 6))
    assert e.psi == pytest.approx((4 * 1 * (1 + 2) * 0.5 + 2 * 4) * S2)  # T_P = 1: empty step sum
    first = (0.5 * 4 * e.sigma_diag[0] + e.v) / 1.0
    assert e.value == pytest.approx(first + e.psi + e.phi / math.log(2))
    assert e.value <= e.value_upper


def test_bias_bounds_and_biased_weights():
    p = ch2.biased_weights([0.5, 1.0], [2.0, 1.0])
    np.testing.assert_allclose(p, [0.5, 0.5])
    b = ch2.bias_bounds(chi2=0.2, tv=0.1, kappa2=4.0, Gamma=1.5, Gamma_prime=2.0)
    assert b["(2.11)"] == pytest.approx(4 * 0.2 * 1.5) and b["(2.20)"] == pytest.approx(4 * 4 * 0.01 * 2.0)


@pytest.mark.parametrize("seed", range(4))
def test_kkt_closed_form_matches_cvxpy(seed):
    rng = np.random.default_rng(seed)
    pi, A = rng.uniform(0.05, 1, 7), rng.uniform(0.1, 3, 7)
    B, Q = rng.uniform(0, 5), rng.uniform(0.5, 4)
    kkt, cvx = ch2.optimal_q_kkt(A, pi, B, Q), ch2.optimal_q_cvx(A, pi, B, Q)
    assert kkt.value == pytest.approx(cvx.value, rel=1e-7)
    np.testing.assert_allclose(kkt.q, cvx.q, atol=1e-4 * Q)
    assert kkt.q.sum() == pytest.approx(Q)
    assert kkt.iota == pytest.approx(kkt.value)  # stationarity: iota = J(q*) - C


def test_kkt_theta_matches_thesis_a207():
    pi = np.linspace(0.1, 0.9, 8)
    sol = ch2.optimal_q_kkt(pi, pi, 1.0, 1.0)
    assert np.sum(sol.q > 0) >= 2
    assert sol.theta == pytest.approx(ch2.thesis_theta(pi, pi, 1.0, sol.q), rel=1e-10)


def test_kkt_single_client_by_hand():
    # one client: q = Q, J = (A Q^2 / 2 + B) / (pi Q)
    sol = ch2.optimal_q_kkt([2.0], [0.5], 3.0, 1.5)
    assert sol.q[0] == pytest.approx(1.5) and sol.value == pytest.approx((0.5 * 2 * 2.25 + 3) / 0.75)


def test_kkt_keeps_the_budget_when_b_dominates():
    """B >> A Q^2: J(q) ~ B / pi^T q is least with all the budget on the most available client (iota ~ sqrt(B) makes
    iota pi_i - theta a difference of huge terms, which the solver must not lose to rounding)."""
    pi = np.linspace(0.1, 0.9, 100)
    sol = ch2.optimal_q_kkt(1e4 * pi, pi, 5e31, 100.0)
    assert np.allclose(sol.q, np.where(np.arange(100) == 99, 100.0, 0.0), rtol=1e-12, atol=0)
    assert sol.theta > 0


def test_guideline_a_regimes():
    pi = np.linspace(0.1, 0.9, 8)
    low_b = ch2.guideline_a_regime(ch2.optimal_q_kkt(pi, pi, 0.01, 1.0), pi)
    high_b = ch2.guideline_a_regime(ch2.optimal_q_kkt(pi, pi, 1.0, 1.0), pi)
    assert low_b["decreasing_in_pi"] and low_b["excluded"] == 0 and low_b["theta"] < 0
    assert high_b["excluded"] > 0 and high_b["increasing_in_pi"] and high_b["theta"] > 0


@pytest.mark.parametrize("bad", [dict(eta1=0.0), dict(eta1=0.1, power=0.5), dict(eta1=0.1, power=1.5)])
def test_schedule_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        ch2.PowerSchedule(**bad)


def test_ch2_bad_inputs():
    with pytest.raises(ValueError, match="lam"):
        ch2.ChainMixing(1.0, 0, 1.0, 2)
    with pytest.raises(ValueError, match="A_diag"):
        ch2.optimal_q_kkt([0.0, 1.0], [0.5, 0.5], 1.0, 1.0)
    with pytest.raises(ValueError, match="Q"):
        ch2.optimal_q_kkt([1.0, 1.0], [0.5, 0.5], 1.0, 0.0)
    with pytest.raises(ValueError, match="K"):
        ch2.Ch2Constants(1.0, 0, 1.0, 1.0, 1.0, 1.0, 0.0, (0.5,), (1.0,))


# ----- ch. 3 upper bound ---------------------------------------------------------------------------------------
def _setting(**kw):
    base = dict(p=(1.0, 0.5), L=2.0, sigma2=1.0, sigma_g2=0.5, K=2, gap=3.0, H1=4.0, eta_c=0.01, eta_s=1.0,
                beta=0.5, T=10)
    return ch3.Ch3Setting(**{**base, **kw})


def test_participation_summaries_by_hand():
    s = ch3.participation_summaries([1.0, 0.5, 0.25])
    assert s["inv_p_var"] == pytest.approx((0 + 1 + 3) / 3) and s["p_var"] == pytest.approx(0.75)
    assert s["p_avg"] == pytest.approx(1.75 / 3) and s["p_min"] == 0.25
    assert s["mean_inv_p"] == pytest.approx(1 + s["inv_p_var"])
    assert ch3.participation_summaries([1.0, 1.0])["p_var"] == math.inf


def test_rhs_b124_by_hand():
    s = _setting()
    t = ch3.rhs_b124(s)
    eta, kd, inv_var = 0.02, 1e-4 * 4 * 2, 0.5  # eta = 1 * 0.01 * 2, kappa_K = eta_c^2 L^2 K(K-1)
    ratio = 0.75 / 0.5
    assert t["iterate init"] == pytest.approx(4 * 3 / (eta * 10))
    assert t["memory init"] == pytest.approx(0.25 * 48 * eta * 2 / 10 * inv_var * 1.0 * 4)
    assert t["stochastic"] == pytest.approx(4 * eta * 2 / 2 * 1.5 * 0.5)
    assert t["stochastic stale"] == pytest.approx(0.25 * 48 * eta * 2 * inv_var * ratio * (1 + 2 * kd) * 0.5)
    assert t["heterogeneity fresh"] == pytest.approx(0.25 * 24 * eta * 2 / 2 * inv_var * 0.5)
    assert t["total"] == pytest.approx(sum(v for k, v in t.items() if k != "total"))


def test_corollaries_are_the_special_cases():
    s = _setting()
    assert ch3.corollary_fedavg(s)["stochastic stale"] == 0 and ch3.corollary_fedavg(s)["memory init"] == 0
    assert ch3.corollary_fedvarp(s)["heterogeneity fresh"] == 0


def test_beta_star_exact_minimises_b124():
    s = _setting(sigma_g2=3.0, p=(1.0, 0.2, 0.6))
    grid = np.linspace(0, 1, 20001)
    totals = [ch3.rhs_b124(s.replace(beta=b))["total"] for b in grid]
    assert ch3.beta_star_exact(s) == pytest.approx(grid[int(np.argmin(totals))], abs=1e-4)
    assert ch3.beta_star_exact(_setting(sigma_g2=0.0)) == 0.0 and ch3.beta_star(_setting(sigma_g2=0.0), 2, 16) == 0.0


def test_beta_star_printed_form_by_hand():
    s = _setting(K=1)  # no drift: beta* = (sg2/N) / (a1 ratio sigma2/K + sg2/N)
    assert ch3.beta_star(s, 2.0, 16.0) == pytest.approx(0.25 / (2 * 1.5 * 1.0 + 0.25))


def test_step_conditions_flag_the_unstated_ones():
    # ten clients at p = 0.1, eta_c at its cap 1/(8LK), eta_s just inside (B.89): (B.107) fails (eta 0.0175 > 0.0074)
    rows = ch3.step_conditions(_setting(L=1.0, eta_c=1 / 16, eta_s=0.14, beta=0.5, p=(0.1,) * 10))
    stated = [r for r in rows if r["stated"]]
    assert len(stated) == 4 and len(rows) == 10
    assert all(r["holds"] for r in stated)
    assert [r["name"][:7] for r in rows if not r["holds"]] == ["(B.107)"]


def test_ch3_bad_inputs():
    with pytest.raises(ValueError, match="p must"):
        ch3.participation_summaries([0.0, 1.0])
    with pytest.raises(ValueError, match="beta"):
        _setting(beta=1.5)
    with pytest.raises(ValueError, match="a1"):
        ch3.beta_star(_setting(), 0.0, 1.0)


# ----- ch. 3 lower bound -----------------------------------------------------------------------------------------
def test_span_minimum_by_least_squares():
    L, n = 1.5, 6
    A = (L / 4) * chain_matrix(2 * n + 1)
    e1 = np.eye(2 * n + 1)[0] * L / 4
    for m in range(0, 2 * n):
        if m == 0:
            best = float(e1 @ e1)
        else:
            x, *_ = np.linalg.lstsq(A[:, :m], e1, rcond=None)
            best = float(np.sum((A[:, :m] @ x - e1) ** 2))
        assert best == pytest.approx(float(lb.span_min_grad_sq(L, m)), rel=1e-10)


def test_lemma_b2_printed_is_exact_at_its_own_horizon():
    L, t = 1.0, 7
    assert float(lb.lemma_b2_printed(L, lb.chain_gap(L, t), t)) == pytest.approx(float(lb.span_min_grad_sq(L, t - 1)))


def test_lower_bounds_by_hand():
    assert float(lb.lower_bound_b141(2.0, 0.5, 0.5, 2)) == pytest.approx(3 * 2 * 0.5 / (3 * 13 ** 2))
    assert float(lb.lower_bound_corrected(1.0, 0.5, 2)) == pytest.approx(3 / (8 * 6 * 7 * 13))
    assert float(lb.expected_support_bound(0.25, 4)) == pytest.approx(3 * 0.75 + 2)
    assert lb.periodic_support_bound([1, 2, 3, 4], 2).tolist() == [2, 3, 4, 5]


def test_nesterov_chain_ground_truth():
    prob = NesterovChain(5, L=2.0)
    assert np.abs(prob.grad(prob.x_star)).max() < 1e-14
    assert float(prob.value(np.zeros(prob.dim)) - prob.f_star) == pytest.approx(lb.chain_gap(2.0, 5))
    np.testing.assert_allclose(prob.hessian, 0.5 * chain_matrix(11))


def test_lower_bound_bad_inputs():
    with pytest.raises(ValueError, match="p_min"):
        lb.lower_bound_corrected(1.0, 0.0, 3)
    with pytest.raises(ValueError, match="horizon"):
        NesterovChain(0)


def test_largest_admissible_eta_s_is_on_the_boundary():
    s = _setting(p=(1.0, 1.0, 0.3, 0.3), L=1.0, eta_c=0.05, beta=1.0)
    top = ch3.largest_admissible_eta_s(s)
    assert ch3.admissible(s.replace(eta_s=top)) and not ch3.admissible(s.replace(eta_s=top * (1 + 1e-9)))
    assert ch3.largest_admissible_eta_s(s.replace(eta_c=1.0)) == 0.0  # eta_c above 1/(8LK)


def test_ch2_first_step_cap():
    (value, cap, ok), = ch2.step_conditions(ch2.PowerSchedule(0.01), L=2.0, K=3, Q=1.5).values()
    assert cap == pytest.approx(1 / (2 * 2 * (1 + 9))) and ok


def test_support_grows_by_one_per_round_under_full_participation():
    from theorylab.config import RunConfig
    from theorylab.runner import run

    cfg = RunConfig(problem={"name": "nesterov_chain", "horizon": 10}, participation={"name": "bernoulli",
                                                                                      "p": [1.0, 1.0]},
                    algorithm={"name": "fedavg", "aggregation": "active", "local_steps": 3, "lr": 0.2},
                    rounds=15, replicas=2, seed=0, every=1)
    support = run(cfg).metrics["server.support"]
    np.testing.assert_array_equal(support, np.broadcast_to(np.arange(16), (2, 16)))  # k^(t) = t (B.134)


# ----- the Omega-form (3.13), the support's first passage, the equal-p_var designs ------------------------------
def test_omega_constant_by_hand_and_by_grid():
    h = lb.omega_ratio(np.array([0.0, 1.0, 1e6]))
    assert h[0] == pytest.approx(2 * 81) and h[1] == pytest.approx(3 * 169 / 2) and h[2] == pytest.approx(16, rel=1e-5)
    grid = lb.omega_ratio(np.linspace(0, 20, 200_001)).max()
    assert lb.omega_constant() == pytest.approx(grid, rel=1e-8) and lb.omega_constant() >= h.max()


def test_omega_form_is_below_b141_and_tight_up_to_its_constant():
    gap = lb.chain_gap(1.0, 10)
    x = np.linspace(0.0, 40.0, 401)  # p_min t
    omega, printed = lb.lower_bound_omega(1.0, gap, 0.5, 2 * x), lb.lower_bound_b141(1.0, gap, 0.5, 2 * x)
    assert np.all(omega <= printed * (1 + 1e-12))
    assert np.all(printed / omega <= lb.omega_constant() / 16 + 1e-9)
    # p_min = 0.5, t = 2: (B.141) = 3 gap / (3 * 13^2), the Omega-form 3 gap / (h* * 2)
    assert float(lb.lower_bound_omega(1.0, gap, 0.5, 2)) == pytest.approx(3 * gap / (2 * lb.omega_constant()))


def test_support_passage_mean_by_hand():
    assert lb.support_passage_mean(0, 0.3) == 0
    assert lb.support_passage_mean(1, 0.3) == 1  # i0 is always active
    assert lb.support_passage_mean(4, 0.25) == pytest.approx(2 + 2 / 0.25)
    assert lb.support_passage_mean(5, 0.5) == pytest.approx(3 + 2 / 0.5)
    with pytest.raises(ValueError, match="k must"):
        lb.support_passage_mean(-1, 0.5)
    with pytest.raises(ValueError, match="p_min"):
        lb.support_passage_mean(2, 1.5)


def test_support_passage_matches_a_direct_simulation_of_the_zero_chain():
    # independent of the kernels: Bernoulli(p) masks drive k -> k + 1 (i0 at even k, i1 at odd k), as (B.134)
    rng = np.random.Generator(np.random.PCG64(3))
    p, k_target, runs = 0.2, 4, 20_000
    active = rng.random((runs, 400)) < p
    times = np.empty(runs)
    for r in range(runs):
        k, t = 0, 0
        while k < k_target:
            k += 1 if k % 2 == 0 or active[r, t] else 0
            t += 1
        times[r] = t
    assert times.mean() == pytest.approx(lb.support_passage_mean(k_target, p), abs=4 * times.std() / np.sqrt(runs))


def test_equal_pvar_designs_keep_p_var_and_p_min():
    from theorylab.validations.thesis.fedstale.scaling import equal_pvar_design

    for p_min in (0.5, 0.3, 0.2):
        p = equal_pvar_design(p_min, mean_inv_p=2.0, n=4)
        s = ch3.participation_summaries(p)
        assert s["inv_p_var"] == pytest.approx(1.0) and s["p_min"] == pytest.approx(p_min)
    with pytest.raises(ValueError, match="admits no design"):
        equal_pvar_design(0.1, mean_inv_p=2.0, n=4)
    with pytest.raises(ValueError, match="p_min"):
        equal_pvar_design(0.0)
