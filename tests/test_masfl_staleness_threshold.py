"""MasFL's staleness threshold (seed 004 Thm 3.1, App. C; digest 004 §5.2 check 11): the closed-form tau*(f) against
sympy's solution of the printed condition, the fixed-staleness group schedule against its closed form, the copied
problem against its base, and the claim and its figure in quick mode."""

import math

import numpy as np
import pytest
import sympy

from theorylab.bounds.masfl import eta_max_thm31, feasibility_slack, staleness_limit as limit, \
    staleness_threshold as threshold
from theorylab.claims import Context, evaluate, select
from theorylab.clocks.schedule import clock_schedule
from theorylab.figures import masfl_staleness_threshold as fig
from theorylab.registry import build
from theorylab.validations.masfl import staleness_threshold as mod

CASES = [(2, 2, 128, 0.0), (2, 2, 128, 0.5), (2, 2, 800, 0.5), (10, 1, 600, 0.0), (10, 10, 600, 0.0),
         (10, 12, 600, 0.3), (4, 5, 1000, 0.9)]


@pytest.mark.parametrize("s, k, T, share", CASES)
def test_threshold_is_the_positive_root_sympy_finds(s, k, T, share):
    """Solve 1 - 4a - sqrt(SK/T) = 0 for tau symbolically, with a and eta = f * eta_max(0) as printed."""
    tau, L = sympy.symbols("tau L", positive=True)
    e = sympy.E
    eta_cap = sympy.sqrt(T - sympy.sqrt(s * k * T)) / (4 * sympy.sqrt(5) * e * k * L * sympy.sqrt(T))
    a = tau ** 2 * sympy.Rational(s * k, T) + 20 * e ** 2 * (sympy.nsimplify(share) * eta_cap) ** 2 * k ** 2 * L ** 2
    roots = sympy.solve(sympy.Eq(1 - 4 * a - sympy.sqrt(sympy.Rational(s * k, T)), 0), tau)
    assert len(roots) == 1
    assert threshold(s, k, T, share) == pytest.approx(float(roots[0]), rel=1e-12)


@pytest.mark.parametrize("s, k, T, share", CASES)
def test_condition_holds_exactly_up_to_the_threshold(s, k, T, share):
    star = threshold(s, k, T, share)
    eta = share * eta_max_thm31(s, k, T, 1.0, 0.0)
    below, above = star * (1 - 1e-9), star * (1 + 1e-9)
    assert mod.condition(s, k, T, 1.0, below, eta) > 0 > mod.condition(s, k, T, 1.0, above, eta)
    assert mod.bracketed(s, k, T, share) == pytest.approx(star, rel=1e-10)
    x = star ** 2 * s * k / T  # the condition on tau^2 SK / T
    assert x == pytest.approx(limit(s, k, T, share), rel=1e-12)
    if share > 0:  # the printed cap at tau*(f) is f times the cap at 0
        assert eta_max_thm31(s, k, T, 1.0, below) == pytest.approx(eta, rel=1e-6)


def test_the_supremum_is_where_the_engine_admits_no_eta():
    for s, k, T, _ in CASES:
        star = threshold(s, k, T)
        assert feasibility_slack(s, k, T, star * (1 - 1e-9)) > 0 > feasibility_slack(s, k, T, star * (1 + 1e-9))
        with pytest.raises(ValueError, match="infeasible"):
            eta_max_thm31(s, k, T, 1.0, star * (1 + 1e-9))


def test_the_papers_thresholds():
    """S = 10, T = 600: tau*(0) = sqrt((600 - sqrt(6000 K)) / (40 K)), by hand."""
    for k, expected in ((1, math.sqrt((600 - math.sqrt(6000)) / 40)), (10, math.sqrt((600 - math.sqrt(60000)) / 400))):
        assert threshold(10, k, 600) == pytest.approx(expected, rel=1e-14)
    assert threshold(10, 1, 600) == pytest.approx(3.614, abs=5e-4)
    assert threshold(10, 10, 600) < 1 and threshold(10, 12, 600) < 1


def test_the_grid_straddles_the_threshold():
    T = 128
    grid = fig.staleness_grid(T)
    sup, covered = threshold(fig.S, fig.K, T), threshold(fig.S, fig.K, T, fig.ETA_SHARE)
    assert grid[0] == 0 and sum(0 < t <= covered for t in grid) == 1
    beyond = [t for t in grid if t > sup]
    assert beyond[0] == math.ceil(sup) and beyond[-1] == math.ceil(2 ** (fig.DOUBLINGS - 1) * sup)


@pytest.mark.parametrize("tau", [0, 1, 3, 7])
def test_group_schedule_has_exactly_the_designed_staleness(tau):
    T, m = 60, tau + 1
    fields = fig.fixed_staleness(tau, T)
    schedule = clock_schedule(fields["participation"], fields["clock"], T, 2, 0)
    steps = np.arange(T)
    expected = np.zeros((T, m * fig.S), dtype=bool)
    for t in steps:  # step t applies group t mod m
        g = t % m
        expected[t, g * fig.S:(g + 1) * fig.S] = True
    for r in range(2):
        assert (schedule.arrived[r] == expected).all()
        tau_seen = np.where(schedule.arrived[r], schedule.staleness[r], -1).max(1)
        assert (tau_seen == np.minimum(steps, tau)).all()


def test_copies_keep_the_problem():
    base = fig.base_problem()
    for tau in (0, 5):
        copy = build("testbed", fig.fixed_staleness(tau, 100)["problem"])
        assert copy.n_clients == (tau + 1) * fig.S
        np.testing.assert_allclose(copy.x_star, base.x_star, rtol=1e-12, atol=1e-12)
        assert copy.f_star == pytest.approx(base.f_star, rel=1e-12)
        assert copy.L == pytest.approx(base.L, rel=1e-12) and copy.sigma2 == base.sigma2


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    claim = select(["masfl.staleness_threshold"])[0]
    return claim, evaluate(claim, Context(quick=True, figure_dir=tmp_path_factory.mktemp("figures")))


def test_claim_runs_in_quick_mode_and_returns_its_expected_verdict(quick):
    claim, result = quick
    assert result.error is None, result.error
    assert claim.kind == "scope" and "11" in claim.checks
    assert result.verdict == claim.expect == "holds"
    names = [c.name for c in result.evidence.checks]
    assert any("printed cap" in n for n in names) and any("root bracketing" in n for n in names)
    # what the runs show past the threshold never accuses: the theorem asserts nothing there
    assert all(c.role == "ours" for c in result.evidence.checks if c.basis == "monte_carlo")


def test_figure_renders(quick):
    _, result = quick
    path = result.evidence.figure
    assert path and path.endswith("masfl-staleness-threshold.png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
