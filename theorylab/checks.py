r"""Checks: one row of a claim's evidence, and the one rule per relation that decides its verdict.

A :class:`Check` compares what was measured with what the theory says under a *relation* and carries the
verdict that relation's rule gives:

* ``holds`` — the measurement agrees with the statement;
* ``violated`` — it contradicts the statement on our testbed (when a paper is wrong this is the correct
  outcome, and the claim's notes say why);
* ``inconclusive`` — the measurement cannot decide: a confidence interval straddles the boundary, the
  check has no power at its budget, or the readings of an unclear point disagree (the note says why).

Relations (each rule is written here once; ``validations/`` never computes a verdict string):

================================  ================================================================================
:func:`equal`                     ``|measured - theory| <= atol`` (exact computations)
:func:`in_interval`               Monte Carlo: ``theory`` inside the confidence interval of a mean (widened by
                                  ``atol``)
:func:`at_most`/:func:`at_least`  an inequality; with samples, decided by the interval: inconclusive when it straddles
:func:`paired_difference`         Monte Carlo: the mean of paired per-seed differences is ``> 0`` (or ``>= 0``)
:func:`slope_check`               a fitted log-log slope against a bound's exponent, decided by its interval
:func:`printed`                   a value printed in a paper, reproduced up to its last digit or by a stated reading
:func:`trend`                     an exactly computed qualitative fact (a ratio below one, a sequence decreasing)
:func:`max_standardised_gap`      Monte Carlo: many exact values against their sample means at once (Bonferroni)
:func:`definitional`              the same formula on both sides: guards the code, never decides a verdict
:func:`across`                    one statement under every reading the digest lists (or every free choice the
                                  paper leaves open): violated only when all violate, inconclusive when they disagree
================================  ================================================================================

**Who may accuse.**  Only the paper's own relation — its inequality, number, ordering or rate — can make a claim
*violated* (``shared/DESIGN.md``, "Findings").  A check's ``role`` says what it is to its claim:

* ``statement`` (default) — the paper's relation; its tightness is the claim's strength;
* ``auxiliary`` — a supporting fact (an identity, a consistency check of the setting) that decides like a statement
  but does not define how tight the claim is (:func:`auxiliary`);
* ``ours`` — a criterion of our own (a slope threshold, a looseness factor): shown, and a failure reads as a *not
  tight* finding, never as a violation (:func:`ours`).

**Basis.** Every check declares where its theory side comes from (:data:`BASES`): a closed form, an exact
enumeration, an independent method, a value printed in the paper, Monte Carlo, or ``definitional``.

**Confidence policy.** Monte Carlo checks are decided at a claim-wide family level (:data:`FAMILY_LEVEL`,
``claims.Evidence``): with :math:`k` Monte Carlo checks in a claim each is decided at
:math:`1-(1-\text{level})/k` (Bonferroni), so a claim reads *violated* by sampling error alone with probability
at most :math:`10^{-3}`.  A check built outside a claim is decided at the family level itself.  Intervals of a
mean are Student-t (:func:`theorylab.trace.mean_ci`); a slope's interval is a bootstrap over replicas, or a
Student-t interval of per-replica slopes when there are at most :data:`SMALL_SAMPLE` replicas (a percentile
bootstrap under-covers there).

**Strength.** An inequality that holds reports ``tightness`` = bound / measured (measured / bound for
:func:`at_least`); when a statement bound of a claim is above :data:`VACUOUS` the claim reads "holds (vacuous ×N)":
true, and far from tight.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from theorylab.fitting import loglog_slope
from theorylab.sequential import anytime, confidence_sequence, seeds_needed
from theorylab.trace import mean_ci

VERDICTS = ("holds", "violated", "inconclusive")
BASES = {
    "closed_form": "a closed form (derived in the docstring, the digest or the paper)",
    "enumeration": "an exact enumeration or exact propagation of moments",
    "independent": "an independent method computing the same quantity another way",
    "paper": "a value printed in the paper (a table cell, a number in its text, a figure's reading)",
    "digest": "a value the digest derived or simulated itself: never the paper's number, so it accuses only a "
              "claim about the digest",
    "monte_carlo": "a Monte Carlo estimate with a confidence interval",
    "definitional": "the same formula on both sides: it guards the code against typos and never decides a verdict",
}
FAMILY_LEVEL = 0.999  # per claim: P(some Monte Carlo check reads 'violated' by sampling error alone) <= 1e-3
VACUOUS = 10.0  # a bound more than this factor above the measurement holds vacuously
SMALL_SAMPLE = 10  # at most this many replicas: slopes get Student-t intervals over per-replica fits
ROLES = ("statement", "auxiliary", "ours")


@dataclass
class Check:
    name: str
    measured: object
    theory: object
    relation: str
    verdict: str
    basis: str
    tolerance: float | None = None
    ci: tuple[float, float] | None = None
    level: float | None = None  # confidence level of ``ci`` (Monte Carlo checks)
    tightness: float | None = None  # bound / measured for an inequality that holds
    note: str = ""
    role: str = "statement"  # see ROLES and the module docstring
    readings: dict | None = None  # label -> the check under that reading (as_dict), for checks built by across()
    seeds: int | None = None  # paired seeds behind an ordering (paired_difference): more seeds can decide it
    decide: Callable[[float], "Check"] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if self.basis not in BASES:
            raise ValueError(f"basis must be one of {tuple(BASES)}; got {self.basis!r}")
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}; got {self.role!r}")

    @property
    def deciding(self) -> bool:
        """Whether the check counts toward its claim's verdict (definitional checks never do)."""
        return self.basis != "definitional"

    @property
    def vacuous(self) -> bool:
        return self.verdict == "holds" and self.tightness is not None and self.tightness > VACUOUS

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "decide"}


