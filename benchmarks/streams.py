"""Benchmark: small uniform draws from per-replica streams, drawn ahead (``Streams.uniform``) against one generator
call per replica per draw (the way :mod:`theorylab.rng` drew them before, and the way per-seed research code draws).

The work is a run's participation masks: ``R`` replicas each draw ``m`` float64 uniforms per round, for ``rounds``
rounds.  The baseline fills row ``r`` of an ``(R, m)`` tensor from replica ``r``'s own ``torch.Generator`` at every
round; :class:`theorylab.rng.Streams` cuts the same numbers from blocks each generator filled ahead of time (the
script checks they are equal before timing).  Both are timed in alternating blocks in this process, and the medians
are compared.

Run: ``python benchmarks/streams.py`` (``--blocks N``, default 7).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from theorylab.rng import Streams, stream_seeds

ROUNDS = 500


def per_replica_draws(replicas: int, m: int) -> list[torch.Tensor]:
    """The baseline: at every round a new ``(R, m)`` tensor, row ``r`` filled by one call to replica ``r``'s generator
    (seeded as Streams seeds it)."""
    gens = [torch.Generator().manual_seed(seed) for seed in stream_seeds(0, replicas)["participation"]]
    out = []
    for _ in range(ROUNDS):
        draw = torch.empty((replicas, m), dtype=torch.float64)
        for row, gen in zip(draw.unbind(0), gens):
            row.uniform_(generator=gen)
        out.append(draw)
    return out


def ahead_draws(replicas: int, m: int) -> list[torch.Tensor]:
    streams = Streams(0, replicas)
    return [streams.uniform("participation", (m,)) for _ in range(ROUNDS)]


def seconds(fn, *args) -> float:
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=7, help="alternating timing blocks per line (default 7)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{ROUNDS} rounds of (R, m) float64 uniforms; median of {args.blocks} alternating blocks, one thread")
    print(f"{'R':>5} {'m':>5} {'per-replica calls':>18} {'drawn ahead':>12} {'ratio':>7}")
    for replicas, m in ((1, 100), (2, 100), (4, 100), (32, 100), (256, 100), (32, 1000)):
        if not torch.equal(torch.stack(per_replica_draws(replicas, m)), torch.stack(ahead_draws(replicas, m))):
            raise SystemExit(f"R = {replicas}, m = {m}: the numbers drawn ahead differ from the per-replica draws")
        base, ahead = [], []
        for _ in range(args.blocks):
            base.append(seconds(per_replica_draws, replicas, m))
            ahead.append(seconds(ahead_draws, replicas, m))
        b, a = float(np.median(base)), float(np.median(ahead))
        print(f"{replicas:>5} {m:>5} {b * 1e3:15.1f} ms {a * 1e3:9.1f} ms {b / a:7.1f}")


if __name__ == "__main__":
    main()
