import numpy as np
import pytest

from theorylab.config import RunConfig
from theorylab.runner import run

BASE = RunConfig(problem={"name": "random_quadratic", "n_clients": 6, "dim": 4, "sigma": 0.3, "seed": 2},
                 participation={"name": "bernoulli", "p": [0.9, 0.2, 0.5, 0.7, 0.4, 0.6], "dynamics": "sine"},
                 algorithm={"name": "fedavg", "local_steps": 2, "lr": 0.1}, rounds=30, replicas=5, every=10, seed=3)


def test_same_seed_same_trace():
    a, b = run(BASE), run(BASE)
    assert all(np.array_equal(a.metrics[k], b.metrics[k]) for k in a.metrics)
    assert np.array_equal(a.final["server"], b.final["server"])


def test_different_seed_different_trace():
    assert not np.array_equal(run(BASE).final["server"], run(BASE.replace(seed=4)).final["server"])


def test_replica_trace_does_not_depend_on_replica_count():
    few, many = run(BASE.replace(replicas=2)), run(BASE.replace(replicas=7))
    assert np.array_equal(few.final["server"], many.final["server"][:2])
    assert np.array_equal(few.metrics["server.dist2"], many.metrics["server.dist2"][:2])


def test_evaluation_rounds_and_metric_names():
    trace = run(BASE.replace(rounds=25))
    assert trace.rounds.tolist() == [0, 10, 20, 25]
    assert set(trace.metrics) == {"server.dist2", "server.gap", "server.gradnorm2"}
    assert trace.metrics["server.dist2"].shape == (5, 4)
    lo, hi = trace.ci("server.dist2")
    assert np.all(lo <= trace.mean("server.dist2")) and np.all(trace.mean("server.dist2") <= hi)


def test_divergence_is_detected_and_reported():
    cfg = RunConfig(problem={"name": "scalar_quadratic", "centers": [0.0, 1.0]},
                    participation={"name": "bernoulli", "p": [1.0, 1.0]},
                    algorithm={"name": "fedavg", "local_steps": 1, "lr": 3.0}, rounds=500, replicas=3, every=1)
    trace = run(cfg)  # x_{t+1} - 1/2 = -2 (x_t - 1/2): doubles every round
    assert np.all(trace.diverged_at > 0) and trace.diverged
    assert np.isinf(trace.metrics["server.dist2"][:, -1]).all()
    assert np.isfinite(trace.metrics["server.dist2"][:, 0]).all()


def test_mismatched_client_counts_are_rejected():
    with pytest.raises(ValueError, match="clients"):
        run(BASE.replace(participation={"name": "bernoulli", "p": [0.5] * 3}))


@pytest.mark.parametrize("field, value", [("rounds", -1), ("replicas", 0), ("every", 0), ("dtype", "float16")])
def test_bad_run_config(field, value):
    with pytest.raises(ValueError, match=field):
        BASE.replace(**{field: value})


def test_a_negative_seed_is_refused_as_the_command_line_refuses_it():
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, inf\]; got -1"):
        BASE.replace(seed=-1)


def test_inference_mode_only_for_problems_that_say_they_need_no_autograd():
    import torch

    from theorylab.registry import build
    from theorylab.runner import autograd_off
    from theorylab.testbeds.network import image_testbed

    def tiny(strategy):
        data = {"train_size": 20, "test_size": 10, "channels": 1, "size": 4}
        return image_testbed("synthetic", model="mlp", input_shape=(1, 4, 4), data=data, clients=2, partition="iid",
                             batch_size=2, eval_train=None, strategy=strategy, dtype=torch.float64)

    def mode(problem):
        with autograd_off(problem):
            return torch.is_inference_mode_enabled()

    assert mode(build("testbed", BASE.problem))  # closed-form gradients
    assert mode(tiny(strategy="dense"))
    assert not mode(tiny(strategy="loop")) and not mode(tiny(strategy="vmap"))  # autograd.grad / torch.func.grad
    assert not mode(object())  # a plugin's testbed that does not say keeps autograd


ASYNC = RunConfig(problem={"name": "random_quadratic", "n_clients": 8, "dim": 3, "sigma": 0.5, "seed": 1},
                  participation={"name": "bernoulli", "p": [0.8] * 8},
                  algorithm={"name": "fedbuff", "lr": 0.05, "local_steps": 2, "server": {"name": "sgd", "lr": 0.5}},
                  clock={"name": "buffered", "n_clients": 8, "concurrency": 4, "buffer": 2, "refill": "R1"},
                  rounds=20, replicas=3, every=5, seed=1)


@pytest.mark.parametrize("config", [BASE, ASYNC], ids=["sync", "async"])
def test_inference_mode_gives_the_same_trace_bit_for_bit(config, monkeypatch):
    import contextlib

    import theorylab.runner as runner

    fast = run(config)
    monkeypatch.setattr(runner, "autograd_off", lambda problem: contextlib.nullcontext())
    plain = run(config)
    assert fast.metrics.keys() == plain.metrics.keys()
    assert all(np.array_equal(fast.metrics[k], plain.metrics[k]) for k in fast.metrics)
    assert np.array_equal(fast.final["server"], plain.final["server"])
