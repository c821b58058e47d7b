"""Seed 004's theory calculators against the digest's worked numbers (digest 004 §3.2-3.3) and refused inputs."""

from __future__ import annotations

import math

import pytest

from theorylab.bounds import masfl as b


def test_feasible_quadratic_example_of_the_digest():
    # digest §3.2: S=4, K=5, tau_max=2, T=1000, L=1 gives eta <= 6.04e-3
    assert b.eta_max_thm31(4, 5, 1000, 1.0, 2) == pytest.approx(6.04e-3, abs=5e-6)
    steps = b.steps_thm31(4, 5, 1000, 1.0, 2)
    assert steps.beta == pytest.approx(math.sqrt(0.02)) and steps.gamma == pytest.approx(steps.beta / 4)
    a, kappa = b.a_and_kappa(4, 5, 1000, 1.0, 2, 0.5 * steps.eta)
    assert 0 < a < 0.25 and kappa > 2


def test_condition_at_eta_max_is_tight():
    S, K, T, L, tau = 4, 5, 1000, 2.0, 2
    eta = b.eta_max_thm31(S, K, T, L, tau)
    a = tau ** 2 * S * K / T + 20 * math.e ** 2 * eta ** 2 * K ** 2 * L ** 2
    assert 1 - 4 * a - math.sqrt(S * K / T) == pytest.approx(0.0, abs=1e-12)


def test_paper_experiments_are_infeasible():
    # digest §3.2: T=600, S=10, tau_max=4: slack -6045 at K=10 and -117.5 at K=1
    assert b.feasibility_slack(10, 10, 600, 4) == pytest.approx(-6045.0, abs=0.5)
    assert b.feasibility_slack(10, 1, 600, 4) == pytest.approx(-117.5, abs=0.05)
    with pytest.raises(ValueError, match="infeasible.*S=10, K=10, T=600, tau_max=4"):
        b.eta_max_thm31(10, 10, 600, 1.0, 4)


def test_thm41_steps_match_the_digest_table():
    # digest §3.3: CIFAR-10 K=10 -> beta 0.408, gamma 0.0261, eta 0.00408; FMNIST K=12 -> 0.447, 0.0273, 0.00340
    for K, want in ((10, (0.408, 0.0261, 0.00408)), (12, (0.447, 0.0273, 0.00340))):
        got = b.steps_thm41(10, K, 600)
        for value, ref in zip(got, want):
            assert value == pytest.approx(ref, rel=2e-3)


def test_thm41_terms_include_the_omitted_one_and_table1_lists_all_methods():
    terms = b.thm41_terms(4, 5, 10_000, 1.0, 0.5, 2.0, 4, 1.0)
    assert terms["omitted (App. D.3)"] == pytest.approx(1.0 * 4 * 1.0 * 20 ** 0.75 / 10_000 ** 1.25)
    rates = b.table1_rates(4, 5, 10_000, 4, 1.0)
    assert set(rates) == {"FedBuff", "CA2FL", "DeFedAvg-nIID", "FADAS", "MasFL", "AdaMasFL"}
    assert rates["AdaMasFL"] == pytest.approx(20_000 ** -0.25 / 10 ** 0.25 * 1 + 2 / 10_000 ** 0.375)


def test_appc_bound_without_noise_is_kappa_times_the_descent_term():
    _, kappa = b.a_and_kappa(2, 2, 10_000, 3.0, 1, 1e-3)
    assert b.appc_bound(2, 2, 10_000, 8, 3.0, 0.0, 1.5, 1, 1e-3) == pytest.approx(kappa * 4 * 3.0 * 1.5 / 200.0)


@pytest.mark.parametrize("call,name", [(lambda: b.steps_thm41(0, 5, 100), "S"),
                                       (lambda: b.steps_thm41(2, 0, 100), "K"),
                                       (lambda: b.steps_thm41(20, 10, 100), "T >= S\\*K"),
                                       (lambda: b.eta_max_thm31(2, 2, 100, 0.0, 1), "L"),
                                       (lambda: b.eta_max_thm31(2, 2, 100, 1.0, -1), "tau_max"),
                                       (lambda: b.a_and_kappa(2, 2, 100, 1.0, 1, 1.0), "1 - 4a"),
                                       (lambda: b.steps_thm31(2, 2, 1000, 1.0, 1, eta_fraction=2), "eta_fraction")])
def test_bad_inputs_are_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()