def interval_verdict(lo: float, hi: float, bound: float, side: str) -> str:
    """The one rule for an interval against a boundary: ``side="below"`` tests *value <= bound*, ``"above"``
    *value >= bound*; holds when the whole interval is on the allowed side, violated when it is wholly on the
    other side, inconclusive when it straddles ``bound`` (or is not finite)."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "inconclusive"
    if side == "below":
        return "holds" if hi <= bound else ("violated" if lo > bound else "inconclusive")
    if side == "above":
        return "holds" if lo >= bound else ("violated" if hi < bound else "inconclusive")
    raise ValueError(f"side must be 'below' or 'above'; got {side!r}")


def _monte_carlo(decide: Callable[[float], Check]) -> Check:
    """A Monte Carlo check, decided at the family level now and re-decided at its claim's Bonferroni share."""
    return dataclasses.replace(decide(FAMILY_LEVEL), decide=decide)


def _exact_basis(basis: str) -> str:
    if basis == "monte_carlo":
        raise ValueError("a Monte Carlo comparison needs its samples: use in_interval, at_most(samples=...) or "
                         "paired_difference")
    if basis not in BASES:
        raise ValueError(f"basis must be one of {tuple(BASES)}; got {basis!r}")
    return basis


# ----- exact comparisons -------------------------------------------------------------------------------------------
def equal(name: str, measured: float, theory: float, atol: float, *, basis: str, note: str = "") -> Check:
    """Holds iff ``|measured - theory| <= atol``."""
    ok = bool(abs(measured - theory) <= atol)
    return Check(name, float(measured), float(theory), "==", "holds" if ok else "violated", _exact_basis(basis),
                 tolerance=atol, note=note)


def definitional(name: str, measured: float, theory: float, atol: float, note: str = "") -> Check:
    """``equal`` for two evaluations of the same formula: shown in the report, never deciding the claim."""
    return equal(name, measured, theory, atol, basis="definitional", note=note)


def trend(name: str, measured, holds: bool, relation: str, theory, *, basis: str, note: str = "") -> Check:
    """A qualitative fact computed exactly (a ratio below one, a sequence decreasing), decided by ``holds``."""
    return Check(name, measured, theory, relation, "holds" if holds else "violated", _exact_basis(basis), note=note)


