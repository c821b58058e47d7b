"""The anytime-valid confidence sequence (theorylab.sequential) and seeds added until decided
(theorylab.until_decided), on synthetic paired samples whose truth is known."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from theorylab.checks import paired_difference
from theorylab.claims import Claim, Context, Evidence, evaluate
from theorylab.sequential import confidence_sequence, half_width, seeds_needed
from theorylab.until_decided import add_seeds, open_orderings


def _half_widths(x: np.ndarray, alpha: float) -> np.ndarray:
    """Half-widths of C_n after each of the samples of every row of x (repetitions x looks)."""
    n = np.arange(1, x.shape[1] + 1)
    mean = np.cumsum(x, 1) / n
    ss = np.maximum(np.cumsum(x ** 2, 1) - n * mean ** 2, 0.0)
    return np.array([[half_width(int(k), float(s), alpha) for k, s in zip(n, row)] for row in ss]), mean


def test_null_error_rate_with_a_look_after_every_seed_stays_within_the_level():
    # 1,000 repetitions of 150 seeds, N(0, 2^2) differences, a look after every seed: the fraction of repetitions
    # whose sequence ever excludes the true mean 0 must stay within alpha (+ 3 binomial standard errors); the
    # Student-t interval recomputed at every look (what a naive "add seeds until significant" does) does not.
    alpha, reps, looks = 0.05, 1000, 150
    x = np.random.Generator(np.random.PCG64(11)).normal(0.0, 2.0, size=(reps, looks))
    half, mean = _half_widths(x, alpha)
    error = float((np.abs(mean) > half).any(1).mean())
    assert error <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)
    n = np.arange(2, looks + 1)
    sd = np.sqrt(np.maximum(np.cumsum(x ** 2, 1)[:, 1:] - n * mean[:, 1:] ** 2, 0) / (n - 1))
    t_half = stats.t.ppf(1 - alpha / 2, n - 1) * sd / np.sqrt(n)
    assert float((np.abs(mean[:, 1:]) > t_half).any(1).mean()) > 3 * alpha


@pytest.mark.parametrize("n", [2, 3, 5, 10, 40, 200])
def test_a_confidence_sequence_is_no_narrower_than_the_fixed_n_t_interval(n):
    # C_n is also a fixed-n interval of the form mean +- c sqrt(SS/n); the t-interval has the smallest such c with
    # exact coverage (an independent computation: scipy's t quantile), so c_n >= t_{1-a/2, n-1} / sqrt(n - 1).
    ss = float(n - 1)
    for alpha in (0.1, 0.05, 1e-3):
        t_half = stats.t.ppf(1 - alpha / 2, n - 1) * math.sqrt(ss / (n - 1) / n)
        assert half_width(n, ss, alpha) >= t_half


def test_the_boundary_is_where_the_bayes_factor_reaches_one_over_alpha():
    # the scale-invariant Bayes factor by numerical integration (delta ~ N(0, 1) by 80-node Gauss-Hermite, log sigma
    # by adaptive quadrature, under d sigma / sigma), not by the closed form the module inverts: at mean +-
    # half-width it must equal 1 / alpha
    x, alpha = np.array([0.3, -0.1, 0.8, 0.5, 0.2, 0.6]), 0.05
    lo, hi = confidence_sequence(x, alpha)
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)

    def bayes_factor(mu0):
        d = x - mu0

        def h1(log_sigma):
            s = math.exp(log_sigma)
            like = np.exp(stats.norm.logpdf(d[None, :], nodes[:, None] * s, s).sum(1))
            return float(weights @ like) / math.sqrt(2 * math.pi)

        def h0(log_sigma):
            return math.exp(stats.norm.logpdf(d, 0.0, math.exp(log_sigma)).sum())

        options = dict(epsabs=0, epsrel=1e-10, limit=200)
        return integrate.quad(h1, -8, 6, **options)[0] / integrate.quad(h0, -8, 6, **options)[0]

    assert bayes_factor(lo) == pytest.approx(1 / alpha, rel=1e-4)
    assert bayes_factor(hi) == pytest.approx(1 / alpha, rel=1e-4)
    assert bayes_factor(float(x.mean())) < 1 / alpha


def test_the_sequence_cannot_exclude_anything_after_one_sample_and_refuses_bad_input():
    assert confidence_sequence([0.4], 0.05) == (-math.inf, math.inf)
    assert confidence_sequence([0.4, float("nan")], 0.05) == (-math.inf, math.inf)
    with pytest.raises(ValueError, match="alpha"):
        half_width(5, 1.0, 0.0)
    with pytest.raises(ValueError, match="n must be"):
        half_width(0, 1.0, 0.05)


def test_seeds_needed_is_the_first_count_whose_sequence_excludes_zero():
    for mean, sd, alpha in ((0.2, 1.0, 0.05), (0.02, 0.01, 1e-3), (-1.5, 2.0, 0.01)):
        n = seeds_needed(mean, sd, alpha)
        assert half_width(n, (n - 1) * sd ** 2, alpha) < abs(mean)
        assert n == 2 or half_width(n - 1, (n - 2) * sd ** 2, alpha) >= abs(mean)
    assert seeds_needed(0.0, 1.0, 0.05) is None
    assert seeds_needed(1e-9, 1.0, 0.05) is None  # beyond MAX_SEEDS


# ----- seeds added until decided, on a synthetic claim ----------------------------------------------------------
class _Clock:
    """Simulated time: one unit per seed a claim draws, so budgets are exact and the test does not depend on speed."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _synthetic(effect: float, level: float, clock: _Clock, seeds=(0, 1, 2)) -> Claim:
    """A claim whose ordering 'A > B' is paired over seeds: seed s gives A - B ~ N(effect, 1), the s-th draw of a
    stream keyed by ctx.seed (so a seed's draw does not depend on how many seeds run); ``seeds`` given as a list
    is fixed (not drawn from ctx.seeds)."""
    def check(ctx):
        chosen = np.array(seeds if isinstance(seeds, list) else ctx.seeds(seeds))
        clock.now += len(chosen)
        diff = np.random.Generator(np.random.PCG64(ctx.seed)).normal(effect, 1.0, chosen.max() + 1)[chosen]
        return Evidence([paired_difference("A > B", diff, np.zeros_like(diff))], level=level)

    return Claim("synthetic.ordering", "test", "A beats B", check, kind="digest")


