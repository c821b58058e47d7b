"""Benchmark: one federated round of the FedAWE CIFAR CNN, three ways, in one run.

Setting (issue 5): ``--clients`` clients (default 100), all active, ``--steps`` local SGD steps (10) of
batch ``--batch`` (128) on 32x32x3 inputs (seeded synthetic images, as CIFAR-10 cannot be obtained
here), the Table 6 CIFAR-10 CNN (551,786 parameters), FedAvg over active clients.

* **kernels**: theorylab's FedAvg kernel on the flat-parameter network problem, for each gradient
  strategy allowed on the device (``loop``; ``vmap`` too on a GPU); the best is reported;
* **research loop**: the papers' code style (FedAWE's ``varying_main.py``): one ``nn.Module``, per
  active client ``load_state_dict`` of the global weights, a new ``torch.optim.SGD``, 10 steps, then a
  ``state_dict`` deep copy for the aggregate; data pre-normalised on the device (as that code does);
* **ceiling**: centralised training of one model on the same number of samples per round: ``--steps``
  SGD steps of one large batch of ``clients x batch`` samples (``--ceiling-batch`` to cap it).

On CUDA every method runs under :func:`theorylab.testbeds.client_grads.exact_cudnn` (deterministic cuDNN algorithms, no TF32),
as the kernels' testbed always does, so that the three compute the same float32 arithmetic.  The first H100 run
(2026-11-26) had the kernels exact and the other two on cuDNN's TF32 defaults: vmap 219k samples/s, research
loop 48.5k, ceiling 522k (4.51x and 42%).  The second (2026-11-27), all three exact: vmap 232k, research loop 56.6k,
ceiling 265k (4.10x and 87.5%; reference/gpu-2026-11-27.md).

Throughput is training samples per second (clients x steps x batch per round).  Each method runs in
its own subprocess so that its peak memory is its own: peak resident set size (CPU; it includes the
data, torch and the other method-independent overhead) and, on a GPU,
``torch.cuda.max_memory_allocated``.  Every method times ``--rounds`` rounds after one warm-up round;
the median is reported.  Rounds of the methods alternate (each method is a persistent worker
process), so load drift on a shared machine affects all of them alike; a worker that dies is reported
with the end of its stderr and the others go on.  Targets on a GPU: kernels >= 5x the research loop
and >= 50% of the ceiling; on a CPU (issue 23): kernels >= 1x the research loop.

**What the kernel does differently on a CPU** (each the same float32 function; :mod:`theorylab.testbeds.network`):
it runs the conv layers channels-last, where oneDNN's convolutions are fast (the one change in rounding: the same
sums in another order); it applies each ReLU after its max-pool (the same floats, bit for bit); and it runs a round
client by client, every step of a client before the next (the same floats as step by step).  The research loop is
the papers' NCHW code, unchanged.  Measured here (2 cores, 30 clients, 2026-11-26): NCHW and step-major, the kernel
was 0.96-0.98x the research loop; with the three, 1.63x.

**Allocator.**  Every worker runs with glibc's heap trimming off (``--malloc steady``, the default; it sets
:data:`STEADY_MALLOC` in the workers' environment, the same for every method).  By default glibc hands the top of its
heap back to the kernel whenever 32 MiB there are free, which the CNN's per-step activations (tensors of 16 MiB) free
on most steps, and the next step takes the pages back one 4 KiB page fault at a time.  Whether that happens depends on
the exact order of a method's allocations, not on its work: on a CPU (2 cores, 2026-11-26) the same code had 0 to
415k faults per round of 40 client steps, the research loop as much as the kernel, and they cost 10-25% of a round,
so the default allocator made the ratio a draw between 0.8x and 1.1x.  With trimming off every method has almost no
faults.  ``--malloc default`` leaves glibc as it is; a user's own CPU run gets the steady behaviour from the same
environment variable.

Run: ``python benchmarks/cnn_round.py [--clients 100] [--device cuda]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

from theorylab.testbeds.models import build_model
from theorylab.testbeds.client_grads import exact_cudnn
from theorylab.testbeds.network import image_testbed
from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Round
from theorylab.rng import Streams
from theorylab.runner import autograd_off, build_run

LR = 0.05
# glibc keeps freed memory instead of trimming its heap (threshold 1 GiB); allocations below 32 MiB (glibc's own
# dynamic maximum, reached by any run that frees a large tensor) come from the heap (module docstring, "Allocator")
STEADY_MALLOC = "glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432"


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def problem_spec(args, strategy: str) -> dict:
    return {"name": "synthetic", "model": "cnn_cifar", "clients": args.clients, "partition": "iid",
            "batch_size": args.batch, "strategy": strategy, "chunk_size": args.chunk, "eval_train": 100,
            "eval_test": 100, "data": {"train_size": args.clients * args.batch, "test_size": 100}}


def kernel_rounds(args, strategy: str):
    """Generator: each ``next`` times one FedAvg round of the kernel (all clients active)."""
    config = RunConfig(problem=problem_spec(args, strategy),
                       participation={"name": "bernoulli", "p": [1.0] * args.clients},
                       algorithm={"name": "fedavg", "local_steps": args.steps, "lr": LR}, rounds=0,
                       device=args.device, dtype="float32")
    problem, process, algorithm = build_run(config)
    streams = Streams(0, 1, args.device)
    state = algorithm.init(problem, problem.initial_point(1, streams))
    t = 0
    while True:
        started = time.perf_counter()
        with autograd_off(problem):  # as the runner runs it (autograd stays on for the conv model's strategies)
            _, active = process.draw(None, t, streams)
            state = algorithm.step(state, Round(t, active, process.probabilities(t), streams), problem)
        synchronize(args.device)
        t += 1
        yield time.perf_counter() - started


def client_tensors(args):
    """The same synthetic data, normalised once on the device, split into per-client tensors."""
    problem = image_testbed("synthetic", **{k: v for k, v in problem_spec(args, "loop").items() if k != "name"},
                            device=args.device)
    x = torch.cat([problem.inputs("train", torch.as_tensor(part, device=args.device)) for part in problem.parts])
    y = torch.cat([problem._labels["train"][torch.as_tensor(part, device=args.device)] for part in problem.parts])
    sizes = [len(p) for p in problem.parts]
    return list(zip(x.split(sizes), y.split(sizes)))


def research_rounds(args):
    """Generator: each ``next`` times one round written like the papers' research code."""
    data = client_tensors(args)
    model = build_model("cnn_cifar", generator=torch.Generator().manual_seed(0), device=args.device)
    global_state = copy.deepcopy(model.state_dict())
    gen = torch.Generator(device=args.device).manual_seed(0)
    while True:
        started = time.perf_counter()
        updates = []
        for x, y in data:
            model.load_state_dict(global_state)
            optimizer = torch.optim.SGD(model.parameters(), lr=LR)
            for _ in range(args.steps):
                batch = torch.randint(0, len(y), (args.batch,), device=args.device, generator=gen)
                optimizer.zero_grad()
                F.cross_entropy(model(x[batch]), y[batch]).backward()
                optimizer.step()
            updates.append(copy.deepcopy(model.state_dict()))
        global_state = {k: torch.stack([u[k] for u in updates]).mean(0) for k in global_state}
        synchronize(args.device)
        yield time.perf_counter() - started


