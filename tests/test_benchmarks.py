"""The CNN benchmark's worker protocol: a dying or misbehaving worker gives a clear message with its stderr."""

import argparse
import importlib.util
import sys
from pathlib import Path

SPEC = importlib.util.spec_from_file_location("cnn_round", Path(__file__).parent.parent / "benchmarks" / "cnn_round.py")
cnn_round = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(cnn_round)


def fake(script: str) -> list[str]:
    return [sys.executable, "-c", "import sys\n" + script]


def test_a_worker_that_dies_at_start_reports_its_stderr():
    w = cnn_round.Worker("broken", fake("sys.exit('cannot build the model')"))
    assert w.error.startswith("worker broken exited with code 1; end of its stderr:")
    assert "cannot build the model" in w.error
    w.round()  # left out of the remaining rounds
    assert w.stats() == {"error": w.error} and w.seconds == []


def test_a_worker_that_dies_mid_run_or_answers_garbage():
    dies = cnn_round.Worker("dies", fake("print('ready', flush=True); sys.stdin.readline(); print('0.5', flush=True)\n"
                                         "sys.stdin.readline(); sys.exit('out of memory')"))
    dies.round()
    dies.round()
    assert dies.seconds == [0.5] and "out of memory" in dies.error and "exited" in dies.error
    garbage = cnn_round.Worker("garbage", fake("print('ready', flush=True); sys.stdin.readline(); print('oops')\n"
                                               "sys.stdout.flush(); sys.stdin.readline()"))
    garbage.round()
    assert garbage.error.startswith("worker garbage answered 'oops' instead of a number of seconds; stopped")


def test_a_chatty_worker_does_not_block():
    # 1 MB on stderr exceeds a pipe's buffer: a never-read stderr pipe would block the worker here
    w = cnn_round.Worker("chatty", fake("sys.stderr.write('x' * 2**20); print('ready', flush=True)\n"
                                        "for line in sys.stdin:\n"
                                        "    print('0.25' if line.strip() == 'round' else '{\"peak_rss_mb\": 1}', "
                                        "flush=True)"))
    w.round()
    assert w.error is None and w.stats() == {"peak_rss_mb": 1, "seconds": [0.25]}


def test_the_real_worker_reports_an_unknown_method():
    args = argparse.Namespace(clients=2, steps=1, batch=4, device="cpu", chunk=2, ceiling_batch=0)
    w = cnn_round.Worker("no-such-method", cnn_round.worker_argv(args, "no-such-method"))
    assert "KeyError: 'no-such-method'" in w.error


def test_the_async_benchmarks_loop_does_the_kernels_work():
    """The research loop of benchmarks/async_buffered.py simulates the same FedBuff run as the kernel: the final
    distance to x* has the same mean over 24 replicas of each (Welch t-test at level 1e-3; equal in law, not in
    random numbers)."""
    import numpy as np
    from scipy.stats import ttest_ind

    from theorylab.runner import run

    spec = importlib.util.spec_from_file_location("async_buffered", Path(__file__).parent.parent / "benchmarks" /
                                                  "async_buffered.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    A, b = bench.problem()
    x_star = (A * b).sum(0) / A.sum(0)
    loop = [np.linalg.norm(bench.loop_replica(A, b, seed) - x_star) for seed in range(24)]
    kernel = np.linalg.norm(run(bench.config(24)).final["server"] - x_star, axis=1)
    assert ttest_ind(loop, kernel, equal_var=False).pvalue > 1e-3, (np.mean(loop), kernel.mean())