def printed(name: str, measured: float, text: str, note: str = "", readings: dict[str, float] | None = None,
            basis: str = "paper") -> Check:
    """A value printed as ``text`` (e.g. "1.211", "6e10") is reproduced when ``measured`` rounds to it (tolerance:
    half a unit of its last digit), or else when one of the stated ``readings`` (label -> value computed another
    stated way: a different rounding, another fitting window) does; the relation names the reading that
    reproduces it.  Violated when none does.  ``basis="digest"`` for a number the digest printed from its own
    derivation or simulation (it then never accuses the paper)."""
    if basis not in ("paper", "digest"):
        raise ValueError(f"a printed value comes from the paper or the digest; got basis {basis!r}")
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    atol = 0.5 * 10.0 ** (-decimals + (int(exponent) if exponent else 0))
    value = float(text)
    relation, verdict = "== printed", "violated"
    if abs(measured - value) <= atol:
        verdict = "holds"
    else:
        for label, reading in (readings or {}).items():
            if abs(reading - value) <= atol:
                relation, verdict = f"== printed, reproduced by {label} ({reading:.6g})", "holds"
                break
    tried = "" if not readings else "; readings tried: " + ", ".join(f"{k} = {v:.6g}" for k, v in readings.items())
    return Check(name, float(measured), value, relation, verdict, basis, tolerance=atol,
                 note=(note or f"value printed in the {basis}, tolerance = rounding of its last digit") + tried)


def at_most(name: str, measured, bound, *, basis: str, note: str = "", samples=None) -> Check:
    """``measured <= bound``.  Exact unless ``samples`` (per-replica values of the left side) are given: then the
    left side is their mean, ``bound`` may be a scalar or paired per-replica values, and the interval of the mean of
    ``samples - bound`` decides (inconclusive when it straddles 0)."""
    return _inequality(name, measured, bound, basis, note, samples, "below")


def at_least(name: str, measured, bound, *, basis: str, note: str = "", samples=None) -> Check:
    """``measured >= bound``; as :func:`at_most` with the sides swapped (tightness = measured / bound)."""
    return _inequality(name, measured, bound, basis, note, samples, "above")


def _inequality(name, measured, bound, basis, note, samples, side) -> Check:
    relation = "<=" if side == "below" else ">="

    def tight(value: float, limit: float, verdict: str) -> float | None:
        num, den = (limit, value) if side == "below" else (value, limit)
        if verdict != "holds":
            return None
        return num / den if den > 0 else math.inf

    if samples is None:
        measured, bound = float(measured), float(bound)
        ok = measured <= bound if side == "below" else measured >= bound
        verdict = "holds" if ok else "violated"
        return Check(name, measured, bound, relation, verdict, _exact_basis(basis),
                     tightness=tight(measured, bound, verdict), note=note)
    if basis != "monte_carlo":
        raise ValueError("an inequality decided from samples has basis 'monte_carlo'")
    samples = np.asarray(samples, dtype=np.float64)
    paired = np.broadcast_to(np.asarray(bound, dtype=np.float64), samples.shape)
    limit = float(paired.mean())

    def decide(level: float) -> Check:
        lo, hi = (float(v) + limit for v in mean_ci(samples - paired, level))
        verdict = interval_verdict(lo, hi, limit, side)
        return Check(name, float(samples.mean()), limit, relation, verdict, "monte_carlo", ci=(lo, hi), level=level,
                     tightness=tight(float(samples.mean()), limit, verdict),
                     note=f"{note}; interval = mean bound + {level:.4%} t-interval of E[lhs - bound] over "
                          f"{len(samples)} replicas".lstrip("; "))

    return _monte_carlo(decide)


