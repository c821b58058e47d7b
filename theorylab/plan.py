"""What ``theorylab validate`` (full mode) will cost, before it runs: ``theorylab validate --plan``.

Each paper declares its claims' full-mode costs in a JSON file beside its claims (``costs`` of
:func:`theorylab.sources.register_paper`, ``validations/<paper>/full_costs.json``)::

    {"machine": "...", "reference": "reference/full-2026-11-26",
     "claims": {"masfl.thm31_rate": {"seconds": 412.5, "basis": "measured"},
                "fedawe.table2_cnn": {"seconds": 5400, "basis": "estimated: ...", "needs": ["fmnist"]}}}

``seconds`` is the claim's wall time on one single-threaded worker of the reference machine; ``basis`` says whether
it was measured by a reference run (:func:`record` writes those from its ``claims.json``) or estimated, and how;
``needs`` names the datasets of ``make data`` that its full mode reads.  The plan lists every claim with its cost,
the datasets that are absent, and the total: serial, and the wall time of ``--workers N``, scheduling the claims
longest first onto N workers (LPT, within 4/3 of the best schedule; Graham 1969).
"""

from __future__ import annotations

import heapq
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from theorylab.claims import Claim, Result
from theorylab.files import write_text
from theorylab.sources import papers


@dataclass(frozen=True)
class Cost:
    seconds: float | None  # None: nobody has measured or estimated it
    basis: str
    needs: tuple[str, ...] = ()


def declared() -> dict[str, Cost]:
    """Claim id -> its declared full-mode cost, from every registered paper's costs file."""
    found = {}
    for paper in papers().values():
        if paper.costs is None or not Path(paper.costs).is_file():
            continue
        for claim_id, entry in json.loads(Path(paper.costs).read_text()).get("claims", {}).items():
            seconds = entry.get("seconds")
            found[claim_id] = Cost(None if seconds is None else float(seconds), entry.get("basis", "not declared"),
                                   tuple(entry.get("needs", ())))
    return found


def costs(claims: Sequence[Claim]) -> dict[str, Cost]:
    """Each claim's cost (``Cost(None, "not declared")`` for a claim its paper's file does not list)."""
    table = declared()
    return {c.id: table.get(c.id, Cost(None, "not declared")) for c in claims}


def makespan(seconds: Sequence[float], workers: int) -> float:
    """Wall time of running jobs of these durations on ``workers`` workers, longest first onto the least loaded."""
    loads = [0.0] * max(1, workers)
    for s in sorted(seconds, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + s)
    return max(loads)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def render(claims: Sequence[Claim], workers: int, present: dict[str, bool]) -> str:
    """The plan as text: one line per claim (cost, basis, datasets), then the totals and what is missing."""
    table = costs(claims)
    lines = [f"{'claim':46s} {'cost':>9s}  basis"]
    for c in sorted(claims, key=lambda c: -(table[c.id].seconds or 0)):
        cost = table[c.id]
        shown = "?" if cost.seconds is None else _duration(cost.seconds)
        needs = "".join(f"  [needs {d}{'' if present.get(d, True) else ', ABSENT: run `make data`'}]"
                        for d in cost.needs)
        lines.append(f"{c.id:46s} {shown:>9s}  {cost.basis}{needs}")
    known = [cost.seconds for cost in table.values() if cost.seconds is not None]
    unknown = [i for i, cost in table.items() if cost.seconds is None]
    lines += ["", f"{len(claims)} claims, {_duration(sum(known))} serial; about {_duration(makespan(known, workers))} "
                  f"with --workers {workers} (longest first)"]
    if unknown:
        shown = ", ".join(unknown[:8]) + (f" and {len(unknown) - 8} more" if len(unknown) > 8 else "")
        lines.append(f"{len(unknown)} claim(s) with no declared cost, not counted: {shown}")
    absent = sorted({d for cost in table.values() for d in cost.needs if not present.get(d, True)})
    if absent:
        lines.append(f"absent datasets: {', '.join(absent)}; their claims stop with an error saying how to fetch "
                     "them (`make data`)")
    return "\n".join(lines)


def _pool(ratios: dict[str, float], claim_id: str, prefix: str, reads: set[str]) -> tuple[list[float], str]:
    """The measured full/quick ratios an unmeasured claim is estimated from: those of the claims that read datasets
    when it does (their full mode swaps the stand-in for a real dataset), else its paper's, else all."""
    if claim_id in reads:
        return [v for k, v in ratios.items() if k in reads], "the dataset-reading"
    own = [v for k, v in ratios.items() if k.split(".")[0] == prefix]
    return (own, "this paper's") if own else (list(ratios.values()), "all")


def record(results: Sequence[Result], reference: str, machine: str,
           quick: Sequence[Result] = ()) -> list[Path]:
    """Write the measured seconds of a full run's ``results`` into each paper's costs file; a claim the run did not
    finish keeps its entry, or, when it has none and ``quick`` holds its quick-mode time, gets an estimate: that time
    times the median full/quick ratio of the paper's measured claims (of all measured claims when the paper has
    none; of the dataset-reading claims for one that reads a dataset), labelled as such.  Datasets (``needs``)
    already listed are kept."""
    measured = {r.claim.id: r for r in results if r.error is None}
    quick_s = {r.claim.id: r.seconds for r in quick if r.error is None and r.seconds > 0}
    ratios = {claim_id: r.seconds / quick_s[claim_id] for claim_id, r in measured.items() if claim_id in quick_s}
    tables = {prefix: (Path(paper.costs), dict(json.loads(Path(paper.costs).read_text()).get("claims", {}))
                       if Path(paper.costs).is_file() else {}) for prefix, paper in papers().items() if paper.costs}
    reads = {claim_id for _, entries in tables.values() for claim_id, e in entries.items() if e.get("needs")}
    written = []
    for prefix, (path, entries) in tables.items():
        for claim_id, r in measured.items():
            if r.claim.paper == prefix:
                entries[claim_id] = {**entries.get(claim_id, {}), "seconds": round(r.seconds, 1), "basis": "measured"}
        for claim_id, seconds in quick_s.items():
            if claim_id.split(".")[0] != prefix or entries.get(claim_id, {}).get("seconds") is not None:
                continue
            pool, whose = _pool(ratios, claim_id, prefix, reads)
            if not pool:
                continue
            ratio = float(sorted(pool)[len(pool) // 2])
            entries[claim_id] = {**entries.get(claim_id, {}), "seconds": round(seconds * ratio, 1),
                                 "basis": f"estimated: quick-mode {seconds:.1f} s x {ratio:.3g}, the median full/quick "
                                          f"ratio of {whose} {len(pool)} measured claims"}
        if entries:
            body = {"machine": machine, "reference": reference, "claims": dict(sorted(entries.items()))}
            written.append(write_text(path, json.dumps(body, indent=1) + "\n"))
    return written