def _decide(effect, level, seed, budget=1e9, seeds=(0, 1, 2)):
    clock = _Clock()
    claim, ctx = _synthetic(effect, level, clock, seeds), Context(quick=True, seed=seed, anytime=True)
    return add_seeds([evaluate(claim, ctx)], ctx, budget, clock=clock)[0]


@pytest.mark.parametrize("effect, verdict", [(0.6, "holds"), (-0.6, "violated")])
def test_until_decided_reaches_the_true_ordering(effect, verdict):
    for seed in range(20):
        result = _decide(effect, 0.99, seed)
        assert result.verdict == verdict
        assert "every ordering decided" in result.evidence.notes[-1]


def test_until_decided_keeps_its_level_under_the_null_over_many_repetitions():
    # no effect: whatever ordering is declared is an error; 400 repetitions of the whole procedure at a 90 % level,
    # seeds doubling (3, 4, 6, 10, ..., 3,074) within a budget of 2^13 seed draws: the error rate stays within 10 %
    # (+ 3 binomial standard errors)
    reps, alpha = 400, 0.1
    wrong = sum(_decide(0.0, 1 - alpha, seed, budget=2 ** 13).verdict != "inconclusive" for seed in range(reps))
    assert wrong / reps <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


def test_an_open_ordering_says_how_many_seeds_it_needs_and_fixed_seeds_are_reported():
    ctx, clock = Context(quick=True, seed=0, anytime=True), _Clock()
    first = evaluate(_synthetic(0.05, 0.99, clock), ctx)
    assert open_orderings(first) and "seeds would decide it" in first.evidence.checks[0].note
    stopped = add_seeds([first], ctx, 40.0, clock=clock)[0]
    assert stopped.verdict == "inconclusive" and "budget ran out" in stopped.evidence.notes[-1]
    assert clock.now <= 40 + 3  # the first evaluation's 3 seeds come before the budget starts
    fixed = _decide(0.05, 0.99, 0, seeds=[0, 1, 2])
    assert "its seeds are fixed" in fixed.evidence.notes[-1]
    with pytest.raises(ValueError, match="anytime"):
        add_seeds([first], Context(quick=True), 10.0)
