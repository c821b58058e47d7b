"""The verdict rules of theorylab.checks, each on synthetic data whose answer is computed by hand or by an
independent formula (printed tables, math.erfc, Student-t quantiles)."""

import math
from decimal import ROUND_HALF_UP, Decimal
from statistics import NormalDist

import numpy as np
import pytest

from theorylab.checks import (FAMILY_LEVEL, at_least, at_most, bonferroni_z, definitional, equal, in_interval,
                              interval_verdict, max_standardised_gap, no_power, paired_difference, printed,
                              slope_check, trend)
from theorylab.trace import mean_ci

X = np.array([1.0, 2.0, 4.0, 8.0])


# ----- the one interval rule ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("lo, hi, side, verdict", [
    (0.0, 1.0, "below", "holds"), (0.0, 2.0, "below", "holds"), (2.5, 3.0, "below", "violated"),
    (1.0, 3.0, "below", "inconclusive"),  # straddles the bound 2
    (2.0, 3.0, "above", "holds"), (0.0, 1.0, "above", "violated"), (1.0, 3.0, "above", "inconclusive"),
    (math.nan, 1.0, "below", "inconclusive"),
])
def test_interval_verdict_against_the_bound_two(lo, hi, side, verdict):
    assert interval_verdict(lo, hi, 2.0, side) == verdict


# ----- exact relations ---------------------------------------------------------------------------------------------
def test_equal_needs_a_basis_and_refuses_monte_carlo():
    assert equal("x", 1.0, 1.0 + 1e-12, atol=1e-9, basis="closed_form").verdict == "holds"
    assert equal("x", 1.0, 1.1, atol=1e-9, basis="enumeration").verdict == "violated"
    with pytest.raises(ValueError, match="samples"):
        equal("x", 1.0, 1.0, atol=0.0, basis="monte_carlo")
    with pytest.raises(ValueError, match="basis must be one of"):
        equal("x", 1.0, 1.0, atol=0.0, basis="guess")


def test_exact_inequalities_report_their_tightness():
    c = at_most("b", 2.0, 10.0, basis="closed_form")
    assert c.verdict == "holds" and c.tightness == pytest.approx(5.0) and c.vacuous is False
    assert at_most("b", 0.5, 10.0, basis="closed_form").vacuous is True  # 20 > 10
    assert at_most("b", 11.0, 10.0, basis="closed_form").verdict == "violated"
    assert at_least("b", 10.0, 2.0, basis="closed_form").tightness == pytest.approx(5.0)
    assert at_least("b", 1.0, 2.0, basis="closed_form").verdict == "violated"


def test_trend_and_definitional():
    assert trend("t", 0.5, True, "< 1", 1.0, basis="enumeration").verdict == "holds"
    assert trend("t", 1.5, False, "< 1", 1.0, basis="enumeration").verdict == "violated"
    d = definitional("d", 1.0, 1.0, 0.0)
    assert d.basis == "definitional" and d.deciding is False


# ----- printed values ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, tolerance", [
    ("1.211", 5e-4), ("6e10", 5e9), ("8.2e3", 50.0), ("1164", 0.5), ("0.0413", 5e-5), ("-2.0", 0.05),
])
def test_printed_tolerance_is_half_a_unit_of_the_last_digit(text, tolerance):
    check = printed("p", float(text), text)
    assert check.tolerance == pytest.approx(tolerance, rel=1e-12) and check.basis == "paper"
    assert check.verdict == "holds" and check.relation == "== printed"
    assert printed("p", float(text) + 1.02 * tolerance, text).verdict == "violated"
    assert printed("p", float(text) - 0.98 * tolerance, text).verdict == "holds"


