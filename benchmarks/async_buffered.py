"""Benchmark: buffered asynchronous FedBuff, theorylab's kernel on its virtual clock vs a research-style loop.

The work (issue 23; the peer script ``shared/peers/flsim_async.py`` specifies the same): m = 100 clients with
diagonal quadratics f_i(x) = 0.5 sum_j A_ij (x_j - b_ij)^2 (rng = default_rng(0); b ~ N(0, 1), A ~ U(1, 4)),
d = 20; a client started from the model x runs s = 5 local SGD steps, lr 0.05, gradient A_i (x - b_i) + N(0, 0.1^2 I),
and sends delta = x_end - x_start; the server applies the mean of every K = 10 arrivals with server lr 0.1; C = 20
jobs are in flight, each lasting U(0, 20) time units, and a client chosen uniformly among the idle ones starts the
moment a job ends (refill R1; a buffered client is not idle until the server step); 200 server updates, i.e. 2,000 client updates per replica.

* **kernel**: ``theorylab.runner.run`` of ``fedbuff`` under the ``buffered`` clock (float64), all replicas at once;
  the local steps of the arriving clients only (:mod:`theorylab.kernels.client_work`);
* **loop**: how research code simulates it: one replica at a time, a ``heapq`` of job end times, a numpy SGD loop
  per arriving client, ``rng.normal`` per step.

Throughput is client updates per second (replicas x 2,000 / seconds); the ratio kernel / loop is printed for each
replica count.  Both sides run in this process, alternating, and the medians of the blocks are compared.  The peer
FLSim 0.1.0 needs its own Python 3.10 environment (``shared/peers/README.md``); with ``--flsim-python PATH`` (that
environment's interpreter) this script first runs ``shared/peers/flsim_async.py`` and prints theorylab's ratio against
FLSim measured in the same sitting, else against the README's recorded 13.4 ms per client update.

Run: ``python benchmarks/async_buffered.py [--quick] [--flsim-python /tmp/flsim310/bin/python]``.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import subprocess
import time
from pathlib import Path

import numpy as np

from theorylab.config import RunConfig
from theorylab.runner import run

M, D, S, K, C, UPDATES, LR, SERVER_LR, NOISE, T_MAX = 100, 20, 5, 10, 20, 200, 0.05, 0.1, 0.1, 20.0
FLSIM_MS = 13.4  # ms per client update, shared/peers/README.md (recorded; --flsim-python measures it)
PEER = Path(__file__).resolve().parents[1].parent / "shared" / "peers" / "flsim_async.py"


def problem() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    b = rng.normal(size=(M, D))
    return rng.uniform(1.0, 4.0, size=(M, D)), b


def config(replicas: int) -> RunConfig:
    A, b = problem()
    return RunConfig(
        problem={"name": "diagonal_quadratic", "curvatures": A.tolist(), "centers": b.tolist(),
                 "sigma": NOISE * math.sqrt(D)},
        participation={"name": "bernoulli", "p": [1.0] * M},
        algorithm={"name": "fedbuff", "lr": LR, "local_steps": S, "staleness_weight": False,
                   "server": {"name": "sgd", "lr": SERVER_LR}},
        clock={"name": "buffered", "n_clients": M, "concurrency": C, "buffer": K, "refill": "R1",
               "delay": {"law": "uniform", "t_max": T_MAX}},
        rounds=UPDATES, replicas=replicas, every=UPDATES, seed=0)


def kernel_seconds(replicas: int) -> float:
    started = time.perf_counter()
    run(config(replicas))
    return time.perf_counter() - started


def loop_replica(A: np.ndarray, b: np.ndarray, seed: int) -> np.ndarray:
    """One replica of the research loop; returns the final model."""
    rng = np.random.default_rng(seed)
    x, now, jobs, idle = np.zeros(D), 0.0, [], set(range(M))
    for _ in range(C):
        i = rng.choice(sorted(idle))
        idle.discard(i)
        heapq.heappush(jobs, (now + rng.uniform(0.0, T_MAX), i, x.copy()))
    buffer, pending, done = [], [], 0
    while done < UPDATES:
        now, i, start = heapq.heappop(jobs)
        y = start.copy()
        for _ in range(S):
            y -= LR * (A[i] * (y - b[i]) + rng.normal(0.0, NOISE, size=D))
        buffer.append(y - start)
        pending.append(i)  # a buffered client restarts only after the server step
        if len(buffer) == K:
            x = x + SERVER_LR * np.mean(buffer, axis=0)
            idle.update(pending)
            buffer, pending, done = [], [], done + 1
        j = rng.choice(sorted(idle))
        idle.discard(j)
        heapq.heappush(jobs, (now + rng.uniform(0.0, T_MAX), j, x.copy()))
    return x


def loop_seconds(replicas: int) -> float:
    A, b = problem()
    started = time.perf_counter()
    for r in range(replicas):
        loop_replica(A, b, r)
    return time.perf_counter() - started


def flsim_ms(python: str | None) -> tuple[float, str]:
    """FLSim's ms per client update: measured now by the peer script under ``python``, else the recorded value."""
    if python is None:
        return FLSIM_MS, "recorded in shared/peers/README.md"
    if not PEER.is_file():
        raise SystemExit(f"--flsim-python: the peer script {PEER} is missing (it lives in ../shared/peers)")
    done = subprocess.run([python, str(PEER)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the FLSim peer failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["ms_per_client_update"]), f"measured now ({result['seconds_total']:.1f} s for " \
                                                   f"{result['client_updates']} client updates)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer blocks (noisier numbers)")
    parser.add_argument("--blocks", type=int, default=5, help="alternating timing blocks per line (default 5)")
    parser.add_argument("--flsim-python", help="a Python 3.10 interpreter with FLSim 0.1.0: run the peer now")
    args = parser.parse_args()
    blocks = 2 if args.quick else args.blocks
    peer, source = flsim_ms(args.flsim_python)
    print(f"FLSim 0.1.0: {peer:.2f} ms per client update, {source}")
    updates = K * UPDATES
    print(f"FedBuff, buffered clock R1: m={M}, d={D}, s={S}, K={K}, C={C}, {UPDATES} server updates")
    print(f"{'replicas':>8} {'kernel upd/s':>13} {'loop upd/s':>11} {'ratio':>7} {'kernel ms/upd':>14} {'vs FLSim':>9}")
    kernel_seconds(2)  # warm-up
    for replicas in (1, 16, 256):
        loops = replicas if replicas <= 16 else 16  # the loop's rate does not depend on the replica count
        k, lo = [], []
        for _ in range(blocks):
            k.append(replicas * updates / kernel_seconds(replicas))
            lo.append(loops * updates / loop_seconds(loops))
        k_rate, l_rate = float(np.median(k)), float(np.median(lo))
        ms = 1e3 / k_rate
        print(f"{replicas:8d} {k_rate:13.3e} {l_rate:11.3e} {k_rate / l_rate:7.1f} {ms:14.5f} {peer / ms:8.0f}x")
    print("targets (issue 23): >= 1,000x FLSim per client update at R = 1, >= 5,000x per replica-update at R = 256")


if __name__ == "__main__":
    main()
