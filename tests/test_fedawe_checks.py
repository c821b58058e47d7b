"""Verdict helpers of the FedAWE claims (validations/fedawe.py) on synthetic data with a known answer."""

import numpy as np
import pytest

from validations.fedawe import slope_check

X = np.array([1.0, 2.0, 4.0, 8.0])


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