def test_a_printed_value_is_reproduced_by_a_stated_rounding():
    # 1.254945 is 1.25 to two decimals, but the same quantity printed as 1.255 rounds (half up) to 1.26
    exact = 1.254945
    twice = float(Decimal(str(round(exact, 3))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    assert twice == 1.26
    plain = printed("p", exact, "1.26")
    assert plain.verdict == "violated"
    read = printed("p", exact, "1.26", readings={"rounding 1.255 to 2 decimals": twice, "other": 0.0})
    assert read.verdict == "holds" and "reproduced by rounding 1.255 to 2 decimals" in read.relation
    assert "readings tried" in read.note
    assert printed("p", exact, "1.26", readings={"other": 1.30}).verdict == "violated"


# ----- Monte Carlo relations ---------------------------------------------------------------------------------------
def test_in_interval_uses_the_student_t_interval_at_the_family_level():
    samples = np.random.default_rng(0).normal(0.3, 1.0, size=4000)
    c = in_interval("m", samples, 0.3)
    assert c.verdict == "holds" and c.level == FAMILY_LEVEL and c.basis == "monte_carlo"
    assert c.ci == pytest.approx(tuple(float(v) for v in mean_ci(samples, FAMILY_LEVEL)))
    assert in_interval("m", samples, 0.6).verdict == "violated"
    narrower = c.decide(0.9)
    assert c.ci[0] < narrower.ci[0] < narrower.ci[1] < c.ci[1] and narrower.level == 0.9


def test_inequality_from_samples_is_inconclusive_when_its_interval_straddles():
    rng = np.random.default_rng(1)
    assert at_most("b", None, 10.0, basis="monte_carlo", samples=rng.normal(5, 1, 50)).verdict == "holds"
    assert at_most("b", None, 10.0, basis="monte_carlo", samples=rng.normal(15, 1, 50)).verdict == "violated"
    straddle = at_most("b", None, 10.0, basis="monte_carlo", samples=rng.normal(10, 1, 50))
    assert straddle.verdict == "inconclusive" and straddle.tightness is None
    lhs = rng.normal(5, 1, 50)
    paired = at_most("b", None, lhs + 1.0, basis="monte_carlo", samples=lhs)  # E[lhs - rhs] = -1 exactly
    assert paired.verdict == "holds" and paired.ci[1] == pytest.approx(paired.theory - 1.0)
    with pytest.raises(ValueError, match="monte_carlo"):
        at_most("b", None, 10.0, basis="closed_form", samples=lhs)


# Differences [10, 11, 9, 10, 10]: mean 10, sample sd sqrt(0.5); the 99.9% two-sided t quantile with 4 degrees of
# freedom is 8.6103 (printed tables), so the half-width is 8.6103 * sqrt(0.5) / sqrt(5) = 2.7228.
DIFF = np.array([10.0, 11.0, 9.0, 10.0, 10.0])


def test_paired_difference_interval_is_the_paired_student_t_interval():
    lower = np.array([3.0, -1.0, 0.5, 2.0, 7.0])
    c = paired_difference("e", lower + DIFF, lower)
    assert c.verdict == "holds" and c.measured == pytest.approx(10.0)
    assert c.ci == pytest.approx((10.0 - 2.7228, 10.0 + 2.7228), abs=2e-4)


@pytest.mark.parametrize("higher, lower, strict, verdict", [
    (DIFF, np.zeros(5), True, "holds"),
    (np.zeros(5), DIFF, True, "violated"),
    (np.array([1.0, -1.0, 2.0, -2.0, 0.5]), np.zeros(5), True, "inconclusive"),
    # a weak ordering whose mean difference is >= 0 but whose interval contains 0 is not confirmed
    (np.array([1.0, -1.0, 2.0, -2.0, 0.5]), np.zeros(5), False, "inconclusive"),
    (np.array([1.0, np.nan, 3.0]), np.zeros(3), True, "inconclusive"),
    (np.array([1.0, 2.0, -np.inf]), np.zeros(3), False, "inconclusive"),
])
def test_paired_difference_verdicts(higher, lower, strict, verdict):
    c = paired_difference("c", higher, lower, strict=strict)
    assert c.verdict == verdict and c.theory == 0.0
    if verdict == "inconclusive" and np.all(np.isfinite(higher - lower)):
        assert "NOT SIGNIFICANT" in c.note
    if not np.all(np.isfinite(higher - lower)):
        assert "diverged" in c.note


def test_bonferroni_z_splits_the_error_over_the_comparisons():
    assert bonferroni_z(1) == pytest.approx(3.2905267, abs=1e-6)  # printed tables, 99.9% two-sided
    assert bonferroni_z(1, level=0.95) == pytest.approx(NormalDist().inv_cdf(0.975), rel=1e-12)
    for k in (1, 2, 10, 1000):
        tail = 0.5 * math.erfc(bonferroni_z(k) / math.sqrt(2))  # P(N(0, 1) > z), independently of scipy
        assert tail == pytest.approx((1 - FAMILY_LEVEL) / (2 * k), rel=1e-9)
    with pytest.raises(ValueError):
        bonferroni_z(0)


def test_max_standardised_gap_compares_with_the_bonferroni_value():
    assert max_standardised_gap("z", 3.0, 10).verdict == "holds"  # z_10 = 3.89
    assert max_standardised_gap("z", 4.2, 10).verdict == "violated"
    assert max_standardised_gap("z", 4.2, 1000).verdict == "holds"  # z_1000 = 4.89


# ----- slopes ------------------------------------------------------------------------------------------------------
def _power_law(exponent: float, replicas: int = 64, noise: float = 0.02) -> np.ndarray:
    """Replicas of ``x**exponent`` with independent multiplicative noise: the true log-log slope is ``exponent``."""
    rng = np.random.default_rng(0)
    return X ** exponent * np.exp(noise * rng.standard_normal((replicas, len(X))))


@pytest.mark.parametrize("exponent, direction, verdict", [
    (-1.0, "at_most", "holds"), (0.0, "at_most", "violated"), (-0.5, "at_most", "inconclusive"),
    (3.0, "at_least", "holds"), (1.0, "at_least", "violated"), (2.0, "at_least", "inconclusive"),
])
@pytest.mark.parametrize("replicas", [64, 5])  # bootstrap, and t-interval of per-replica slopes
def test_slope_check_has_no_slack(exponent, direction, verdict, replicas):
    predicted = -0.5 if direction == "at_most" else 2.0
    check = slope_check("s", X, _power_law(exponent, replicas), predicted, direction, note="synthetic")
    assert check.verdict == verdict and check.tolerance is None and check.basis == "monte_carlo"
    assert ("not tight" in check.note) == (verdict == "holds")
    assert ("per-replica" in check.note) == (replicas <= 10)


def test_slope_check_just_beyond_the_exponent_is_not_forgiven():
    check = slope_check("s", X, _power_law(-0.45, replicas=400, noise=0.01), -0.5, "at_most", note="synthetic")
    assert check.verdict == "violated" and check.ci[0] > -0.5


def test_slope_check_outside_the_regime_decides_nothing():
    for exponent in (0.0, -1.0):  # beyond the bound, and on its side: neither is evidence outside the regime
        check = slope_check("s", X, _power_law(exponent), -0.5, "at_most", note="synthetic", regime="T << (sm)^3")
        assert check.verdict == "inconclusive" and "NO POWER" in check.note and "T << (sm)^3" in check.note


def test_no_power_turns_a_hold_into_inconclusive_and_keeps_a_violation():
    held = no_power(at_most("b", 1.0, 2.0, basis="closed_form"), "any rate looks steep here")
    assert held.verdict == "inconclusive" and held.note.startswith("NO POWER: any rate looks steep here")
    assert no_power(at_most("b", 3.0, 2.0, basis="closed_form"), "r").verdict == "violated"
    sampled = no_power(in_interval("m", np.random.default_rng(0).normal(0, 1, 100), 0.0), "r")
    assert sampled.decide(0.99).verdict == "inconclusive"


# ----- small-sample coverage ---------------------------------------------------------------------------------------
def test_student_t_interval_covers_a_normal_mean_at_five_seeds():
    """2,000 samples of size 5 from N(1, 2^2): the 95% t-interval must cover the mean 93-97% of the time (a
    percentile bootstrap covers about 84% here).  For a skewed law (exponential) the same interval covers only
    about 87-88%, which theorylab.trace.mean_ci's docstring states."""
    rng = np.random.Generator(np.random.PCG64(2026))
    samples = rng.normal(1.0, 2.0, size=(2000, 5))
    lo, hi = mean_ci(samples, 0.95, axis=1)
    coverage = float(np.mean((lo <= 1.0) & (1.0 <= hi)))
    assert 0.93 <= coverage <= 0.97
    skewed = rng.exponential(1.0, size=(2000, 5))
    lo, hi = mean_ci(skewed, 0.95, axis=1)
    assert 0.84 <= float(np.mean((lo <= 1.0) & (1.0 <= hi))) <= 0.91
