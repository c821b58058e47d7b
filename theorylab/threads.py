"""Thread count for work on tiny tensors.

Claims and figure recipes on the closed-form testbeds move tensors of at most
replicas x clients x params ~ 1e4 entries.  There a second intra-op torch thread only adds
synchronisation: a 1000-round FedAWE run took 0.6 s with one thread and 4.4 s with two on
the project's shared 2-core machine.
"""

from __future__ import annotations

import functools

import torch


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
