"""Claims: a paper's checkable statement, run as code, returning evidence with an honest verdict.

A :class:`Claim` has an id (``fedawe.prop1``), a source (seed file and section), the statement in words, a
*kind* and a ``check(ctx) -> Evidence`` function:

* ``statement`` — the paper asserts it (a lemma, a theorem, a sentence of its text);
* ``reproduction`` — a number, table or figure the paper prints;
* ``scope`` — whether a theorem covers a setting (the paper's own experiments, a regime): a finding about the
  theorem's reach, quoting the assumption that is left;
* ``code`` — a finding about the authors' public code, not the paper's text (quoted from the digest's account of the
  code; ``where`` names the repository and file);
* ``digest`` — a value or regime that the digest itself derived or simulated: it tests our reading, never the paper.

**Anchored in the paper's words.**  A statement, reproduction or scope claim carries ``quote`` — the sentence,
equation or table cell it tests, verbatim from the seed text (pieces joined by `` … `` when the words are apart) —
and ``where`` (section / equation / page); :mod:`theorylab.sources` finds the quote in the seed, and the test suite
holds every claim to it.  A claim expected not to hold carries ``because`` (what we find) and ``defence`` (the
strongest argument the authors could make, and why the verdict stands anyway); an expected violation also carries
its ``severity`` (:data:`SEVERITIES`), which the errata report (:mod:`theorylab.errata`) prints.

:class:`Evidence` is a list of :class:`theorylab.checks.Check` rows plus a figure, notes, deviations from the paper
and errata.  Its verdict is decided by the *accusing* checks — the deciding ones (not definitional) that carry the
paper's relation (role ``statement`` or ``auxiliary``, not ``ours``) and, unless the claim is about the digest, do
not rest on a number of the digest: *violated* if any is violated, else *inconclusive* if any is, else *holds*; a
claim with no accusing check is inconclusive.  Its Monte Carlo checks share the claim's family level (Bonferroni,
see :mod:`theorylab.checks`).  The *headline* is the check that decided: the first violated one, else the first
inconclusive one, else the loosest statement bound, else the first accusing check.  A hold is labelled *vacuous*
when a statement bound (not an auxiliary one) is more than :data:`theorylab.checks.VACUOUS` above its measurement,
and *not tight* when a criterion of our own failed.  A claim whose code raises gets ``error``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from theorylab.checks import FAMILY_LEVEL, VACUOUS, VERDICTS, Check
from theorylab.config import RunConfig
from theorylab.registry import entries, register
from theorylab.runner import run
from theorylab.sequential import anytime_orderings
from theorylab.store import Store
from theorylab.trace import Trace

KINDS = ("statement", "reproduction", "scope", "code", "digest")
QUOTED = ("statement", "reproduction", "scope")  # kinds that quote the seed text
SEVERITIES = {
    "typo": "a misprint that the surrounding text or proof corrects",
    "constant": "a constant or coefficient is wrong; the statement survives with the right one",
    "proof step": "a step of a proof does not follow; the statement may still be true",
    "statement": "the statement itself is false on a case inside its assumptions",
    "experiment": "a printed experimental number or ordering is not reproduced across the choices left open",
    "scope": "the paper applies a theorem outside its stated assumptions",
    "reference code": "the authors' public code does not do what the paper says",
}


@dataclass
class Evidence:
    checks: list[Check]
    figure: str | None = None
    notes: list[str] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)
    errata: list[str] = field(default_factory=list)
    level: float = FAMILY_LEVEL  # family-wise confidence over the claim's Monte Carlo checks
    kind: str = "statement"  # the claim's kind (set by evaluate): a digest number accuses only a digest claim

    def __post_init__(self):
        shared = sum(c.decide is not None for c in self.checks)
        if shared:
            share = 1 - (1 - self.level) / shared  # Bonferroni
            self.checks = [c.decide(share) if c.decide is not None else c for c in self.checks]

    @property
    def deciding(self) -> list[Check]:
        """The checks that may accuse: deciding, the paper's relation, and not a digest number (unless the claim is
        about the digest)."""
        return [c for c in self.checks
                if c.deciding and c.role != "ours" and (c.basis != "digest" or self.kind == "digest")]

    @property
    def verdict(self) -> str:
        verdicts = {c.verdict for c in self.deciding}
        for v in ("violated", "inconclusive"):
            if v in verdicts:
                return v
        return "holds" if self.deciding else "inconclusive"

    @property
    def bounds(self) -> list[Check]:
        """The statement's bounds that hold, each with its own tightness ratio."""
        return [c for c in self.deciding if c.tightness is not None and c.role == "statement"]

    @property
    def tightness(self) -> float | None:
        """The loosest statement bound's bound / measured ratio (a claim is as informative as its weakest bound);
        None when no statement bound holds."""
        ratios = [c.tightness for c in self.bounds]
        return max(ratios) if ratios else None

    @property
    def not_tight(self) -> list[Check]:
        """Criteria of our own (``role="ours"``) that the measurement fails: findings about a bound's strength."""
        return [c for c in self.checks if c.role == "ours" and c.verdict == "violated"]

    @property
    def headline(self) -> Check | None:
        """The check that decided the verdict (see the module docstring)."""
        for v in ("violated", "inconclusive"):
            for c in self.deciding:
                if c.verdict == v:
                    return c
        if self.bounds:
            return max(self.bounds, key=lambda c: c.tightness)
        return self.deciding[0] if self.deciding else None

    @property
    def label(self) -> str:
        """The verdict as reports print it: a hold with a vacuous statement bound or a failed criterion of our own
        says so, an inconclusive claim whose readings disagree says that."""
        verdict, tight = self.verdict, self.tightness
        if verdict == "holds" and tight is not None and tight > VACUOUS:
            return f"holds (vacuous x{tight:.3g})"
        if verdict == "holds" and self.not_tight:
            return "holds (not tight)"
        head = self.headline
        if verdict == "inconclusive" and head is not None and head.readings:
            if {"holds", "violated"} <= {r["verdict"] for r in head.readings.values()}:
                return f"inconclusive (depends on the {head.relation.rsplit(' ', 1)[-1]})"
        return verdict


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    statement: str
    check: Callable[["Context"], Evidence]
    kind: str = "statement"
    expect: str = "holds"  # the verdict on our testbed in quick mode
    because: str = ""  # why, for any expected verdict but "holds"
    quote: str = ""  # the paper's words it tests, verbatim from the seed text (kinds in QUOTED)
    where: str = ""  # section / equation / page of the quote (the repository file for kind "code")
    defence: str = ""  # the authors' strongest counter-argument and why the verdict stands (expect != "holds")
    severity: str = ""  # for an expected violation: one of SEVERITIES
    expect_full: str = ""  # the verdict in full mode, when a review found it differs from quick mode's ("": same)
    checks: tuple[str, ...] = ()  # ids of its digest's catalogued checks that it tests (:mod:`theorylab.coverage`)
    partial: tuple[str, ...] = ()  # ids of catalogued checks it tests only in part (some items, or on a stand-in)

    @property
    def paper(self) -> str:
        return self.id.split(".")[0]

    def expected(self, mode: str) -> str:
        """The reviewed verdict in ``mode`` (``"quick"`` or ``"full"``)."""
        return (self.expect_full or self.expect) if mode == "full" else self.expect


