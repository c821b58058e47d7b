"""Benchmark: the thread policy of :mod:`theorylab.threads` against fixed thread counts, quiet and beside a
competing process (issue 23).

The run: FedAvg on ``random_quadratic`` (m = 100, d = 20, s = 5 local steps, p = 0.5), 256 replicas, 60 rounds,
each timing in a fresh process.  Three settings — torch's default cap with the policy (``policy``), one thread, two
threads — are timed in alternating order, first on a quiet machine, then while a busy-looping process runs beside
them.  The policy should be near the best fixed count in both: a second thread only when a core is free.

Run: ``python benchmarks/threads.py`` (``--repeats N``, default 3).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

RUN = """
import sys, time, torch
from theorylab.config import RunConfig
from theorylab.runner import run
from theorylab.threads import run_threads
if sys.argv[1] != "policy":
    torch.set_num_threads(int(sys.argv[1]))
cfg = RunConfig(problem={"name": "random_quadratic", "n_clients": 100, "dim": 20, "sigma": 1.0, "seed": 0},
                participation={"name": "bernoulli", "p": [0.5] * 100},
                algorithm={"name": "fedavg", "local_steps": 5, "lr": 0.05}, rounds=60, replicas=256, every=60)
run(cfg.replace(rounds=2, every=2))
chosen = run_threads(256 * 100 * 20)
started = time.perf_counter()
run(cfg)
print(time.perf_counter() - started, chosen)
"""
SETTINGS = ("policy", "1", "2")


def timed(setting: str) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", RUN, setting], capture_output=True, text=True, check=True).stdout
    seconds, chosen = out.split()
    return float(seconds), int(chosen)


def measure(repeats: int) -> dict[str, tuple[float, int]]:
    times = {s: [] for s in SETTINGS}
    chosen = {}
    for _ in range(repeats):
        for s in SETTINGS:
            seconds, threads = timed(s)
            times[s].append(seconds)
            chosen[s] = threads if s == "policy" else int(s)
    return {s: (float(np.median(v)), chosen[s]) for s, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("FedAvg, random_quadratic m=100 d=20 s=5 p=0.5, 256 replicas, 60 rounds: median seconds (threads used)")
    quiet = measure(args.repeats)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1.0)
        loaded = measure(args.repeats)
    finally:
        busy.kill()
    print(f"{'setting':>8} {'quiet':>14} {'beside a busy process':>24}")
    for s in SETTINGS:
        print(f"{s:>8} {quiet[s][0]:9.2f} s ({quiet[s][1]}) {loaded[s][0]:18.2f} s ({loaded[s][1]})")
    best = {name: min(v[0] for v in m.values()) for name, m in (("quiet", quiet), ("busy", loaded))}
    print(f"policy / best fixed count: quiet {quiet['policy'][0] / best['quiet']:.2f}, "
          f"busy {loaded['policy'][0] / best['busy']:.2f}")


if __name__ == "__main__":
    main()