# ----- Monte Carlo -------------------------------------------------------------------------------------------------
def in_interval(name: str, samples, theory: float, note: str = "", atol: float = 0.0) -> Check:
    """``E[X] == theory``: holds iff ``theory`` lies in the t-interval of the mean of ``samples`` (widened by
    ``atol``, whose reason the note must give), violated otherwise."""
    samples = np.asarray(samples, dtype=np.float64)

    def decide(level: float) -> Check:
        lo, hi = (float(v) for v in mean_ci(samples, level))
        ok = lo - atol <= theory <= hi + atol
        return Check(name, float(samples.mean()), float(theory), f"== (in {level:.4%} CI)",
                     "holds" if ok else "violated", "monte_carlo", tolerance=atol or None, ci=(lo, hi), level=level,
                     note=note)

    return _monte_carlo(decide)


def paired_difference(name: str, higher, lower, note: str = "", strict: bool = True, unit: str = "") -> Check:
    """Paired per-seed test of ``higher > lower`` (``>=`` when not ``strict``), e.g. the final accuracies of two
    algorithms run with the same seeds: the interval of the mean difference decides by :func:`interval_verdict` —
    holds when it lies above 0, violated when below, inconclusive when it contains 0 (for a weak ordering too: an
    interval around 0 cannot confirm it).  The interval is Student-t for one look at a fixed number of seeds, and
    the confidence sequence of :mod:`theorylab.sequential` inside :func:`theorylab.sequential.anytime_orderings` (seeds added until
    decided); an undecided check then says how many seeds the current effect would need.  A non-finite difference
    (a diverged run) is inconclusive."""
    with np.errstate(invalid="ignore"):  # inf - inf (both runs diverged) is nan: undecidable, below
        diff = np.asarray(higher, dtype=np.float64).ravel() - np.asarray(lower, dtype=np.float64).ravel()
    finite = bool(np.all(np.isfinite(diff)))
    relation = "> 0" if strict else ">= 0"
    per_run = ", ".join(f"{d:+.3g}" for d in diff[:12]) + (", ..." if len(diff) > 12 else "")
    sequential = anytime()

    def decide(level: float) -> Check:
        if not finite:
            lo, hi = math.nan, math.nan
        elif sequential:
            lo, hi = confidence_sequence(diff, 1 - level)
        else:
            lo, hi = (float(v) for v in mean_ci(diff, level))
        verdict = interval_verdict(lo, hi, 0.0, "above")
        if verdict == "holds" and strict and lo == 0.0:
            verdict = "inconclusive"
        caveat = ("" if finite else f"{int((~np.isfinite(diff)).sum())} run(s) diverged, so the ordering cannot be "
                  "judged. ")
        if finite and not lo > 0 and not hi < 0:
            caveat = f"NOT SIGNIFICANT: the interval [{lo:+.3g}, {hi:+.3g}] includes 0. "
            if sequential and len(diff) > 1:
                needed = seeds_needed(float(diff.mean()), float(diff.std(ddof=1)), 1 - level)
                caveat += ("no number of seeds would decide an effect of 0. " if needed is None else
                           f"About {needed} seeds would decide it if the effect stayed at {diff.mean():+.3g}. ")
        method = "confidence sequence over seeds (Lai 1976)" if sequential else "t-interval over seeds"
        return Check(name, float(diff.mean()), 0.0, f"{relation} (paired, {level:.4%} {method})",
                     verdict, "monte_carlo", ci=(lo, hi), level=level, seeds=len(diff),
                     note=f"{caveat}{len(diff)} paired differences{unit}: {per_run}. {note}".strip())

    return _monte_carlo(decide)


def bonferroni_z(comparisons: int, level: float = FAMILY_LEVEL) -> float:
    """Two-sided normal critical value that keeps the family-wise level ``level`` over ``comparisons`` tests."""
    from scipy.stats import norm

    if comparisons < 1:
        raise ValueError(f"comparisons must be >= 1; got {comparisons}")
    return float(norm.ppf(1 - (1 - level) / (2 * comparisons)))


def max_standardised_gap(name: str, z_max: float, comparisons: int, note: str = "") -> Check:
    """Many exact values against their Monte Carlo means at once: ``z_max`` is the largest ``|mean - exact| / s.e.``
    over ``comparisons`` of them; holds iff it stays below the Bonferroni critical value of the check's level."""
    def decide(level: float) -> Check:
        crit = bonferroni_z(comparisons, level)
        return Check(name, float(z_max), crit, f"<= (Bonferroni over {comparisons}, {level:.4%})",
                     "holds" if z_max <= crit else "violated", "monte_carlo", level=level, note=note)

    return _monte_carlo(decide)