def ceiling_rounds(args):
    """Generator: each ``next`` times ``steps`` centralised SGD steps on batches of clients x batch samples."""
    data = client_tensors(args)
    x, y = torch.cat([d[0] for d in data]), torch.cat([d[1] for d in data])
    model = build_model("cnn_cifar", generator=torch.Generator().manual_seed(0), device=args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    gen = torch.Generator(device=args.device).manual_seed(0)
    size = args.ceiling_batch or args.clients * args.batch
    per_round = args.clients * args.batch * args.steps
    while True:
        started = time.perf_counter()
        done = 0
        while done < per_round:
            batch = torch.randint(0, len(y), (min(size, per_round - done),), device=args.device, generator=gen)
            optimizer.zero_grad()
            F.cross_entropy(model(x[batch]), y[batch]).backward()
            optimizer.step()
            done += len(batch)
        synchronize(args.device)
        yield time.perf_counter() - started


def worker(args) -> None:
    """Serve one method: after a warm-up round, answer ``round`` with its seconds and ``stats`` with peak memory."""
    method, _, strategy = args.worker.partition(":")
    rounds = {"kernel": lambda: kernel_rounds(args, strategy), "research": lambda: research_rounds(args),
              "ceiling": lambda: ceiling_rounds(args)}[method]()
    with exact_cudnn():  # every method computes float32 in float32 (the kernels' testbed always does)
        next(rounds)
    print("ready", flush=True)
    for command in sys.stdin:
        if command.strip() == "round":
            with exact_cudnn():
                print(next(rounds), flush=True)
        else:
            print(json.dumps({
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "peak_cuda_mb": torch.cuda.max_memory_allocated() / 2**20 if args.device.startswith("cuda") else None,
            }), flush=True)


class WorkerFailed(RuntimeError):
    """A method's worker process died or broke the protocol; the message carries the end of its stderr."""


class Worker:
    """A method in its own process (so its peak memory is its own), driven one round at a time.

    ``argv`` starts the process (:func:`worker_argv`).  Its stderr goes to a temporary file rather than a
    pipe: a pipe that nobody reads fills up and blocks the worker.  When the worker dies or answers out
    of protocol, ``error`` says so with the last ``STDERR_LINES`` lines of that file, and the worker is
    left out of the remaining rounds."""

    STDERR_LINES = 20

    def __init__(self, name: str, argv: list[str], env: dict | None = None):
        self.name, self.seconds, self.error = name, [], None
        self.log = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     env=env)
        self._guard(lambda: self._expect(self._ask(None), "ready"))

    def round(self) -> None:
        if self.error is None:
            self._guard(lambda: self.seconds.append(self._number(self._ask("round"))))

    def stats(self) -> dict:
        stats = self._guard(lambda: json.loads(self._ask("stats"))) if self.error is None else None
        if self.error is not None:
            return {"error": self.error}
        self.proc.stdin.close()
        self.proc.wait()
        return {**stats, "seconds": self.seconds}

    def _guard(self, exchange):
        """The result of one exchange, or ``None`` after a failure: it is recorded in ``error`` and the process
        is stopped."""
        try:
            return exchange()
        except WorkerFailed as err:
            self.error = str(err)
            self.proc.kill()
            self.proc.wait()
            return None

    def _ask(self, command: str | None) -> str:
        """Send ``command`` (if any) and return the worker's one-line answer."""
        try:
            if command is not None:
                self.proc.stdin.write(command + "\n")
                self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:  # end of file: the worker has exited
            raise WorkerFailed(self._failure(f"exited with code {self._exit_code()}"))
        return line.strip()

    def _expect(self, answer: str, wanted: str) -> None:
        if answer != wanted:
            raise WorkerFailed(self._failure(f"answered {answer!r} instead of {wanted!r}; stopped"))

    def _number(self, answer: str) -> float:
        try:
            return float(answer)
        except ValueError:
            raise WorkerFailed(self._failure(f"answered {answer!r} instead of a number of seconds; stopped")) from None

    def _exit_code(self) -> int:
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # closed its stdout but lingers
            self.proc.kill()
            return self.proc.wait()

    def _failure(self, what: str) -> str:
        self.log.seek(0)
        tail = self.log.read().strip().splitlines()[-self.STDERR_LINES:]
        stderr = "\n".join(f"    {line}" for line in tail) or "    (empty)"
        return f"worker {self.name} {what}; end of its stderr:\n{stderr}"


