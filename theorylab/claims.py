"""Claims: a paper's checkable statement, run as code, returning evidence with an honest verdict.

A :class:`Claim` has an id (``fedawe.prop1``), a source (seed file and section), the statement in words, a
*kind* and a ``check(ctx) -> Evidence`` function:

* ``statement`` — the paper asserts it (a lemma, a theorem, a sentence of its text);
* ``reproduction`` — a number, table or figure the paper (or its digest) prints;
* ``scope`` — whether a theorem covers the paper's own setting (a finding about the theorem's reach, not a
  statement the paper makes).

It also carries the verdict we expect on our testbed and, for anything but *holds*, why; the regression test
reads these from the registry.  :class:`Evidence` is a list of :class:`theorylab.checks.Check` rows plus a
figure, notes, deviations from the paper and errata.  Its verdict is decided by the deciding (non-definitional)
checks: *violated* if any is violated, else *inconclusive* if any is, else *holds*; a claim with no deciding
check is inconclusive.  Its Monte Carlo checks share the claim's family level (Bonferroni, see
:mod:`theorylab.checks`).  The *headline* is the check that decided: the first violated one, else the first
inconclusive one, else the tightest bound, else the first deciding check.  A claim whose code raises gets
``error``.
"""

from __future__ import annotations

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
from theorylab.store import Store
from theorylab.trace import Trace

KINDS = ("statement", "reproduction", "scope")


@dataclass
class Evidence:
    checks: list[Check]
    figure: str | None = None
    notes: list[str] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)
    errata: list[str] = field(default_factory=list)
    level: float = FAMILY_LEVEL  # family-wise confidence over the claim's Monte Carlo checks

    def __post_init__(self):
        shared = sum(c.decide is not None for c in self.checks)
        if shared:
            share = 1 - (1 - self.level) / shared  # Bonferroni
            self.checks = [c.decide(share) if c.decide is not None else c for c in self.checks]

    @property
    def deciding(self) -> list[Check]:
        return [c for c in self.checks if c.deciding]

    @property
    def verdict(self) -> str:
        verdicts = {c.verdict for c in self.deciding}
        for v in ("violated", "inconclusive"):
            if v in verdicts:
                return v
        return "holds" if self.deciding else "inconclusive"

    @property
    def tightness(self) -> float | None:
        """The worst (smallest) bound / measured ratio among the deciding bounds that hold; None when there are none."""
        ratios = [c.tightness for c in self.deciding if c.tightness is not None]
        return min(ratios) if ratios else None

    @property
    def headline(self) -> Check | None:
        """The check that decided the verdict (see the module docstring)."""
        for v in ("violated", "inconclusive"):
            for c in self.deciding:
                if c.verdict == v:
                    return c
        bounds = [c for c in self.deciding if c.tightness is not None]
        if bounds:
            return min(bounds, key=lambda c: c.tightness)
        return self.deciding[0] if self.deciding else None

    @property
    def label(self) -> str:
        """The verdict as reports print it: a hold whose tightest bound exceeds :data:`VACUOUS` says so."""
        tight = self.tightness
        if self.verdict == "holds" and tight is not None and tight > VACUOUS:
            return f"holds (vacuous x{tight:.3g})"
        return self.verdict


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    statement: str
    check: Callable[["Context"], Evidence]
    kind: str = "statement"
    expect: str = "holds"  # the verdict on our testbed in quick mode
    because: str = ""  # why, for any expected verdict but "holds"


@dataclass
class Context:
    """What a check may use: budget, seed, the result store and where to put figures."""

    quick: bool = True
    seed: int = 0
    store: Store | None = None
    figure_dir: Path = Path("results") / "figures"
    progress: bool | None = None

    def pick(self, quick, full):
        return quick if self.quick else full

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

    def as_dict(self) -> dict:
        ev = self.evidence
        head = None if ev is None else ev.headline
        return _plain({
            "id": self.claim.id,
            "source": self.claim.source,
            "statement": self.claim.statement,
            "kind": self.claim.kind,
            "verdict": self.verdict,
            "label": self.label,
            "expect": self.claim.expect,
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


def claim(id: str, source: str, statement: str, *, kind: str, expect: str = "holds",
          because: str = "") -> Callable[[Callable[[Context], Evidence]], Claim]:
    """Decorator turning ``check(ctx) -> Evidence`` into a registered :class:`Claim`.

    ``kind`` is one of :data:`KINDS`; ``expect`` the verdict on our testbed in quick mode, with ``because`` saying
    why whenever it is not "holds" (the regression test holds every claim to it)."""
    if kind not in KINDS:
        raise ValueError(f"claim {id!r}: kind must be one of {KINDS}; got {kind!r}")
    if expect not in VERDICTS:
        raise ValueError(f"claim {id!r}: expect must be one of {VERDICTS}; got {expect!r}")
    if expect != "holds" and not because.strip():
        raise ValueError(f"claim {id!r}: an expected verdict {expect!r} needs its reason in `because`")

    def deco(fn: Callable[[Context], Evidence]) -> Claim:
        return register("claim", id, statement)(Claim(id, source, statement, fn, kind, expect, because))

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
        evidence = c.check(ctx)
    except Exception:  # a claim's code failing is reported, never hidden
        return Result(c, None, time.perf_counter() - started, traceback.format_exc())
    return Result(c, evidence, time.perf_counter() - started)