# ----- slopes ------------------------------------------------------------------------------------------------------
def slope_check(name: str, x, samples, predicted: float, direction: str, note: str = "", regime: str | None = None,
                n_boot: int = 2000, seed: int = 0) -> Check:
    """Fitted log-log slope of ``samples`` (replicas x len(x)) against an exponent read off a bound.

    ``direction="at_most"``: the bound decays like ``x**predicted`` as x grows (rates in T, s, k, m), so the slope
    may not exceed ``predicted``; ``"at_least"``: the bound vanishes like ``x**predicted`` as x -> 0 (residuals in
    the step size), so the slope may not fall below it.  The interval decides with no slack
    (:func:`interval_verdict`): on the allowed side -> holds, and the note says the bound's exponent is not tight at
    these x; on the other side -> violated; straddling -> inconclusive (a tight exponent and a slightly worse one
    both fit).  When ``regime`` names an asymptotic condition of the statement that these x do not meet, the check
    has no power either way and is inconclusive whatever the slope.  The interval is a percentile bootstrap over
    replicas (the slope of the resampled mean), or with at most :data:`SMALL_SAMPLE` replicas a Student-t interval
    of the per-replica slopes, whose mean is then the measured slope.
    """
    x, samples = np.asarray(x, dtype=np.float64), np.asarray(samples, dtype=np.float64)
    if samples.ndim != 2 or samples.shape[1] != len(x):
        raise ValueError(f"samples must have shape (replicas, {len(x)}); got {samples.shape}")
    replicas = samples.shape[0]
    if replicas <= SMALL_SAMPLE:
        per_replica = np.array([loglog_slope(x, row)[0] for row in samples])
        slope, method = float(per_replica.mean()), "t-interval of per-replica slopes"
        interval = lambda level: tuple(float(v) for v in mean_ci(per_replica, level))  # noqa: E731
    else:
        slope, method = loglog_slope(x, samples.mean(0))[0], "bootstrap"
        picks = np.random.Generator(np.random.PCG64(seed)).integers(0, replicas, size=(n_boot, replicas))
        boot = np.array([loglog_slope(x, samples[idx].mean(0))[0] for idx in picks])
        interval = lambda level: tuple(float(v) for v in np.quantile(boot, [(1 - level) / 2, (1 + level) / 2]))  # noqa
    side = "below" if direction == "at_most" else "above"
    if direction not in ("at_most", "at_least"):
        raise ValueError(f"direction must be 'at_most' or 'at_least'; got {direction!r}")
    x_list = np.round(x, 5).tolist()

    def decide(level: float) -> Check:
        lo, hi = interval(level)
        verdict = interval_verdict(lo, hi, predicted, side)
        found = f"measured exponent {slope:.3f} ({level:.4%} {method} [{lo:.3f}, {hi:.3f}]) vs the bound's {predicted:g}"
        if regime:
            verdict, found = "inconclusive", found + (f"; NO POWER: outside the statement's regime ({regime}) the "
                                                      "slope decides nothing either way")
        elif verdict == "holds":
            found += ": strictly on the bound's side, so its exponent is not tight at these x"
        elif verdict == "inconclusive":
            found += ": the interval contains the bound's exponent (a tight exponent and a slightly worse one both fit)"
        relation = ("<= " if direction == "at_most" else ">= ") + f"{predicted:g}"
        return Check(name, slope, predicted, relation, verdict, "monte_carlo", ci=(lo, hi), level=level,
                     note=f"{note}; {found}; fitted over x = {x_list}, {replicas} replicas".lstrip("; "))

    return _monte_carlo(decide)


