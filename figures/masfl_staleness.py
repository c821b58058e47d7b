r"""Staleness of the FedBuff delay mechanism behind the MasFL experiments (seed 004 §6, App. E.1; digest 004 §1.4,
§5.2 checks 13–14): histograms of :math:`\tau` for :math:`M_c\in\{20,30,40,50\}` and a timeline of jobs.

Setting of the paper: :math:`N=100` clients, buffer :math:`S=10`, job durations :math:`\mathcal U(0,20)` s drawn per
job, refill R2 (the digest's default), :math:`T=600` server steps; every client available.  The paper prints no
histogram (it quotes :math:`\bar\tau=0.9184`, :math:`\tau_{\max}=4` at :math:`M_c=20`); the dashed line of each panel
is Little's-law mean :math:`(M_c-S)/S` (:mod:`theorylab.clocks.statistics`).  The timeline shows, for a few clients
of one run, each job from the simulated time it started to the server step that applied it, labelled with its
staleness.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from theorylab.clocks.buffered import Buffered
from theorylab.clocks.schedule import Schedule, clock_schedule, staleness_histogram
from theorylab.clocks.statistics import residual, steady_mean_staleness
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

N, BUFFER, STEPS, REPLICAS = 100, 10, 600, 10
CONCURRENCY = (20, 30, 40, 50)
SHOWN_CLIENTS, SHOWN_STEPS = 6, 25


def fedbuff_clock(concurrency: int, refill: str = "R2", delay: dict | None = None) -> dict:
    """The clock spec of the paper's experiments at concurrency :math:`M_c`."""
    return {"name": "buffered", "n_clients": N, "concurrency": concurrency, "buffer": BUFFER, "refill": refill,
            "delay": delay or {"law": "uniform", "t_max": 20.0}}


def replay(clock, replicas: int, seed: int, steps: int = STEPS) -> Schedule:
    """The clock's schedule over ``steps`` server steps with every client available."""
    return clock_schedule({"name": "bernoulli", "p": [1.0] * N}, clock, steps, replicas, seed)


POOLS = ("idle", "all")


class MultisetRefill(Buffered):
    r"""Mode B with R2 read as multiset draws (module docstring): each refill makes :math:`M_c-\text{running}`
    uniform draws *with replacement* from a pool, and starts one job for each distinct idle client drawn.  ``pool``:
    ``"idle"`` draws among the idle clients; ``"all"`` among every client, a draw that hits a busy client being
    lost.  Duplicates and lost draws leave fewer than :math:`M_c` jobs running until the next refill."""

    def __init__(self, concurrency: int, pool: str):
        super().__init__(N, concurrency, BUFFER, "R2", {"law": "uniform", "t_max": 20.0})
        if pool not in POOLS:
            raise ValueError(f"pool must be one of {POOLS}; got {pool!r}")
        self.pool = pool

    def _launch(self, state, streams, available, version: int, target: int):
        """Draw the multiset, then start exactly its distinct idle clients through R2's own launch."""
        running = torch.isfinite(state["finish"])
        idle = available & ~running & ~state["pending"]
        pool = idle if self.pool == "idle" else available
        need = (target - running.sum(1)).clamp(min=0)
        size = pool.sum(1, keepdim=True)
        draws = (streams.uniform("participation", (self.concurrency,)) * size).long().clamp(max=self.n_clients - 1)
        members = torch.argsort((~pool).to(torch.int8), dim=1, stable=True)  # the pool's clients first
        live = (torch.arange(self.concurrency, device=need.device) < need.unsqueeze(1)) & (size > 0)
        hits = torch.zeros(idle.shape, dtype=torch.int64, device=idle.device)
        drawn = (hits.scatter_add_(1, members.gather(1, draws), live.long()) > 0) & idle
        return super()._launch(state, streams, drawn, version, running.sum(1) + drawn.sum(1))


