"""theorylab.regime: horizons in a rate's asymptotic regime and the projected cost of reaching it (issue 25 item 3),
and a rate claim that fits no slope when its regime is out of reach."""

from types import SimpleNamespace

import pytest

from theorylab.claims import Context, Evidence, evaluate, select
from theorylab.regime import (first_power_of_two, horizons_in_regime, out_of_reach, projected_seconds,
                              regime_horizons, seconds_per_round)

T_STAR_MASFL = 21668.05  # seed 004 App. C's T* at the masfl testbed's constants (theorylab.validations.masfl.rates)


def test_first_power_of_two_at_or_above_the_threshold():
    assert first_power_of_two(T_STAR_MASFL) == 2 ** 15
    assert first_power_of_two(2 ** 15) == 2 ** 15
    assert first_power_of_two(2 ** 15 + 1) == 2 ** 16
    assert first_power_of_two(0.3) == 1
    with pytest.raises(ValueError):
        first_power_of_two(0.0)


def test_horizons_in_regime_are_spaced_powers_of_two_or_none_beyond_the_limit():
    assert regime_horizons(T_STAR_MASFL) == (2 ** 15, 2 ** 17, 2 ** 19)
    assert horizons_in_regime(T_STAR_MASFL, 2 ** 19) == (2 ** 15, 2 ** 17, 2 ** 19)
    assert horizons_in_regime(T_STAR_MASFL, 2 ** 19 - 1) is None
    assert horizons_in_regime(100, 10 ** 6, count=2, ratio=2) == (128, 256)
    assert regime_horizons(9.6e7, count=1) == (2 ** 27,)
    with pytest.raises(ValueError):
        regime_horizons(100, ratio=1)


def test_cost_per_replica_round_and_its_projection():
    traces = [SimpleNamespace(seconds=2.0, config={"rounds": 100, "replicas": 4}),
              SimpleNamespace(seconds=6.0, config={"rounds": 200, "replicas": 4})]
    per_round = seconds_per_round(traces)
    assert per_round == pytest.approx(8.0 / 1200)
    # c R n_runs sum_j T_j
    assert projected_seconds((2 ** 15, 2 ** 17, 2 ** 19), 1e-5, 32, runs=2) == pytest.approx(
        1e-5 * 32 * 2 * (2 ** 15 + 2 ** 17 + 2 ** 19))


def test_out_of_reach_is_an_inconclusive_statement_check_naming_horizons_and_cost():
    check = out_of_reach("exponent in T", T_STAR_MASFL, 2048, 1e-5, 8)
    assert (check.verdict, check.basis, check.role) == ("inconclusive", "closed_form", "statement")
    assert (check.measured, check.theory) == (2048, pytest.approx(T_STAR_MASFL))
    cost = 1e-5 * 8 * (2 ** 15 + 2 ** 17 + 2 ** 19)
    assert "[32768, 131072, 524288]" in check.note and f"{cost:.3g} s" in check.note
    assert "No slope is fitted" in check.note
    assert Evidence([check]).verdict == "inconclusive"
    with pytest.raises(ValueError):  # in reach: the slope must be fitted instead
        out_of_reach("exponent in T", T_STAR_MASFL, 2 ** 19, 1e-5, 8)


def _thm31(monkeypatch, tmp_path, limit: int, pilot=(64, 128, 256), threshold=None):
    import theorylab.validations.masfl.rates as rates

    monkeypatch.setattr(rates, "LIMIT", (limit, limit))
    monkeypatch.setattr(rates, "PILOT", pilot)
    if threshold is not None:
        monkeypatch.setattr(rates, "leading_from", lambda *args: threshold)
    [claim] = [c for c in select() if c.id == "masfl.thm31_rate"]
    result = evaluate(claim, Context(quick=False, figure_dir=tmp_path))
    assert result.error is None, result.error
    return result.evidence.checks[-1]


def test_full_mode_rate_claim_out_of_reach_fits_no_slope(monkeypatch, tmp_path):
    check = _thm31(monkeypatch, tmp_path, limit=256)  # full mode, but T* ~ 21,668 is beyond the limit
    assert check.verdict == "inconclusive" and check.note.startswith("OUT OF REACH")
    assert check.ci is None and check.measured == 256 and "measured exponent" not in check.note


def test_full_mode_rate_claim_in_reach_fits_the_slope_over_the_regime(monkeypatch, tmp_path):
    check = _thm31(monkeypatch, tmp_path, limit=1024, threshold=50.0)  # regime from 64: 64, 256, 1024
    assert check.relation == "<= -0.5" and check.ci is not None
    assert "fitted over x = [64.0, 256.0, 1024.0]" in check.note and "NO POWER" not in check.note