def no_power(check: Check, reason: str) -> Check:
    """A check that cannot tell the statement from its natural alternative at this budget: whatever it found, it
    is inconclusive, and ``reason`` says why."""
    note = f"NO POWER: {reason}. {check.note}".strip()
    verdict = "inconclusive" if check.verdict == "holds" else check.verdict
    decide = None if check.decide is None else (lambda level: no_power(check.decide(level), reason))
    return dataclasses.replace(check, verdict=verdict, tightness=None, note=note, decide=decide)


# ----- who may accuse ----------------------------------------------------------------------------------------------
def _with_role(check: Check, role: str, note: str = "") -> Check:
    decide = None if check.decide is None else (lambda level: _with_role(check.decide(level), role, note))
    return dataclasses.replace(check, role=role, note=f"{note} {check.note}".strip(), decide=decide)


def auxiliary(check: Check) -> Check:
    """A supporting check (an identity, the setting's consistency): it decides, but its tightness is not the claim's
    strength, so a tight auxiliary bound cannot hide a vacuous statement bound."""
    return _with_role(check, "auxiliary")


def ours(check: Check, why: str) -> Check:
    """A criterion of our own, not the paper's relation (``why`` names it: a slope threshold, a looseness factor).
    It is shown with its outcome; failing it is a *not tight* finding about the bound, never a violation."""
    if not why.strip():
        raise ValueError("ours(): say which criterion of our own this is and why it is not the paper's relation")
    return _with_role(check, "ours", f"OUR CRITERION, not the paper's relation ({why}).")


def across(name: str, outcomes: dict[str, Check], *, what: str = "reading", note: str = "") -> Check:
    """The same statement decided under every ``what`` in ``outcomes`` (label -> its check): the readings of a point
    the digest marks unclear, or the free choices a paper leaves open (step-size grid, estimator modes, horizon).

    *violated* only when every outcome is violated, *holds* only when every outcome holds; otherwise *inconclusive*,
    and the note says "depends on the reading: ..." with each outcome.  The measured and theory values, relation,
    interval and tightness shown are the first outcome's (list the paper's default, or ours, first).  Monte Carlo
    outcomes are re-decided together at the combined check's share of the claim's level, so the combination counts
    as one check of the claim's family.
    """
    if not outcomes:
        raise ValueError(f"across({name!r}): no {what}s given")
    if what not in ("reading", "choice"):
        raise ValueError(f"across(): what must be 'reading' or 'choice'; got {what!r}")
    checks = dict(outcomes)

    def combine(decided: dict[str, Check]) -> Check:
        verdicts = {c.verdict for c in decided.values()}
        first = next(iter(decided.values()))
        if verdicts == {"violated"}:
            verdict, found = "violated", f"violated under every {what}"
        elif verdicts == {"holds"}:
            verdict, found = "holds", f"holds under every {what}"
        elif {"holds", "violated"} <= verdicts:
            verdict, found = "inconclusive", f"depends on the {what}"
        else:
            verdict, found = "inconclusive", f"undecided under some {what}"
        each = "; ".join(f"{label}: {c.verdict} ({fmt(c.measured)} {c.relation} {fmt(c.theory)})"
                         for label, c in decided.items())
        basis = "monte_carlo" if any(c.basis == "monte_carlo" for c in decided.values()) else first.basis
        return Check(name, first.measured, first.theory, f"{first.relation} under every {what}", verdict, basis,
                     tolerance=first.tolerance, ci=first.ci, level=first.level,
                     tightness=first.tightness if verdict == "holds" else None,
                     note=f"{found.upper() if verdict == 'inconclusive' else found}: {each}. {note}".strip(),
                     role=first.role, readings={label: c.as_dict() for label, c in decided.items()},
                     seeds=min((c.seeds for c in decided.values() if c.seeds is not None), default=None))

    if not any(c.decide is not None for c in checks.values()):
        return combine(checks)
    return _monte_carlo(lambda level: combine({label: c.decide(level) if c.decide is not None else c
                                               for label, c in checks.items()}))


def fmt(value) -> str:
    """A value as reports and notes print it: numbers to four significant digits, the first four items of a list,
    ``None`` as nothing."""
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in value[:4]) + (", ..." if len(value) > 4 else "") + "]"
    return str(value)