def summary(schedule: Schedule) -> dict:
    """Per-replica staleness totals, counts, Little residuals, the histogram and the largest staleness of one
    schedule."""
    tau = np.where(schedule.arrived, schedule.staleness, 0)
    return {"tau_sum": tau.sum((1, 2)), "count": schedule.arrived.sum((1, 2)), "tau_max": tau.max((1, 2)),
            "residual": residual(schedule.state, schedule.arrived.shape[1]), "histogram": staleness_histogram(schedule)}


def timeline(schedule: Schedule, clients: int, steps: int) -> dict[int, list[tuple[float, float, int]]]:
    """Jobs applied in replica 0's first ``steps`` steps, (start, applied, tau), for the ``clients`` clients with
    the most of them (a job started before step 0 starts at time 0)."""
    time, arrived = schedule.time[0], schedule.arrived[0, :steps]
    busiest = sorted(np.argsort(-arrived.sum(0), kind="stable")[:clients].tolist())
    rows = {}
    for i in busiest:
        start, jobs = 0.0, []
        for t in range(steps):
            if arrived[t, i]:
                jobs.append((start, float(time[t]), int(schedule.staleness[0, t, i])))
            if schedule.dispatched[0, t, i]:
                start = float(time[t])
        rows[i] = jobs
    return rows


@functools.lru_cache(maxsize=2)
def sweep(seed: int, replicas: int = REPLICAS) -> dict:
    """:func:`summary` for every :data:`CONCURRENCY` (R2), and the timeline at :math:`M_c=20` (cached: the claims of
    ``theorylab.validations.masfl.staleness`` share it; treat the result as read-only)."""
    out = {"sweep": {}, "timeline": None}
    for concurrency in CONCURRENCY:
        schedule = replay(fedbuff_clock(concurrency), replicas, seed)
        out["sweep"][concurrency] = summary(schedule)
        if out["timeline"] is None:
            out["timeline"] = timeline(schedule, SHOWN_CLIENTS, SHOWN_STEPS)
    return out


def compute(ctx) -> dict:
    """The figure's data for the context's seed (:func:`sweep`)."""
    return sweep(ctx.seed)


def draw(data: dict, path):
    plt = pyplot()
    fig = plt.figure(figsize=(14, 6.4), constrained_layout=True)
    grid = fig.add_gridspec(2, len(CONCURRENCY))
    for k, (concurrency, s) in enumerate(data["sweep"].items()):
        ax = fig.add_subplot(grid[0, k])
        counts = s["histogram"].sum(0)
        ax.bar(np.arange(len(counts)), counts / counts.sum(), color="C0")
        mean = s["tau_sum"].sum() / s["count"].sum()
        ax.axvline(steady_mean_staleness(concurrency, BUFFER), color="k", ls="--", lw=1,
                   label=f"(M_c - S)/S = {steady_mean_staleness(concurrency, BUFFER):g}")
        ax.set(title=f"M_c = {concurrency}: mean {mean:.3f}, max {len(counts) - 1}", xlabel="staleness tau",
               ylabel="share of applied updates" if k == 0 else None)
        ax.legend(fontsize=8)
    ax = fig.add_subplot(grid[1, :])
    for i, jobs in enumerate(data["timeline"].values()):
        for start, end, tau in jobs:
            ax.plot([start, end], [i, i], color=f"C{min(tau, 9)}", lw=6, solid_capstyle="butt")
            ax.text(end, i + 0.18, str(tau), fontsize=7, ha="right")
    ax.set(yticks=range(len(data["timeline"])), yticklabels=[f"client {i}" for i in data["timeline"]],
           xlabel="simulated time (s)",
           title=f"M_c = 20, first {SHOWN_STEPS} server steps of one run, its {SHOWN_CLIENTS} busiest clients: each "
                 "job from its start to the server step applying it (label: staleness)")
    fig.suptitle(f"FedBuff delay mechanism (R2, N = {N}, S = {BUFFER}, U(0, 20) per job, T = {STEPS})")
    return save(fig, path)


@register("figure", "masfl-staleness")
@one_thread
def render(ctx):
    """MasFL experiments' delay mechanism: staleness histograms over M_c and a timeline of jobs."""
    return draw(compute(ctx), ctx.figure_path("masfl-staleness"))
