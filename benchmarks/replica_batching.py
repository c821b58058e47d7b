"""Benchmark: R independent image runs, one replica at a time against all R on the kernels' replica axis.

Why: the full-mode image claims (e.g. ``thesis.ch4.images``: Fig. 4.2 of seed 001, 10 clients, 150 rounds, 10
runs per method) run one replica per seed, so a GPU sees 10 client models per step and spends its time launching
kernels.  This measures what batching the runs buys, in one sitting: the same problem as R runs of one replica
(``replicas=1``, seeds 0..R-1) and as one run of R replicas (one seed), each under the gradient strategy named.
The two are different draws of the same law (replica r of a seed has its own streams, theorylab.rng), so the
per-run seconds, not the traces, are compared.

Setting (default: the full-mode Fig. 4.2 run on a GPU): ``--dataset mnist10k`` (needs ``make data``;
``synthetic`` needs nothing), FedAWE's CIFAR CNN, 10 clients of two classes each, batch 32, K = 5 local steps,
FedAvg at step 0.1 with full participation, ``--rounds`` rounds, evaluations every 10 rounds on 2,000 training
images and the test split.  Printed: seconds per run each way and their ratio; with ``--profile``, torch's
profiler table of one one-replica run (where its time goes).

Run: ``python benchmarks/replica_batching.py [--device cuda] [--replicas 10] [--rounds 30] [--profile]``.
"""

from __future__ import annotations

import argparse
import time

import torch

from theorylab.config import RunConfig
from theorylab.runner import run


def config(args, replicas: int, seed: int) -> RunConfig:
    problem = {"name": args.dataset, "model": args.model, "clients": 10, "partition": "classes",
               "classes_per_client": 2, "batch_size": 32, "eval_train": 2000, "seed": 0, "strategy": args.strategy}
    if args.dataset == "synthetic":
        problem["data"] = {"train_size": 6000, "test_size": 1000, "channels": 1, "size": 28}
    return RunConfig(problem=problem, participation={"name": "bernoulli", "p": [1.0] * 10},
                     algorithm={"name": "fedavg", "local_steps": 5, "lr": 0.1}, rounds=args.rounds,
                     replicas=replicas, seed=seed, every=10, dtype="float32", device=args.device)


def seconds(cfg: RunConfig) -> float:
    if cfg.device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    run(cfg, progress_bar=False)
    if cfg.device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dataset", default="mnist10k", choices=("mnist10k", "synthetic"))
    parser.add_argument("--model", default="cnn_cifar")
    parser.add_argument("--strategy", default="auto")
    parser.add_argument("--replicas", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    seconds(config(args, 1, 99))  # warm-up: data loading, cuDNN and allocator set-up
    one = [seconds(config(args, 1, seed)) for seed in range(args.replicas)]
    batched = seconds(config(args, args.replicas, 0))
    print(f"{args.dataset}, {args.model}, strategy {args.strategy}, {args.rounds} rounds, device {args.device}")
    print(f"{args.replicas} runs of one replica: {sum(one):.2f} s ({sum(one) / args.replicas:.2f} s per run)")
    print(f"one run of {args.replicas} replicas: {batched:.2f} s ({batched / args.replicas:.3f} s per run)")
    print(f"ratio (per run): {sum(one) / batched:.1f}x")
    if args.profile:
        activities = [torch.profiler.ProfilerActivity.CPU]
        if args.device == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=activities) as prof:
            seconds(config(args, 1, 0))
        key = "cuda_time_total" if args.device == "cuda" else "cpu_time_total"
        print(prof.key_averages().table(sort_by=key, row_limit=20, max_name_column_width=60))
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=15, max_name_column_width=60))


if __name__ == "__main__":
    main()