def worker_argv(args, name: str) -> list[str]:
    """The command line of the worker process that serves method ``name`` with the benchmark's settings."""
    return [sys.executable, __file__, "--worker", name, "--clients", str(args.clients), "--steps", str(args.steps),
            "--batch", str(args.batch), "--device", args.device, "--chunk", str(args.chunk),
            "--ceiling-batch", str(args.ceiling_batch)]


def worker_env(malloc: str) -> dict | None:
    """The workers' environment: this one, with :data:`STEADY_MALLOC` added for ``--malloc steady``."""
    if malloc == "default":
        return None
    env = dict(os.environ)
    env["GLIBC_TUNABLES"] = ":".join(filter(None, (env.get("GLIBC_TUNABLES"), STEADY_MALLOC)))
    return env


def load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def strategies(device: str) -> list[str]:
    """Gradient strategies the network problem allows for a float32 CNN on ``device``."""
    return ["loop"] if device == "cpu" else ["loop", "vmap"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per method after one warm-up")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--chunk", type=int, default=64, help="clients per vmap call")
    parser.add_argument("--ceiling-batch", type=int, default=0, help="cap on the ceiling's batch (0: clients x batch)")
    parser.add_argument("--malloc", choices=("steady", "default"), default="steady",
                        help="glibc heap trimming off in every worker (steady) or glibc's defaults (module docstring)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    print(f"one FedAvg round: {args.clients} clients x {args.steps} steps x batch {args.batch}, FedAWE CIFAR CNN, "
          f"device {args.device}, torch {torch.__version__}, threads {torch.get_num_threads()}, malloc {args.malloc}")
    print(f"load average before: {load_average()}")
    names = [f"kernel:{s}" for s in strategies(args.device)] + ["research", "ceiling"]
    workers = [Worker(name, worker_argv(args, name), worker_env(args.malloc)) for name in names]
    for _ in range(args.rounds):  # alternate, so that load drift on a shared machine hits every method alike
        for w in workers:
            w.round()
    samples = args.clients * args.steps * args.batch
    results = {}
    for w in workers:
        results[w.name] = w.stats()
        if "seconds" in results[w.name]:
            results[w.name]["samples_per_s"] = samples / float(np.median(results[w.name]["seconds"]))
    print(f"load average after:  {load_average()}")
    print(f"{'method':>16} {'samples/s':>11} {'peak RSS MB':>12} {'peak CUDA MB':>13}")
    for name, r in results.items():
        if "error" in r:
            print(f"{name:>16} failed: {r['error']}")
            continue
        cuda = f"{r['peak_cuda_mb']:13.0f}" if r["peak_cuda_mb"] is not None else f"{'-':>13}"
        print(f"{name:>16} {r['samples_per_s']:11.0f} {r['peak_rss_mb']:12.0f} {cuda}")
    kernels = {k: r for k, r in results.items() if k.startswith("kernel") and "error" not in r}
    if kernels and "error" not in results["research"] and "error" not in results["ceiling"]:
        best = max(kernels, key=lambda k: kernels[k]["samples_per_s"])
        rate = kernels[best]["samples_per_s"]
        print(f"best kernel strategy: {best.split(':')[1]}")
        print(f"kernels / research loop = {rate / results['research']['samples_per_s']:.2f}x   (GPU target >= 5x)")
        print(f"kernels / ceiling       = {rate / results['ceiling']['samples_per_s']:.1%}  (GPU target >= 50%)")


if __name__ == "__main__":
    main()
