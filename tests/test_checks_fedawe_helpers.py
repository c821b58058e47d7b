"""Verdict helpers of theorylab.checks that came from the FedAWE claims (slope_check, bonferroni_z, ordering_check),
on synthetic data with a known answer."""

import math
from statistics import NormalDist

import numpy as np
import pytest

from theorylab.checks import MC_LEVEL, bonferroni_z, ordering_check, slope_check

X = np.array([1.0, 2.0, 4.0, 8.0])


# ----- slope_check ------------------------------------------------------------------------------------------------
def _power_law(exponent: float, replicas: int = 64, noise: float = 0.02) -> np.ndarray:
    """Replicas of ``x**exponent`` with independent multiplicative noise: the true log-log slope is ``exponent``."""
    rng = np.random.default_rng(0)
    return X ** exponent * np.exp(noise * rng.standard_normal((replicas, len(X))))


@pytest.mark.parametrize("exponent, direction, verdict", [
    (-1.0, "at_most", "holds"), (0.0, "at_most", "violated"), (-0.5, "at_most", "inconclusive"),
    (3.0, "at_least", "holds"), (1.0, "at_least", "violated"), (2.0, "at_least", "inconclusive"),
])
def test_slope_check_has_no_slack(exponent, direction, verdict):
    predicted = -0.5 if direction == "at_most" else 2.0
    check = slope_check("s", X, _power_law(exponent), predicted, direction, note="synthetic")
    assert check.verdict == verdict and check.tolerance is None
    assert ("not tight" in check.note) == (verdict == "holds")


def test_slope_check_just_beyond_the_exponent_is_not_forgiven():
    check = slope_check("s", X, _power_law(-0.45, replicas=400, noise=0.01), -0.5, "at_most", note="synthetic")
    assert check.verdict == "violated" and check.ci[0] > -0.5


def test_slope_check_outside_the_regime_is_inconclusive():
    check = slope_check("s", X, _power_law(0.0), -0.5, "at_most", note="synthetic", regime="T << (sm)^3")
    assert check.verdict == "inconclusive" and "outside the statement's regime" in check.note
    assert "np.float64" not in check.note


# ----- bonferroni_z -----------------------------------------------------------------------------------------------
def test_bonferroni_z_of_one_comparison_is_the_two_sided_normal_quantile():
    from scipy.stats import norm

    assert bonferroni_z(1) == pytest.approx(norm.ppf(1 - 0.001 / 2), rel=1e-12)  # 3.2905 at 99.9%
    assert bonferroni_z(1) == pytest.approx(3.2905267, abs=1e-6)  # printed tables
    assert bonferroni_z(1, level=0.95) == pytest.approx(NormalDist().inv_cdf(0.975), rel=1e-12)  # 1.959964
    assert MC_LEVEL == 0.999


def test_bonferroni_z_splits_the_error_over_the_comparisons():
    # with k comparisons each two-sided test has error (1 - level) / k: the tail beyond z is (1 - level) / (2k)
    for k in (1, 2, 10, 1000):
        z = bonferroni_z(k)
        tail = 0.5 * math.erfc(z / math.sqrt(2))  # P(N(0, 1) > z), computed independently of scipy
        assert tail == pytest.approx((1 - MC_LEVEL) / (2 * k), rel=1e-9)
    zs = [bonferroni_z(k) for k in (1, 2, 10, 100, 10_000)]
    assert all(a < b for a, b in zip(zs, zs[1:]))  # more comparisons, a wider critical value


# ----- ordering_check ---------------------------------------------------------------------------------------------
def test_ordering_verdicts():
    check = ordering_check
    assert check("c", [80, 81, 82], [70, 70.5, 71], ">").verdict == "holds"
    assert check("c", [70, 70.5, 71], [80, 81, 82], ">").verdict == "violated"
    assert check("c", [80, 70, 75], [75, 76, 74], ">").verdict == "inconclusive"  # interval straddles 0
    weak = check("c", [75.2, 74, 76], [75, 75, 75], ">=")  # mean difference >= 0, interval includes 0
    assert weak.verdict == "holds"
    assert weak.note.startswith("NOT SIGNIFICANT: the interval [-2.43, +2.57] includes 0. Paired")
    assert check("c", [74.9, 76, 74], [75, 75, 75], ">=").verdict == "inconclusive"  # below, not significantly
    assert check("c", [70, 71, 70.5], [75, 75, 75], ">=").verdict == "violated"
    diverged = check("c", [np.inf, 81, 82], [70, 70.5, 71], ">=")
    assert diverged.verdict == "inconclusive" and "1 run(s) diverged" in diverged.note
    c = check("c", [80, 81, 82], [70, 70.5, 71], ">")
    assert c.measured == pytest.approx(np.mean([10, 10.5, 11])) and c.ci[0] > 0 and "+10.00" in c.note
    assert "NOT SIGNIFICANT" not in c.note


def test_ordering_check_interval_is_the_paired_student_t_interval():
    better, worse = np.array([3.0, 5.0, 4.0, 6.0]), np.array([1.0, 2.0, 2.5, 3.5])
    diff = better - worse  # 2, 3, 1.5, 2.5: mean 2.25, sample std sqrt(0.41667)
    half = 3.182446305284263 * math.sqrt(((diff - 2.25) ** 2).sum() / 3) / 2  # t_{0.975, 3} * s / sqrt(4)
    c = ordering_check("c", better, worse, ">")
    assert c.measured == pytest.approx(2.25) and c.ci == pytest.approx((2.25 - half, 2.25 + half), rel=1e-9)
    assert c.verdict == "holds" and "95% t-interval" in c.note
    wider = ordering_check("c", better, worse, ">", level=0.999)
    assert wider.ci[0] < c.ci[0] < c.ci[1] < wider.ci[1]


@pytest.mark.parametrize("better, worse, relation, verdict", [
    (np.full(5, 10.0) + np.arange(5) * 0.1, np.zeros(5), ">", "holds"),  # clearly positive
    (np.zeros(5), np.full(5, 10.0) + np.arange(5) * 0.1, ">", "violated"),  # clearly negative
    (np.zeros(5), np.zeros(5) - np.array([1, -1, 2, -2, 0.5]), ">", "inconclusive"),  # straddles 0, strict
    (np.zeros(5), np.zeros(5) - np.array([1, -1, 2, -2, 0.5]), ">=", "holds"),  # same, weak, mean 0.1 >= 0
    (np.array([1.0, np.nan, 3.0]), np.zeros(3), ">", "inconclusive"),  # a diverged run
    (np.array([1.0, 2.0, -np.inf]), np.zeros(3), ">=", "inconclusive"),
])
def test_ordering_check_on_synthetic_pairs(better, worse, relation, verdict):
    c = ordering_check("c", better, worse, relation)
    assert c.verdict == verdict and c.relation == relation and c.theory == 0.0
    if verdict == "inconclusive" and np.all(np.isfinite(better - worse)):
        assert "NOT SIGNIFICANT" in c.note
