r"""Checks: one row of a claim's evidence, and the rules that decide its verdict.

A :class:`Check` compares what was measured with what the theory says, under a relation
(equality within a tolerance, equality within a Monte Carlo confidence interval, an upper
bound, a fitted log-log slope against a bound's exponent, an ordering of paired samples, a
value printed in a paper) and carries the verdict that relation's rule gives:

* ``holds`` — the measurement agrees with the statement;
* ``violated`` — it contradicts the statement on our testbed (when a paper is wrong this is
  the correct outcome, and the claim's notes say why);
* ``inconclusive`` — the measurement cannot decide, e.g. a confidence interval straddles a bound.

Every rule lives here, once, so that the claims in ``validations/`` state *what* they compare and
never *how* a verdict follows from it.  Monte Carlo checks default to the level :data:`MC_LEVEL`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theorylab.fitting import SlopeFit, slope_with_ci
from theorylab.trace import mean_ci

VERDICTS = ("holds", "violated", "inconclusive")
MC_LEVEL = 0.999  # confidence level of Monte Carlo checks: a false "violated" has probability ~1e-3


@dataclass
class Check:
    name: str
    measured: object
    theory: object
    relation: str
    verdict: str
    tolerance: float | None = None
    ci: tuple[float, float] | None = None
    tightness: float | None = None  # bound / measured, for inequalities
    note: str = ""


def equal(name: str, measured: float, theory: float, atol: float, note: str = "") -> Check:
    """Holds iff ``|measured - theory| <= atol``."""
    ok = bool(abs(measured - theory) <= atol)
    return Check(name, float(measured), float(theory), "==", "holds" if ok else "violated", tolerance=atol, note=note)


def in_interval(name: str, samples, theory: float, note: str = "", level: float = MC_LEVEL, atol: float = 0.0) -> Check:
    """Monte Carlo check of ``E[X] == theory``: holds iff ``theory`` is inside the ``level`` CI of the mean
    of ``samples`` (widened by ``atol``), violated otherwise."""
    samples = np.asarray(samples, dtype=np.float64)
    lo, hi = (float(v) for v in mean_ci(samples, level))
    ok = lo - atol <= theory <= hi + atol
    return Check(name, float(samples.mean()), float(theory), f"== (in {level:.1%} CI)", "holds" if ok else "violated",
                 tolerance=atol or None, ci=(lo, hi), note=note)


def at_most(name: str, measured: float, bound: float, note: str = "", ci: tuple[float, float] | None = None) -> Check:
    """Inequality ``measured <= bound``; with a CI of the measurement, inconclusive when it straddles the bound."""
    measured, bound = float(measured), float(bound)
    if ci is None:
        verdict = "holds" if measured <= bound else "violated"
    else:
        verdict = "holds" if ci[1] <= bound else ("violated" if ci[0] > bound else "inconclusive")
    tight = bound / measured if measured > 0 else math.inf
    return Check(name, measured, bound, "<=", verdict, ci=ci, tightness=tight, note=note)


def trend(name: str, measured: float, holds: bool, relation: str, theory, note: str) -> Check:
    """A qualitative statement (a ratio below one, a sequence decreasing) decided exactly by ``holds``."""
    return Check(name, measured, theory, relation, "holds" if holds else "violated", note=note)


def printed(name: str, measured: float, text: str, note: str = "") -> Check:
    """``measured`` equals a number printed as ``text`` (e.g. "1.211", "6e10") up to the rounding of its last digit."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    atol = 0.5 * 10.0 ** (-decimals + (int(exponent) if exponent else 0))
    return equal(name, measured, float(text), atol=atol, note=note or "digest value, tolerance = rounding of its last digit")


def bonferroni_z(comparisons: int, level: float = MC_LEVEL) -> float:
    """Two-sided normal critical value that keeps the family-wise level ``level`` over ``comparisons`` tests."""
    from scipy.stats import norm

    return float(norm.ppf(1 - (1 - level) / (2 * comparisons)))


