r"""Where a rate statement has power: horizons inside a theorem's asymptotic regime, or what reaching it would cost.

A rate stated "for sufficiently large :math:`T`" says nothing about a log-log slope fitted below the horizon
:math:`T_\star` where its leading term starts to dominate (e.g. seed 004 Thm 3.1, App. C; digest 004 §3.2:
:math:`T_\star=(200e^2S\sigma^2\sqrt{SK}/(4L\Delta+26\sigma^2))^2`; seed 000 Corollary 1 under (11); digest 000
§3.2: :math:`T_{\min}`).  The rule (issue 25, item 3) is one of two outcomes:

* **in reach** — :func:`horizons_in_regime` gives ``count`` powers of two from :math:`2^{\lceil\log_2T_\star\rceil}`
  on, spaced by ``ratio``; the slope is fitted there and decides as the statement's relation;
* **out of reach** — the largest of those horizons exceeds what the mode affords: no slope is fitted, and
  :func:`out_of_reach` reports an inconclusive check naming :math:`T_\star`, the largest affordable horizon, the
  horizons a decisive test needs and their projected cost,

.. math:: \text{cost} = c \cdot R \cdot n_{\rm runs}\sum_j T_j,

with :math:`c` the measured seconds per replica-round of the runs the claim did make (:func:`seconds_per_round`,
from each trace's own wall time, kept in the result store), :math:`R` the replicas and :math:`n_{\rm runs}` the runs
per horizon (problems, grid points).  Replicas are a batch dimension, so :math:`c\cdot R` is the per-round cost at
the :math:`R` the claim runs with; the projection is exact for a fixed per-round cost and conservative when larger
horizons record metrics more sparsely.
"""

from __future__ import annotations

import math
from typing import Iterable

from theorylab.checks import Check, fmt

HARDWARE = "this machine (2 CPU cores; one thread per claim)"


def first_power_of_two(threshold: float) -> int:
    r""":math:`2^{\lceil\log_2\max(T_\star,1)\rceil}`: the first power of two at or above the threshold."""
    if not threshold > 0 or not math.isfinite(threshold):
        raise ValueError(f"threshold must be positive and finite; got {threshold!r}")
    power = 1
    while power < threshold:
        power *= 2
    return power


def regime_horizons(threshold: float, count: int = 3, ratio: int = 4) -> tuple[int, ...]:
    r""":math:`T_j = 2^{\lceil\log_2T_\star\rceil}\,\text{ratio}^j`, :math:`j=0..\text{count}-1`: the horizons of a
    decisive test, whatever they cost (``count=1``: one horizon, for a slope across another axis at fixed T)."""
    if count < 1 or ratio < 2:
        raise ValueError(f"need count >= 1 horizons spaced by ratio >= 2; got count={count}, ratio={ratio}")
    start = first_power_of_two(threshold)
    return tuple(start * ratio ** j for j in range(count))


def horizons_in_regime(threshold: float, limit: int, count: int = 3, ratio: int = 4) -> tuple[int, ...] | None:
    """:func:`regime_horizons`, or None when the largest of them exceeds ``limit`` (the mode cannot afford it)."""
    horizons = regime_horizons(threshold, count, ratio)
    return horizons if horizons[-1] <= limit else None


def seconds_per_round(traces: Iterable) -> float:
    r"""Measured seconds per replica-round, :math:`\sum_k s_k/\sum_k T_kR_k`, over traces (``seconds`` is each run's
    own wall time, stored with it, so a cached run keeps the cost it had)."""
    spent = rounds = 0.0
    for trace in traces:
        spent += float(trace.seconds)
        rounds += float(trace.config["rounds"]) * float(trace.config["replicas"])
    if rounds <= 0:
        raise ValueError("seconds_per_round needs at least one trace with rounds and replicas")
    return spent / rounds


def projected_seconds(horizons: Iterable[int], per_round: float, replicas: int, runs: int = 1) -> float:
    r""":math:`c\,R\,n_{\rm runs}\sum_jT_j` (module docstring)."""
    return float(per_round) * int(replicas) * int(runs) * float(sum(horizons))


def out_of_reach(name: str, threshold: float, limit: int, per_round: float, replicas: int, *, count: int = 3,
                 ratio: int = 4, runs: int = 1, regime: str = "", note: str = "") -> Check:
    r"""The inconclusive check a rate statement gets when its regime :math:`T\ge T_\star` is beyond ``limit``.

    ``measured`` is the largest affordable horizon, ``theory`` the threshold; the note gives the horizons a
    decisive test needs (:func:`regime_horizons`) and their projected cost (:func:`projected_seconds`).  Basis
    ``closed_form``: both sides are computed, nothing is sampled.  It is a statement check (the rate cannot be
    decided here), so the claim reads inconclusive; it never fits a slope."""
    needed = regime_horizons(threshold, count, ratio)
    if needed[-1] <= limit:
        raise ValueError(f"out_of_reach({name!r}): horizons {needed} fit under the limit {limit}; fit the slope")
    cost = projected_seconds(needed, per_round, replicas, runs)
    per = f" x {runs} runs" if runs > 1 else ""
    found = (f"OUT OF REACH: the regime starts at T* = {fmt(float(threshold))}{f' ({regime})' if regime else ''}; "
             f"the largest horizon this mode affords is T = {limit}; a decisive slope test needs T in "
             f"{list(needed)}, projected {cost:.3g} s ({cost / 3600:.3g} h) on {HARDWARE}: {sum(needed)} rounds "
             f"x {replicas} replicas{per} x {per_round:.3g} s per replica-round (measured on the horizons run). "
             "No slope is fitted: below T* it would decide nothing")
    return Check(name, int(limit), float(threshold), ">= T* (largest affordable horizon in the regime)",
                 "inconclusive", "closed_form", note=f"{found}. {note}".strip())
