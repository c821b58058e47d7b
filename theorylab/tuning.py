r"""Hyper-parameter selection by a named rule: the "each method tuned on a grid" of the papers' experiments.

The papers tune every method over a grid and rarely say how the winner was chosen (seed 002 App. B.2: "chosen
values unreported"; seed 001 §4.4: a grid of steps "for all algorithms").  A claim that compares tuned methods
must name its rule, so this module makes the rule an object:

* a *score* maps the runs of one grid point to a number (:func:`final_mean`: the mean over runs of a metric's last
  ``window`` evaluations);
* :func:`select` keeps the grid point with the best score.  A grid point any of whose runs diverged (a non-finite
  value: the runner marks a diverged replica's metrics ``inf``) is never chosen, whatever the metric's direction, so
  an ``inf`` accuracy cannot win.

Selecting on the same runs that are then compared inflates the winner's score (the maximum of noisy means); claims
therefore tune on runs of their own seeds (``held-out`` selection) and compare on others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Generic, Mapping, TypeVar

import numpy as np

Point = TypeVar("Point")


@dataclass(frozen=True)
class Selection(Generic[Point]):
    best: Point  # the chosen grid point's key
    scores: dict  # every grid point's score (-inf or +inf, the worst, where a run diverged)
    rule: str  # the rule in words, for the claim's notes


def final_mean(metric: str, window: int) -> Callable[[list], float]:
    """Score of a grid point's traces: the mean over every (trace, replica) run of ``metric``'s last ``window``
    evaluations; ``nan`` when any run is not finite."""
    if window < 1:
        raise ValueError(f"window must be >= 1; got {window}")

    def score(traces: list) -> float:
        values = np.concatenate([np.asarray(t.metrics[metric], dtype=np.float64)[:, -window:].mean(1)
                                 for t in traces])
        return float(values.mean()) if np.all(np.isfinite(values)) else math.nan

    return score


def select(grid: Mapping[Point, list], score: Callable[[list], float], larger: bool, rule: str) -> Selection:
    """The grid point (key of ``grid``: its runs) with the largest (``larger``) or smallest ``score``; a point
    with a non-finite score (``nan``, or the ``inf`` a diverged run's metric reads) is worst, whichever the
    direction.  Ties go to the first point in ``grid``'s order."""
    if not grid:
        raise ValueError("the grid is empty")
    worst = -math.inf if larger else math.inf
    scores = {point: (s if math.isfinite(s := score(runs)) else worst) for point, runs in grid.items()}
    if all(s == worst for s in scores.values()):
        raise ValueError(f"every grid point diverged or scored {worst}; nothing to select ({rule})")
    best = (max if larger else min)(scores, key=scores.__getitem__)
    return Selection(best, scores, rule)
