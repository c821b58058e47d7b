"""Verdict helpers of theorylab.checks that came from the Performative FL claims (printed, paired_excess,
fitted_slope_at_most), on synthetic data whose answer is computed by hand."""

import numpy as np
import pytest

from theorylab.checks import fitted_slope_at_most, paired_excess, printed
from theorylab.fitting import SlopeFit


# ----- printed ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, tolerance", [
    ("1.211", 5e-4),    # three decimals: half a unit of 1e-3
    ("6e10", 5e9),      # no decimals, exponent 10: half of 1e10
    ("8.2e3", 50.0),    # one decimal, exponent 3: half of 1e2
    ("1164", 0.5),
    ("0.0413", 5e-5),
    ("-2.0", 0.05),
    ("2.30e-12", 5e-15),
])
def test_printed_tolerance_is_half_a_unit_of_the_last_digit(text, tolerance):
    check = printed("p", float(text), text)
    assert check.tolerance == pytest.approx(tolerance, rel=1e-12)
    assert check.theory == float(text) and check.relation == "==" and check.verdict == "holds"


@pytest.mark.parametrize("text, inside, outside", [
    ("1.211", 4.9e-4, 5.1e-4),
    ("6e10", 4.9e9, 5.1e9),
])
def test_printed_holds_just_inside_the_rounding_and_is_violated_just_outside(text, inside, outside):
    value = float(text)
    for sign in (1, -1):
        assert printed("p", value + sign * inside, text).verdict == "holds"
        assert printed("p", value + sign * outside, text).verdict == "violated"


def test_printed_default_note_and_explicit_note():
    assert printed("p", 1.0, "1.0").note == "digest value, tolerance = rounding of its last digit"
    assert printed("p", 1.0, "1.0", "digest §4.1.4 table").note == "digest §4.1.4 table"


# ----- paired_excess ----------------------------------------------------------------------------------------------
# Differences [10, 11, 9, 10, 10]: mean 10, sample sd sqrt(2/4) = 0.70711, standard error 0.70711/sqrt(5) = 0.31623;
# the 99.9% two-sided Student-t quantile with 4 degrees of freedom is 8.6103 (tables), so the half-width is 2.7228.
DIFF = np.array([10.0, 11.0, 9.0, 10.0, 10.0])
HALF_WIDTH = 8.6103 * np.sqrt(0.5) / np.sqrt(5)


def test_paired_excess_clearly_positive_holds():
    lower = np.array([3.0, -1.0, 0.5, 2.0, 7.0])
    check = paired_excess("e", lower + DIFF, lower, note="synthetic")
    assert check.verdict == "holds"
    assert check.measured == pytest.approx(10.0) and check.theory == 0.0
    assert check.ci == pytest.approx((10.0 - HALF_WIDTH, 10.0 + HALF_WIDTH), abs=1e-3)
    assert check.relation == "> 0 (99.9% CI over seeds)" and check.note == "5 seeds; synthetic"


def test_paired_excess_clearly_negative_is_violated():
    check = paired_excess("e", np.zeros(5), DIFF, note="synthetic")
    assert check.verdict == "violated"
    assert check.measured == pytest.approx(-10.0)
    assert check.ci == pytest.approx((-10.0 - HALF_WIDTH, -10.0 + HALF_WIDTH), abs=1e-3)


def test_paired_excess_straddling_zero_is_inconclusive():
    # differences [1, -1, 2, -2, 0]: mean 0, so any interval around it contains 0
    check = paired_excess("e", np.array([1.0, -1.0, 2.0, -2.0, 0.0]), np.zeros(5), note="synthetic")
    assert check.verdict == "inconclusive"
    assert check.measured == pytest.approx(0.0) and check.ci[0] < 0 < check.ci[1]


def test_paired_excess_a_small_mean_with_a_large_spread_is_inconclusive():
    # mean 1 but sd ~ 5.24: the half-width 8.6103 * 5.244 / sqrt(5) = 20.2 swamps it
    check = paired_excess("e", np.array([8.0, -6.0, 5.0, -3.0, 1.0]), np.zeros(5), note="synthetic")
    assert check.measured == pytest.approx(1.0) and check.verdict == "inconclusive"


# ----- fitted_slope_at_most ---------------------------------------------------------------------------------------
def _fit(ci, level=0.95):
    return SlopeFit(slope=(ci[0] + ci[1]) / 2, intercept=0.0, ci=ci, level=level)


@pytest.mark.parametrize("ci, verdict", [
    ((-1.5, -1.1), "holds"),         # the whole CI lies below the bound
    ((-1.2, -1.0), "holds"),         # its upper end on the bound still holds (<=)
    ((-0.9, -0.5), "violated"),      # the whole CI lies above the bound
    ((-1.2, -0.8), "inconclusive"),  # straddles
    ((-1.0, -0.8), "inconclusive"),  # its lower end on the bound: not strictly above
])
def test_fitted_slope_at_most_is_decided_by_the_ci(ci, verdict):
    fit = _fit(ci)
    check = fitted_slope_at_most("s", fit, -1.0, "synthetic")
    assert check.verdict == verdict
    assert check.measured == fit.slope and check.theory == -1.0 and check.ci == ci and check.note == "synthetic"


def test_fitted_slope_at_most_names_the_fit_level():
    # slope_with_ci's default level 0.95 gives the relation the performative claims always printed
    assert fitted_slope_at_most("s", _fit((-2.0, -1.5)), -1.0, "").relation == "<= (95% bootstrap CI)"
    assert fitted_slope_at_most("s", _fit((-2.0, -1.5), level=0.99), -1.0, "").relation == "<= (99% bootstrap CI)"


def test_fitted_slope_at_most_uses_the_given_bound():
    fit = _fit((-1.8, -1.6))
    assert fitted_slope_at_most("s", fit, -2.0, "").verdict == "violated"
    assert fitted_slope_at_most("s", fit, -1.5, "").verdict == "holds"
    assert fitted_slope_at_most("s", fit, -1.7, "").verdict == "inconclusive"
