"""Benchmark: sweep cells per second, serial vs a dask LocalCluster, both measured in the same run (issue 11).

Grid: 64 small quadratic runs by default (FedAvg on ``random_quadratic``, m = 10 clients, d = 5, 200 rounds,
16 replicas; 16 seeds x 4 step sizes), each written to a fresh result store:

* **serial**: the runner in this process, cell after cell, with one torch thread (on tensors this small a
  second thread only adds synchronisation, see ``theorylab/threads.py``);
* **cluster**: :func:`theorylab.sweep.run_cells` on a LocalCluster of ``--workers`` single-threaded worker
  processes, torch threads per task from :func:`theorylab.parallel.thread_plan` (workers x threads <= cores).
  The cluster is started and warmed up (each worker imports the engine) before the clock starts; its start-up
  time is printed apart.

Printed: cells/s of each, the speed-up, and the speed-up per core used (``speed-up / workers``: 1.0 is perfect
scaling).  Timings on a shared 2-core VM drift, so serial and cluster alternate over ``--repeats`` blocks and the
medians are compared.  On a 2-core machine expect a speed-up of at most 2.

Run: ``python benchmarks/sweep.py`` (``--quick``: 16 cells, one block).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

import torch

from theorylab.grid import expand, parse
from theorylab.parallel import connect, usable_cores
from theorylab.runner import run
from theorylab.store import Store
from theorylab.sweep import run_cells

M, D = 10, 5
STEPS = [0.01, 0.02, 0.05, 0.1]


def cells(n: int, rounds: int, first_seed: int = 0):
    seeds = max(1, n // len(STEPS))
    spec = {"base": {"problem": {"name": "random_quadratic", "n_clients": M, "dim": D, "sigma": 0.5, "seed": 0},
                     "participation": {"name": "bernoulli", "p": [0.2 + 0.07 * i for i in range(M)]},
                     "algorithm": {"name": "fedavg", "local_steps": 5}, "rounds": rounds, "replicas": 16,
                     "every": rounds},
            "product": {"seed": list(range(first_seed, first_seed + seeds)), "algorithm.lr": STEPS}}
    return expand(parse(spec))


def serial(grid, folder: Path) -> float:
    store = Store(folder / "serial.sqlite")
    started = time.perf_counter()
    for cell in grid:
        run(cell.config, store, progress_bar=False)
    return len(grid) / (time.perf_counter() - started)


def cluster(grid, folder: Path, client) -> float:
    store = Store(folder / "cluster.sqlite")
    started = time.perf_counter()
    done = run_cells(grid, store, lambda: contextlib.nullcontext(client), progress_bar=False)
    seconds = time.perf_counter() - started
    assert done.computed == len(grid) and not done.failed, done
    return len(grid) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 cells, one block")
    parser.add_argument("--cells", type=int, default=64, help="grid size (a multiple of 4; default 64)")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating serial/cluster blocks (default 3)")
    args = parser.parse_args()
    n, repeats = (16, 1) if args.quick else (args.cells, args.repeats)
    if n < len(STEPS) or n % len(STEPS) or args.workers < 1 or args.repeats < 1 or args.rounds < 1:
        parser.error(f"--cells must be a positive multiple of {len(STEPS)}; --workers, --repeats and --rounds >= 1")
    torch.set_num_threads(1)
    run(cells(1, args.rounds, first_seed=10_000)[0].config)  # warm-up: imports and first-call costs
    print(f"sweep of {n} quadratic runs (m={M}, d={D}, {args.rounds} rounds, 16 replicas) on {usable_cores()} "
          f"usable cores; serial: 1 torch thread; cluster: {args.workers} single-threaded worker processes")
    started = time.perf_counter()
    with connect(args.workers) as client:
        startup = time.perf_counter() - started
        with tempfile.TemporaryDirectory() as tmp:
            run_cells(cells(2 * args.workers, args.rounds, first_seed=20_000), Store(Path(tmp) / "warm.sqlite"),
                      lambda: contextlib.nullcontext(client), progress_bar=False)  # every worker imports the engine
        rates = {"serial": [], "cluster": []}
        for block in range(repeats):
            grid = cells(n, args.rounds, first_seed=100 * block)
            with tempfile.TemporaryDirectory() as tmp:
                rates["serial"].append(serial(grid, Path(tmp)))
                rates["cluster"].append(cluster(grid, Path(tmp), client))
    s, c = (statistics.median(rates[k]) for k in ("serial", "cluster"))
    print(f"cluster start-up (not counted): {startup:.1f} s")
    print(f"{'':>8} {'cells/s':>9}   blocks")
    for name, value in (("serial", s), ("cluster", c)):
        print(f"{name:>8} {value:9.2f}   " + " ".join(f"{r:.2f}" for r in rates[name]))
    print(f"speed-up {c / s:.2f}x with {args.workers} workers; per core used {c / s / args.workers:.2f} "
          f"(1.00 = perfect scaling)")


if __name__ == "__main__":
    main()
