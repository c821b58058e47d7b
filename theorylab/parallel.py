r"""The dask.distributed client shared by sweeps and parallel validation, and how work is sized on it.

:func:`connect` gives a client of an existing cluster (``scheduler="tcp://HOST:PORT"``) or of a
``LocalCluster`` of ``workers`` single-threaded workers on this machine (default: one per usable core).
dask is imported here, when a client is wanted, so the engine runs without it.

**Threads.** On a host whose workers run :math:`n` dask threads in total over :math:`c` usable cores, every task
runs with :math:`t = \max(1, \lfloor c/n \rfloor)` intra-op torch threads (:func:`torch_threads`), so
:math:`n\,t \le c` whenever :math:`n \le c`: the cluster never runs more compute threads than there are cores.
On this project's 2-core machine a second torch thread on tiny tensors only adds synchronisation
(:mod:`theorylab.threads`), so two single-threaded workers are the sizing to beat.

**Claims in parallel.** :func:`evaluate_claims` submits one task per claim.  The task looks the claim up by id in
the worker's own registry and evaluates it with a :class:`~theorylab.claims.Context` of the same budget, seed,
store file and figure folder, once the worker has loaded the client's ``--plugin`` plugins
(:func:`theorylab.plugins.given`; installed plugins load through the registry anyway).  A claim draws its
randomness only from streams keyed by ``ctx.seed`` (:mod:`theorylab.rng`) and its cached runs by their config
hash, so its numbers do not depend on the worker that runs it nor on the order in which claims finish; results are
returned in the claims' order.  BLAS/LAPACK run on
one thread while a claim is evaluated, serially or on a worker (:func:`one_blas_thread`): with two OpenBLAS
threads instead of one, ``numpy.linalg.eigvals`` of a 1024 x 1024 matrix moved in the 15th digit, which made
``thesis.markov.product_chain``'s JSON differ between a serial and a ``--workers 2`` run.

**No hang.**  Results are collected by :func:`completed`, which watches the cluster while it waits: when the cluster
has had no worker for :data:`PATIENCE_S` seconds (its last worker died, or none ever joined), it stops with
:class:`NoWorkers`, which names what did not run; claims and cells that finished are kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Iterator, Sequence

import torch

from theorylab.claims import Claim, Context, Result, evaluate
from theorylab.plugins import given, load_given
from theorylab.progress import progress
from theorylab.registry import lookup
from theorylab.store import Store
from theorylab.validation import integer


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform tells, else ``os.cpu_count()``)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def torch_threads(dask_threads: int, cores: int) -> int:
    r"""Torch threads per task when ``dask_threads`` tasks share ``cores``: :math:`\max(1, \lfloor c/n \rfloor)`."""
    integer("dask_threads", dask_threads, 1)
    integer("cores", cores, 1)
    return max(1, cores // dask_threads)


CONNECT_TIMEOUT_S = 10
PATIENCE_S = 30.0  # how long a client waits on a cluster without workers before it gives up


class NoWorkers(RuntimeError):
    """The cluster had no worker for ``patience`` seconds while ``pending`` tasks waited."""

    def __init__(self, pending: list, patience: float):
        self.pending = pending
        super().__init__(f"the dask cluster has had no worker for {patience:g} s; {len(pending)} task(s) did not run "
                         "(start workers with `dask worker ADDRESS`, or run without --scheduler)")


def completed(client, futures, patience: float = PATIENCE_S, poll: float = 0.05) -> Iterator:
    """Yield ``futures`` as they finish, like ``distributed.as_completed``; raise :class:`NoWorkers` (holding the
    futures still pending) once the cluster has had no worker for ``patience`` seconds."""
    import time

    from distributed import as_completed

    waiting = as_completed(futures)
    alone_since, checked = None, 0.0
    while not waiting.is_empty():
        batch = waiting.next_batch(block=False)
        if batch:
            yield from batch
            continue
        now = time.monotonic()
        if now - checked >= 1.0:
            checked = now
            if client.scheduler_info(n_workers=-1)["workers"]:
                alone_since = None
            elif alone_since is None:
                alone_since = now
        if alone_since is not None and now - alone_since >= patience:
            raise NoWorkers(list(waiting.futures), patience)
        time.sleep(poll)
_ADDRESS = re.compile(r"(tcp|tls|ws|wss|ucx)://\[?[A-Za-z0-9_.:-]+\]?:\d{1,5}")


def scheduler_address(address: str) -> str:
    """``address`` if it reads ``PROTOCOL://HOST:PORT`` (as ``dask scheduler`` prints it), else a ValueError naming
    ``scheduler``."""
    if not isinstance(address, str) or not _ADDRESS.fullmatch(address):
        raise ValueError(f"scheduler must be an address PROTOCOL://HOST:PORT such as tcp://10.0.0.5:8786; got "
                         f"{address!r}")
    return address


@contextlib.contextmanager
def connect(workers: int | None = None, scheduler: str | None = None, processes: bool = True) -> Iterator:
    """A ``distributed.Client``: of the cluster at ``scheduler``, else of a LocalCluster with ``workers``
    single-threaded workers (processes, or threads of this process when ``processes=False``), at most one per usable
    core so that workers x threads never exceeds the cores."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        if workers is not None:
            raise ValueError("workers sizes a local cluster; with a scheduler address the cluster's own workers run "
                             "the tasks: give one or the other")
        try:
            client = Client(scheduler_address(scheduler), timeout=CONNECT_TIMEOUT_S)
        except OSError as err:
            raise ValueError(f"scheduler {scheduler!r} did not answer within {CONNECT_TIMEOUT_S} s ({err}); start it "
                             f"with `dask scheduler` or check the address") from None
        with client:
            yield client
        return
    cores = usable_cores()
    n = cores if workers is None else integer("workers", workers, 1)
    if n > cores:
        raise ValueError(f"workers = {n} exceeds the {cores} usable cores of this machine: a local cluster runs at "
                         f"most one single-threaded worker per core; for more, start a cluster (`dask scheduler`, "
                         f"`dask worker`) and pass its address as scheduler")
    # dashboard ":0": the scheduler's HTTP server takes a free port (8787 may belong to another cluster)
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=processes, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's and scipy's BLAS/LAPACK on one thread inside the block (threadpoolctl), whatever the machine's cores."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def thread_plan(client) -> dict[str, int]:
    """Worker address -> torch threads for its tasks (:func:`torch_threads` over the dask threads of its host)."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    answers = client.run(usable_cores, on_error="return")  # a worker that died since it was listed answers an error
    cores = {address: n for address, n in answers.items() if isinstance(n, int)}
    per_host = Counter()
    for info in workers.values():
        per_host[info["host"]] += info["nthreads"]
    return {address: torch_threads(per_host[info["host"]], cores.get(address, 1)) for address, info in workers.items()}


def sized(plan: dict[str, int], fn: Callable, *args):
    """Run ``fn(*args)`` on a dask worker with the torch threads that ``plan`` gives it (1 if it is not listed,
    e.g. a worker restarted after the plan was made)."""
    from distributed import get_worker

    torch.set_num_threads(plan.get(get_worker().address, 1))
    return fn(*args)


def _evaluate_by_id(claim_id: str, quick: bool, seed: int, store: str | None, figure_dir: str, anytime: bool = False,
                    extra_seeds: int = 0, plugins: Sequence[str] = ()):
    """Worker side: evaluate a registered claim, after loading the ``--plugin`` arguments ``plugins`` of the client
    (:func:`theorylab.plugins.given`; each loads once per worker); returns (evidence without its re-decision hooks,
    seconds, error)."""
    load_given(plugins)
    ctx = Context(quick=quick, seed=seed, store=None if store is None else Store(store), figure_dir=Path(figure_dir),
                  progress=False, anytime=anytime, extra_seeds=extra_seeds)
    try:
        with one_blas_thread():
            result = evaluate(lookup("claim", claim_id).obj, ctx)
    finally:
        if ctx.store is not None:
            ctx.store.close()
    evidence = result.evidence
    if evidence is not None:  # checks are already decided; their closures need not travel back
        evidence = dataclasses.replace(evidence, checks=[dataclasses.replace(c, decide=None) for c in evidence.checks])
    return evidence, result.seconds, result.error


def _collected(c: Claim, future) -> Result:
    try:
        return Result(c, *future.result())
    except Exception as err:  # the worker itself failed (killed, out of memory): reported as the claim's error
        return Result(c, None, 0.0, f"the dask task of {c.id} failed: {err!r}")


def evaluate_claims(claims: Sequence[Claim], ctx: Context, client, patience: float = PATIENCE_S,
                    on_result: Callable[[Result], object] | None = None) -> list[Result]:
    """Evaluate ``claims`` as dask tasks on ``client``; the results, in the claims' order, equal a serial run's.  A
    claim whose task could not run (its worker died, or no worker was left for ``patience`` seconds) is an error
    result that says so; the others are kept.  ``on_result`` is called with each result as soon as it finishes
    (``validate`` journals it there)."""
    plan = thread_plan(client)
    store = None if ctx.store is None else str(ctx.store.path)
    futures = [client.submit(sized, plan, _evaluate_by_id, c.id, ctx.quick, ctx.seed, store, str(ctx.figure_dir),
                             ctx.anytime, ctx.extra_seeds, given(), pure=False) for c in claims]
    owner = {f.key: c for c, f in zip(claims, futures)}
    finished, stranded, why = {}, set(), ""
    try:
        for future in progress(completed(client, futures, patience), None, desc="claims", unit="claim",
                               total=len(futures)):
            finished[future.key] = _collected(owner[future.key], future)
            if on_result is not None:
                on_result(finished[future.key])
    except NoWorkers as err:
        stranded, why = {f.key for f in err.pending}, str(err)
        client.cancel(err.pending)
    return [Result(c, None, 0.0, f"{c.id} did not run: {why}") if f.key in stranded
            else finished.get(f.key) or _collected(c, f) for c, f in zip(claims, futures)]
