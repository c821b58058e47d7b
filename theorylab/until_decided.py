r"""Seeds until decided: ``theorylab validate --until-decided --budget DURATION``.

Claims whose orderings are paired over seeds (:func:`theorylab.checks.paired_difference`) draw their seeds from
:meth:`theorylab.claims.Context.seeds`.  Under ``--until-decided`` every claim is evaluated with
``ctx.anytime`` set, so those orderings are decided by the anytime-valid confidence sequence of
:mod:`theorylab.sequential`; then, round after round, each claim that still has an *open* ordering (inconclusive,
and not because its readings disagree: more seeds cannot reconcile two readings) is evaluated again with as many
new seeds as it already has (one seed first, to learn how many paired differences a seed gives, then the seed
count doubles).  The earlier seeds' runs come from the store, so a round
costs about its new seeds.  Rounds go to the open claims in turn until none is open or the budget would be
exceeded by the next round, projected from the last round's cost per new seed.

Looking after every round is what the confidence sequence allows: its level holds at any stopping time, so
stopping at the first decision, or when the budget runs out, inflates no error.  A check that stays undecided
says how many seeds its current effect would need (:func:`theorylab.sequential.seeds_needed`).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, Sequence

from theorylab.checks import Check
from theorylab.claims import Claim, Context, Result, evaluate


def open_orderings(result: Result) -> list[Check]:
    """The deciding checks of ``result`` that more seeds could still decide: paired orderings that are
    inconclusive, unless they are so only because their readings disagree."""
    if result.evidence is None:
        return []
    found = []
    for c in result.evidence.deciding:
        if c.seeds is None or c.verdict != "inconclusive":
            continue
        if c.readings and not any(r["verdict"] == "inconclusive" for r in c.readings.values()):
            continue  # decided under every reading, and they disagree
        found.append(c)
    return found


@dataclasses.dataclass
class _Open:
    result: Result
    history: list[int]  # paired differences at each evaluation
    per_seed: float  # seconds per new seed in the last round (at first: the whole first evaluation, an upper bound)
    extra: int = 0  # seeds added so far
    unit: int | None = None  # paired differences per seed (replicas per seed), learnt from the first added seed
    decided: bool = False
    fixed: bool = False  # the claim's seed list does not grow


def _seeds(result: Result) -> int:
    return min((c.seeds for c in open_orderings(result)), default=0)


def add_seeds(results: Sequence[Result], ctx: Context, budget_s: float,
              run: Callable[[Claim, Context], Result] = evaluate,
              clock: Callable[[], float] = time.monotonic) -> list[Result]:
    """``results`` (evaluated with ``ctx.anytime`` set) with every open ordering given more seeds, round-robin,
    within ``budget_s`` seconds; each re-evaluated claim's notes say how its seed count grew."""
    if not ctx.anytime:
        raise ValueError("add_seeds needs results decided by confidence sequences: evaluate with ctx.anytime set")
    start = clock()
    items = {r.claim.id: _Open(r, [_seeds(r)], r.seconds) for r in results if open_orderings(r)}
    active = list(items.values())
    while active:
        still = []
        for item in active:  # one seed first (to learn its differences per seed), then double the seed count
            added = 1 if item.unit is None else item.history[0] // item.unit + item.extra
            if clock() - start + item.per_seed * added > budget_s:
                continue
            began = clock()
            result = run(item.result.claim, dataclasses.replace(ctx, extra_seeds=item.extra + added))
            seeds = _seeds(result)
            if result.evidence is None or not open_orderings(result):
                item.result, item.decided = result, True
                item.history.append(min((c.seeds for c in result.evidence.deciding if c.seeds is not None),
                                        default=0) if result.evidence is not None else 0)
            elif seeds > item.history[-1]:  # the claim took the new seeds
                item.unit = item.unit or seeds - item.history[-1]
                item.result, item.extra, item.per_seed = result, item.extra + added, (clock() - began) / added
                item.history.append(seeds)
                still.append(item)
            else:
                item.fixed = True
        active = still
    for item in items.values():
        if item.result.evidence is not None:
            growth = " -> ".join(str(n) for n in item.history)
            how = ("every ordering decided" if item.decided else "its seeds are fixed, so more cannot be added"
                   if item.fixed else f"some ordering still open when the {budget_s:g} s budget ran out")
            item.result.evidence.notes.append(f"--until-decided: paired seeds {growth}, each look decided by a "
                                              f"confidence sequence; {how}")
    return [items[r.claim.id].result if r.claim.id in items else r for r in results]
