"""Theorem 4.3.1's calculators (4.6)-(4.7): hand computations, the step schedule and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

from theorylab.bounds.thesis_ch4 import Ch4Constants, bound_46, c_terms, lossy_term, theorem_schedule
from theorylab.kernels.schedules import make_schedule

K4 = Ch4Constants(alpha=(0.5, 0.5), loss=(0.0, 0.5), sigma2=(1.0, 3.0), L=2.0, mu=0.5, K=3, G2=4.0, Gamma=0.25,
                  dist0=2.0)


def test_lossy_term_digest_example():
    assert lossy_term([0.1] * 10, [0.1] * 5 + [0.9] * 5) == pytest.approx(0.45556, abs=1e-5)


def test_c_terms_by_hand():
    terms = c_terms(K4, 2)
    assert terms["variance"] == pytest.approx(0.25 * 1 + 0.25 * 3)
    assert terms["drift"] == pytest.approx(2 * 4 * 4.0)
    assert terms["heterogeneity"] == pytest.approx(6 * 2.0 * 0.25)
    assert terms["losses"] == pytest.approx(3 * 4.0 * 0.25 * 1.0)  # K G^2 alpha^2 q/(1-q)
    assert terms["C"] == pytest.approx(1.0 + 32.0 + 3.0 + 3.0)
    assert c_terms(K4, 8)["C"] - terms["C"] == pytest.approx(6 * (3 - 1) ** 2 * 4.0)


def test_bound_by_hand_and_its_decay():
    kappa, C = 4.0, c_terms(K4)["C"]
    expected = kappa / (8 * kappa + np.array([0.0, 10.0])) * (2 * 3 * C / 0.5 + 4 * 2.0 * 2.0)
    np.testing.assert_allclose(bound_46(K4, [0, 10]), expected)
    assert bound_46(K4, 0) >= K4.L / 2 * K4.dist0  # at t = 0 it covers F(w1) - F* <= L/2 ||w1 - w*||^2
    np.testing.assert_allclose(bound_46(K4, 10 ** 6) * 10 ** 6 / (kappa * (12 * C + 16)), 1.0, rtol=1e-4)  # ~ 1/t


def test_theorem_schedule_matches_the_printed_step():
    schedule = make_schedule(theorem_schedule(2.0, 0.5))
    kappa = 4.0
    for r in (0, 1, 7, 100):
        assert schedule(r) == pytest.approx(2 / (0.5 * (8 * kappa + r)), rel=1e-14)
    assert schedule(0) == pytest.approx(1 / (4 * 2.0))


@pytest.mark.parametrize("change, match", [
    ({"loss": (0.0, 1.0)}, "loss must hold one probability in"),
    ({"loss": (0.1,)}, "loss must hold one probability in"),
    ({"sigma2": (1.0,)}, "sigma2 must hold one variance"),
    ({"mu": 3.0}, "need 0 < mu <= L"),
    ({"K": 0}, "K must be an integer >= 1"),
    ({"G2": -1.0}, "G2 must be >= 0"),
])
def test_bad_constants_are_refused(change, match):
    with pytest.raises(ValueError, match=match):
        Ch4Constants(**{**K4.__dict__, **change})


def test_bad_drift_and_rounds_are_refused():
    with pytest.raises(ValueError, match="drift must be one of"):
        c_terms(K4, 4)
    with pytest.raises(ValueError, match="rounds must be >= 0"):
        bound_46(K4, -1)
    with pytest.raises(ValueError, match="need 0 < mu <= L"):
        theorem_schedule(1.0, 0.0)
