r"""How many intra-op torch threads a piece of work gets.

Claims and figure recipes on the closed-form testbeds move tensors of at most
replicas x clients x params ~ 1e4 entries.  There a second intra-op torch thread only adds
synchronisation: a 1000-round FedAWE run took 0.6 s with one thread and 4.4 s with two on
the project's shared 2-core machine (:func:`one_thread`).

For a run, :func:`run_threads` picks the count from the work and the cores actually free (issue 23).  A second
thread pays only on large tensors and only when a core is idle: measured on the 2-core machine, a 256-replica FedAvg
run (m = 100, d = 20) took 0.86 s with two threads and 1.03 s with one when quiet, but 2.95 s with two and 1.02 s with
one beside one busy process.  Losing 17% when quiet against tripling when contended, the policy takes more threads
only when the run is large (:data:`LARGE` entries per ``(R, m, d)`` tensor) and the kernel reports no other runnable
thread (``/proc/loadavg``'s running count, read when the run starts; its one-minute load must leave a core free too),
and never more than the caller allows (``torch.get_num_threads()`` at that moment: :func:`one_thread`, a dask
worker's plan).  ``benchmarks/threads.py`` measures it beside a competing process.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
from typing import Iterator

import torch

LARGE = 200_000  # entries of an (R, m, d) tensor from which a second thread can pay


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


def busy_elsewhere() -> float:
    """Cores busy with other work: the runnable threads besides this one (``/proc/loadavg``'s running count), or
    the one-minute load when it is larger (the running count misses work between its time slices); 0 where
    ``/proc`` is missing."""
    try:
        fields = Path("/proc/loadavg").read_text().split()
    except OSError:
        return 0.0
    running = int(fields[3].split("/")[0]) - 1  # this thread is running while it reads
    return max(0.0, float(running), float(fields[0]) - 1.0)


def run_threads(entries: int, cores: int | None = None, busy: float | None = None) -> int:
    """Threads for a run whose largest per-round tensor has ``entries`` entries (see the module docstring)."""
    cap = torch.get_num_threads()
    if entries < LARGE or cap <= 1:
        return 1
    cores = len(os.sched_getaffinity(0)) if cores is None and hasattr(os, "sched_getaffinity") else (cores or 1)
    free = int(cores - (busy_elsewhere() if busy is None else busy) + 1e-9)
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
