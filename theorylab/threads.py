r"""How many intra-op torch threads a piece of work gets.

Claims and figure recipes on the closed-form testbeds move tensors of at most
replicas x clients x params ~ 1e4 entries.  There a second intra-op torch thread only adds
synchronisation: a 1000-round FedAWE run took 0.6 s with one thread and 4.4 s with two on
the project's shared 2-core machine (:func:`one_thread`).

For a run, :func:`run_threads` picks the count from the work and the cores actually free (issue 23).  A second
thread pays only on large tensors and only when a core is idle: measured on the 2-core machine, a 256-replica FedAvg
run (m = 100, d = 20) took 0.86 s with two threads and 1.03 s with one when quiet, but 2.95 s with two and 1.02 s with
one beside one busy process.  Losing 17% when quiet against tripling when contended, the policy takes more threads
only when the run is large (:data:`LARGE` entries per ``(R, m, d)`` tensor) and no other process kept a core busy
during the :data:`WINDOW_S` seconds before the run (``/proc/stat``'s busy time less this process's own, so that
its own spinning thread pool does not count; the load average and the running count would), and never more than
the caller allows (``torch.get_num_threads()`` at that moment: :func:`one_thread`, a dask
worker's plan).  ``benchmarks/threads.py`` measures it beside a competing process.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from pathlib import Path
from typing import Iterator

import torch

LARGE = 200_000  # entries of an (R, m, d) tensor from which a second thread can pay
WINDOW_S = 0.05  # how long the other processes' load is measured before a large run


def one_thread(check):
    """Decorator: run ``check(ctx)`` (a claim or a figure recipe) with one intra-op torch thread,
    restoring the previous setting afterwards."""

    @functools.wraps(check)
    def wrapper(ctx):
        previous = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return check(ctx)
        finally:
            torch.set_num_threads(previous)

    return wrapper


def _jiffies() -> tuple[int, int, int]:
    """(all CPUs' jiffies, their idle jiffies, this process's jiffies) from ``/proc/stat`` and ``/proc/self/stat``."""
    cpu = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    own = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    return sum(cpu), cpu[3] + cpu[4], int(own[11]) + int(own[12])  # idle + iowait; utime + stime


def busy_elsewhere(window: float = WINDOW_S) -> float:
    """Cores busy with other processes' work, measured over ``window`` seconds: the machine's busy time less this
    process's own (its spinning thread pool included), in cores; 0 where ``/proc`` is missing."""
    try:
        total0, idle0, own0 = _jiffies()
        time.sleep(window)
        total1, idle1, own1 = _jiffies()
    except (OSError, ValueError, IndexError):
        return 0.0
    elapsed = total1 - total0  # jiffies summed over every CPU of the machine
    if elapsed <= 0:
        return 0.0
    others = elapsed - (idle1 - idle0) - (own1 - own0)
    return max(0.0, others / elapsed * (os.cpu_count() or 1))


def run_threads(entries: int, cores: int | None = None, busy: float | None = None) -> int:
    """Threads for a run whose largest per-round tensor has ``entries`` entries (see the module docstring)."""
    cap = torch.get_num_threads()
    if entries < LARGE or cap <= 1:
        return 1
    cores = len(os.sched_getaffinity(0)) if cores is None and hasattr(os, "sched_getaffinity") else (cores or 1)
    free = cores - round(busy_elsewhere() if busy is None else busy)  # a core half busy elsewhere counts as free
    return max(1, min(cap, free))


@contextlib.contextmanager
def threads_for(entries: int) -> Iterator[int]:
    """Run the block with :func:`run_threads` threads, restoring the previous count afterwards."""
    previous = torch.get_num_threads()
    chosen = run_threads(entries)
    torch.set_num_threads(chosen)
    try:
        yield chosen
    finally:
        torch.set_num_threads(previous)
