"""Fault injection on a real dask cluster (issue 24): the client never waits forever on a cluster without workers.

A scheduler runs in this process; workers are separate ``dask worker --no-nanny`` processes, so killing one with
SIGKILL is final (a nanny would restart it).  Killing a worker, the last worker, and a cluster that never had one
are each answered within the client's patience, keeping what finished.  (Killing the client of a sweep, corrupting
a stored payload and two writers on one ``--out`` are in test_sweep.py, test_store.py and test_files.py.)"""

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time

import pytest

from theorylab.claims import Context, select
from theorylab.config import RunConfig
from theorylab.grid import Cell
from theorylab.parallel import NoWorkers, completed, connect, evaluate_claims
from theorylab.store import Store
from theorylab.sweep import run_cells

PATIENCE = 2.0


@contextlib.contextmanager
def scheduler_only():
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


def start_worker(address: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny",
                             "--nthreads", "1", "--no-dashboard"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def wait_for_workers(client, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while len(client.scheduler_info(n_workers=-1)["workers"]) < n:
        assert time.monotonic() < deadline, f"{n} worker(s) did not join in {timeout} s"
        time.sleep(0.2)


def test_a_cluster_that_never_had_a_worker_stops_the_claims_with_an_error(tmp_path):
    claims = select(["fedawe.prop1"])
    with scheduler_only() as address, connect(scheduler=address) as client:
        started = time.monotonic()
        results = evaluate_claims(claims, Context(quick=True, figure_dir=tmp_path), client, patience=PATIENCE)
        waited = time.monotonic() - started
    assert waited < PATIENCE + 10
    assert results[0].evidence is None and "no worker for 2 s" in results[0].error


def test_killing_the_last_worker_stops_a_sweep_and_keeps_what_finished(tmp_path):
    base = dict(problem={"name": "scalar_quadratic", "centers": [0.0, 1.0]}, participation={"name": "bernoulli",
                "p": [0.5, 0.5]}, algorithm={"name": "fedavg"}, rounds=5, replicas=2, every=5)
    quick = [Cell({"seed": s}, RunConfig(seed=s, **base)) for s in range(2)]
    store = Store(tmp_path / "store.sqlite")
    with scheduler_only() as address:
        worker = start_worker(address)
        try:
            with connect(scheduler=address) as client:
                wait_for_workers(client, 1)
                assert run_cells(quick, store, lambda: contextlib.nullcontext(client), False, PATIENCE).computed == 2
                slow = client.submit(time.sleep, 120, pure=False)
                while not client.processing():
                    time.sleep(0.1)
                time.sleep(0.5)
                os.kill(worker.pid, signal.SIGKILL)
                started = time.monotonic()
                with pytest.raises(NoWorkers) as stranded:
                    list(completed(client, [slow], PATIENCE))
                assert time.monotonic() - started < PATIENCE + 10 and stranded.value.pending == [slow]
                more = [Cell({"seed": s}, RunConfig(seed=s, **base)) for s in range(2, 4)]
                outcome = run_cells(quick + more, store, lambda: contextlib.nullcontext(client), False, PATIENCE)
        finally:
            worker.kill()
            worker.wait()
    assert outcome.cached == 2 and outcome.computed == 0 and len(outcome.failed) == 2
    assert all("no worker" in e for e in outcome.failed.values()) and len(store) == 2


def test_killing_one_of_two_workers_is_survived(tmp_path):
    claims = select(["fedawe.prop1", "fedawe.lemma1"])
    with scheduler_only() as address:
        workers = [start_worker(address) for _ in range(2)]
        try:
            with connect(scheduler=address) as client:
                wait_for_workers(client, 2)
                os.kill(workers[0].pid, signal.SIGKILL)
                results = evaluate_claims(claims, Context(quick=True, figure_dir=tmp_path), client,
                                          patience=PATIENCE)
        finally:
            for w in workers:
                w.kill()
                w.wait()
    assert [r.error for r in results] == [None, None] and [r.verdict for r in results] == ["holds", "holds"]
