"""Claims: a paper's checkable statement, run as code, returning evidence with an honest verdict.

A :class:`Claim` has an id (``fedawe.prop1``), a source (seed file and section), the
statement in words and a ``check(ctx) -> Evidence`` function.  Evidence is a list
of :class:`Check` rows (measured, theory, relation, tolerance or confidence
interval, verdict), plus a figure, notes, deviations from the paper and errata.

Verdicts: ``holds``, ``violated`` (the measurement contradicts the statement on
our testbed; when a paper is wrong this is the correct outcome and the notes say
why) and ``inconclusive`` (the measurement cannot decide, e.g. a confidence
interval straddles a bound).  A claim whose code raises gets ``error``.

Expected values must come from closed forms, exact enumeration, an independent
computation or the paper; every check says which in its ``note``.
"""

from __future__ import annotations

import math
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from theorylab.checks import Check
from theorylab.config import RunConfig
from theorylab.registry import entries, register
from theorylab.runner import run
from theorylab.store import Store
from theorylab.trace import Trace


@dataclass
class Evidence:
    checks: list[Check]
    figure: str | None = None
    notes: list[str] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)
    errata: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        verdicts = {c.verdict for c in self.checks}
        for v in ("violated", "inconclusive"):
            if v in verdicts:
                return v
        return "holds" if self.checks else "inconclusive"

    @property
    def tightness(self) -> float | None:
        """The worst (smallest) bound / measured ratio among the bound checks; None when there are none."""
        ratios = [c.tightness for c in self.checks if c.tightness is not None]
        return min(ratios) if ratios else None


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    statement: str
    check: Callable[["Context"], Evidence]


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

    def as_dict(self) -> dict:
        primary = self.evidence.checks[0] if self.evidence and self.evidence.checks else None
        return _plain({
            "id": self.claim.id,
            "source": self.claim.source,
            "statement": self.claim.statement,
            "verdict": self.verdict,
            "measured": None if primary is None else primary.measured,
            "theory": None if primary is None else primary.theory,
            "relation": None if primary is None else primary.relation,
            "tightness": None if self.evidence is None else self.evidence.tightness,
            "checks": [] if self.evidence is None else [asdict(c) for c in self.evidence.checks],
            "figure": None if self.evidence is None else self.evidence.figure,
            "notes": [] if self.evidence is None else self.evidence.notes,
            "deviations": [] if self.evidence is None else self.evidence.deviations,
            "errata": [] if self.evidence is None else self.evidence.errata,
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


def claim(id: str, source: str, statement: str) -> Callable[[Callable[[Context], Evidence]], Claim]:
    """Decorator turning ``check(ctx) -> Evidence`` into a registered :class:`Claim`."""

    def deco(fn: Callable[[Context], Evidence]) -> Claim:
        return register("claim", id, statement)(Claim(id, source, statement, fn))

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