@dataclass
class Context:
    """What a check may use: budget, seed, the result store and where to put figures."""

    quick: bool = True
    seed: int = 0
    store: Store | None = None
    figure_dir: Path = Path("results") / "figures"
    progress: bool | None = None
    anytime: bool = False  # paired orderings decided by a confidence sequence (``validate --until-decided``)
    extra_seeds: int = 0  # seeds added to every claim's own list (``validate --until-decided``)

    def pick(self, quick, full):
        return quick if self.quick else full

    def seeds(self, base) -> tuple[int, ...]:
        """A claim's own seed list ``base`` followed by :attr:`extra_seeds` new ones (after its largest): claims
        whose orderings are paired over seeds draw their seeds here, so ``--until-decided`` can add some; the runs
        of the first seeds are the store's, so each round computes only the new seeds."""
        base = tuple(int(s) for s in base)
        start = max(base, default=-1) + 1
        return base + tuple(range(start, start + self.extra_seeds))

    def with_seeds(self, settings):
        """A claim's settings dataclass with its ``seeds`` field extended by :meth:`seeds`."""
        return dataclasses.replace(settings, seeds=self.seeds(settings.seeds))

    def run(self, config: RunConfig) -> Trace:
        return run(config, self.store, self.progress)

    def figure_path(self, name: str) -> Path:
        path = Path(self.figure_dir) / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


@dataclass
class Result:
    claim: Claim
    evidence: Evidence | None
    seconds: float
    error: str | None = None

    @property
    def verdict(self) -> str:
        return "error" if self.evidence is None else self.evidence.verdict

    @property
    def label(self) -> str:
        return "error" if self.evidence is None else self.evidence.label

    def _repr_html_(self) -> str:
        """Jupyter's display: verdict, statement, quote, every check (basis, interval or tolerance, seeds, role) and
        the figure embedded (:func:`theorylab.html_report.fragment`)."""
        from theorylab.html_report import fragment

        return fragment([self], table=False)

    def as_dict(self) -> dict:
        ev = self.evidence
        head = None if ev is None else ev.headline
        return _plain({
            "id": self.claim.id,
            "source": self.claim.source,
            "statement": self.claim.statement,
            "kind": self.claim.kind,
            "quote": self.claim.quote,
            "where": self.claim.where,
            "verdict": self.verdict,
            "label": self.label,
            "expect": self.claim.expect,
            "expect_full": self.claim.expect_full or self.claim.expect,
            "because": self.claim.because,
            "defence": self.claim.defence,
            "severity": self.claim.severity,
            "headline": None if head is None else head.name,
            "measured": None if head is None else head.measured,
            "theory": None if head is None else head.theory,
            "relation": None if head is None else head.relation,
            "basis": None if head is None else head.basis,
            "tightness": None if ev is None else ev.tightness,
            "level": None if ev is None else ev.level,
            "checks": [] if ev is None else [c.as_dict() for c in ev.checks],
            "figure": None if ev is None else ev.figure,
            "notes": [] if ev is None else ev.notes,
            "deviations": [] if ev is None else ev.deviations,
            "errata": [] if ev is None else ev.errata,
            "error": self.error,
            "seconds": round(self.seconds, 3),
        })