# ----- fitted slopes -----------------------------------------------------------------------------------------------
def slope_check(name: str, x, samples, predicted: float, direction: str, note: str, regime: str | None = None) -> Check:
    """Fitted log-log slope of ``samples`` (replicas x len(x)) against an exponent read off an upper bound.

    ``direction="at_most"``: the bound decays like ``x**predicted`` as x grows (rates in T, s, k, m), so the measured
    slope may not exceed ``predicted``; ``"at_least"``: the bound vanishes like ``x**predicted`` as x -> 0 (residuals
    in the step size), so the slope may not fall below it.  The 99% bootstrap CI over replicas decides, with no
    slack: entirely on the allowed side -> holds, and the note says the bound's exponent is not tight at these x;
    entirely on the other side -> violated, or inconclusive when ``regime`` names an unmet asymptotic condition of
    the statement; straddling ``predicted`` -> inconclusive: the data agree with an exponent equal to the bound's
    but cannot exclude a slightly worse one, and a one-sided test can only confirm a boundary value with a margin,
    which we do not add.
    """
    fit = slope_with_ci(x, samples, level=0.99)
    lo, hi = fit.ci
    allowed, beyond = (hi <= predicted, lo > predicted) if direction == "at_most" else (lo >= predicted, hi < predicted)
    verdict = "holds" if allowed else ("violated" if beyond else "inconclusive")
    found = f"measured exponent {fit.slope:.3f} (99% CI [{lo:.3f}, {hi:.3f}]) vs the bound's {predicted:g}"
    if allowed:
        found += ": strictly on the bound's side, so its exponent is not tight at these x"
    elif not beyond:
        found += ": the CI contains the bound's exponent (a tight exponent and a slightly worse one both fit)"
    elif regime:
        verdict, found = "inconclusive", found + f"; outside the statement's regime ({regime}), so not a contradiction"
    relation = ("<= " if direction == "at_most" else ">= ") + f"{predicted:g}"
    x_list = np.round(np.asarray(x, dtype=float), 5).tolist()
    return Check(name, fit.slope, predicted, relation, verdict, ci=(lo, hi),
                 note=f"{note}; {found}; fitted over x = {x_list}, {np.asarray(samples).shape[0]} replicas")


def fitted_slope_at_most(name: str, fit: SlopeFit, bound: float, note: str) -> Check:
    """A rate ``O(x**bound)`` read as "the fitted slope is at most ``bound``", decided by the fit's bootstrap CI:
    holds when it lies at or below ``bound``, violated when it lies above, inconclusive when it straddles."""
    lo, hi = fit.ci
    verdict = "holds" if hi <= bound else ("violated" if lo > bound else "inconclusive")
    return Check(name, fit.slope, float(bound), f"<= ({fit.level:.0%} bootstrap CI)", verdict, ci=fit.ci, note=note)


# ----- paired samples over seeds -----------------------------------------------------------------------------------
def paired_excess(name: str, higher, lower, note: str) -> Check:
    """Paired per-seed test of ``higher - lower > 0`` (e.g. distances to two points, or errors of two settings run
    with the same seeds) with a 99.9% t-interval: violated when the interval lies below 0, inconclusive when it
    straddles 0 (the difference is smaller than the runs' spread)."""
    diff = np.asarray(higher) - np.asarray(lower)
    lo, hi = (float(v) for v in mean_ci(diff, MC_LEVEL))
    verdict = "holds" if lo > 0 else ("violated" if hi < 0 else "inconclusive")
    return Check(name, float(diff.mean()), 0.0, "> 0 (99.9% CI over seeds)", verdict, ci=(lo, hi),
                 note=f"{len(diff)} seeds; {note}")


def ordering_check(name: str, better, worse, relation: str, note: str = "", level: float = 0.95) -> Check:
    """Paired test of ``better relation worse`` (``>`` or ``>=``) on per-seed values, e.g. final accuracies.

    A strict ordering holds when the ``level`` Student-t interval of the mean difference lies above 0, is violated
    when it lies below 0 and is inconclusive otherwise; a weak ordering is violated only when the interval lies
    below 0 and holds when the mean difference is >= 0.  A non-finite difference (a diverged run) is inconclusive.
    Whenever the interval includes 0 the note says the difference is not significant.
    """
    diff = np.asarray(better, dtype=np.float64) - np.asarray(worse, dtype=np.float64)
    mean = float(diff.mean())
    lo, hi = (float(v) for v in mean_ci(diff, level)) if np.all(np.isfinite(diff)) else (np.nan, np.nan)
    if not np.isfinite(mean) or np.isnan(lo):
        verdict = "inconclusive"
    elif hi < 0:
        verdict = "violated"
    elif relation == ">":
        verdict = "holds" if lo > 0 else "inconclusive"
    else:
        verdict = "holds" if mean >= 0 else "inconclusive"
    per_run = ", ".join(f"{d:+.2f}" for d in diff)
    diverged = int((~np.isfinite(diff)).sum())
    caveat = ""
    if diverged:
        caveat = f"{diverged} run(s) diverged (the runner's divergence detector), so the ordering cannot be judged."
    elif lo <= 0 <= hi:
        caveat = f"NOT SIGNIFICANT: the interval [{lo:+.2f}, {hi:+.2f}] includes 0."
    text = f"Paired differences per run (points): {per_run}; {level:.0%} t-interval."
    return Check(name, mean, 0.0, relation, verdict, ci=(lo, hi), note=" ".join(t for t in (caveat, text, note) if t))