def _plain(value):
    """JSON-friendly copy: numpy scalars and arrays to Python, non-finite floats to strings."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def claim(id: str, source: str, statement: str, *, kind: str, expect: str = "holds", because: str = "",
          quote: str = "", where: str = "", defence: str = "", severity: str = "",
          expect_full: str = "", checks: Sequence[str] = (),
          partial: Sequence[str] = ()) -> Callable[[Callable[[Context], Evidence]], Claim]:
    """Decorator turning ``check(ctx) -> Evidence`` into a registered :class:`Claim`.

    ``kind`` is one of :data:`KINDS`; ``expect`` the verdict on our testbed in quick mode, with ``because`` saying
    why whenever it is not "holds" (the regression test holds every claim to it).  ``quote`` and ``where`` anchor a
    claim in the paper's words (required of the kinds in :data:`QUOTED`; the test suite finds each quote in its seed
    text); ``defence`` answers as the authors would for any expected verdict but "holds"; ``severity`` (one of
    :data:`SEVERITIES`) grades an expected violation for the errata report.  ``expect_full`` records a reviewed
    full-mode verdict that differs from ``expect`` (``because`` then explains both); a full-mode violation counts as
    a finding only when it was expected there.  ``checks`` and ``partial`` cite the ids of the validation checks its
    digest catalogues (``validations/<paper>/catalogue.json``) that the claim tests, wholly or in part; the test
    suite holds every cited id to the catalogue (:mod:`theorylab.coverage`)."""
    if kind not in KINDS:
        raise ValueError(f"claim {id!r}: kind must be one of {KINDS}; got {kind!r}")
    for name, value in (("expect", expect), ("expect_full", expect_full or expect)):
        if value not in VERDICTS:
            raise ValueError(f"claim {id!r}: {name} must be one of {VERDICTS}; got {value!r}")
    if expect != "holds" and not because.strip():
        raise ValueError(f"claim {id!r}: an expected verdict {expect!r} needs its reason in `because`")
    if severity and severity not in SEVERITIES:
        raise ValueError(f"claim {id!r}: severity must be one of {tuple(SEVERITIES)}; got {severity!r}")
    if kind == "code" and not where.strip():
        raise ValueError(f"claim {id!r}: a finding about the authors' code names the repository file in `where`")
    for name, ids in (("checks", checks), ("partial", partial)):
        if isinstance(ids, str) or not all(isinstance(i, str) and i.strip() for i in ids):
            raise ValueError(f"claim {id!r}: {name} must be a tuple of check ids, e.g. ('V8',); got {ids!r}")
    if set(checks) & set(partial):
        raise ValueError(f"claim {id!r}: {sorted(set(checks) & set(partial))} cited both in checks and in partial")

    def deco(fn: Callable[[Context], Evidence]) -> Claim:
        found = Claim(id, source, statement, fn, kind, expect, because, " ".join(quote.split()), where, defence,
                      severity, expect_full, tuple(checks), tuple(partial))
        return register("claim", id, statement)(found)

    return deco


def select(patterns: Sequence[str] = ()) -> list[Claim]:
    """Claims whose id equals a pattern or starts with ``pattern + '.'`` (all when empty)."""
    table = {name: e.obj for name, e in entries("claim").items()}
    if not patterns:
        return list(table.values())
    chosen = [c for name, c in table.items() if any(name == p or name.startswith(p + ".") for p in patterns)]
    unknown = [p for p in patterns if not any(n == p or n.startswith(p + ".") for n in table)]
    if unknown:
        raise ValueError(f"no claim matches {unknown}; see `theorylab list`")
    return chosen


def evaluate(c: Claim, ctx: Context) -> Result:
    started = time.perf_counter()
    try:
        with anytime_orderings() if ctx.anytime else contextlib.nullcontext():
            evidence = c.check(ctx)
        evidence.kind = c.kind
    except Exception:  # a claim's code failing is reported, never hidden
        return Result(c, None, time.perf_counter() - started, traceback.format_exc())
    return Result(c, evidence, time.perf_counter() - started)
