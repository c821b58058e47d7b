"""The asynchronous clocks (theorylab.clocks): hand-worked schedules, reproducibility, bad inputs, and a synchronous
kernel run through the runner on each clock."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from theorylab.app.train import _clock_spec
from theorylab.clocks.schedule import clock_schedule, staleness_histogram
from theorylab.clocks.statistics import all_busy_fixed_staleness, jobs_in_flight_total, residual, \
    steady_mean_staleness
from theorylab.config import RunConfig
from theorylab.registry import build, load_all
from theorylab.runner import run

load_all()


@pytest.fixture(autouse=True)
def one_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def everyone(n: int) -> dict:
    return {"name": "bernoulli", "p": [1.0] * n}


def trace(schedule, r: int = 0) -> list[tuple]:
    """Replica r's schedule step by step: (arrived clients, their staleness, dispatched clients, time)."""
    rows = []
    for t in range(schedule.arrived.shape[1]):
        arrived = np.flatnonzero(schedule.arrived[r, t]).tolist()
        rows.append((arrived, schedule.staleness[r, t, arrived].tolist(),
                     np.flatnonzero(schedule.dispatched[r, t]).tolist(), round(float(schedule.time[r, t]), 9)))
    return rows


def test_buffered_r2_matches_a_hand_worked_schedule():
    # N = M_c = 3 (every client starts at time 0 from version 0), S = 2, durations 1, 2.5, 4.1 s:
    # step 0 pops clients 0 (t=1) and 1 (t=2.5); both restart at 2.5 from version 1 (finish 3.5, 5.0);
    # step 1 pops 0 (3.5, version 1) and 2 (4.1, version 0); 0 and 2 restart at 4.1 from version 2 (5.1, 8.2);
    # step 2 pops 1 (5.0, version 1) and 0 (5.1, version 2); both restart at 5.1 from version 3 (6.1, 7.6);
    # step 3 pops 0 (6.1) and 1 (7.6), both from version 3.
    clock = {"name": "buffered", "n_clients": 3, "concurrency": 3, "buffer": 2,
             "delay": {"law": "fixed", "values": [1.0, 2.5, 4.1]}}
    got = trace(clock_schedule(everyone(3), clock, 4, replicas=2, seed=7))
    assert got == [([0, 1], [0, 0], [0, 1], 2.5), ([0, 2], [0, 1], [0, 2], 4.1),
                   ([0, 1], [0, 1], [0, 1], 5.1), ([0, 1], [0, 0], [0, 1], 7.6)]


@pytest.mark.parametrize("reuse, arrived", [(True, [[0, 1, 2]] * 4), (False, [[0], [0, 1], [0, 2], [0, 1]])])
def test_all_busy_matches_a_hand_worked_schedule(reuse, arrived):
    # P = 1, durations 0.5, 1.5, 2.5 s (cycles of 1, 2, 3 steps), S = N = 3 so every client is selected:
    # completions: client 0 every step; client 1 at steps 1, 3; client 2 at step 2.  Slot ages at steps 0..3:
    # client 0: 0 0 0 0; client 1: 0 1 2 1; client 2: 0 1 2 3 (c_i^0 is version 0 until the first completion).
    clock = {"name": "all_busy", "n_clients": 3, "sample": 3, "period": 1.0, "reuse_consumed_delta": reuse,
             "delay": {"law": "fixed", "values": [0.5, 1.5, 2.5]}}
    schedule = clock_schedule(everyone(3), clock, 4, replicas=1, seed=0)
    ages = np.array([[0, 0, 0, 0], [0, 1, 2, 1], [0, 1, 2, 3]])
    dispatched = [[0], [0, 1], [0, 2], [0, 1]]
    expected = [(a, ages[a, t].tolist(), dispatched[t], float(t + 1)) for t, a in enumerate(arrived)]
    assert trace(schedule) == expected
    np.testing.assert_array_equal(all_busy_fixed_staleness([0.5, 1.5, 2.5], 1.0, 4), ages)
    assert schedule.metrics["tau_all_avg"][0, -1] == pytest.approx(ages.mean(), abs=1e-15)


CLOCKS = [{"name": "buffered", "n_clients": 12, "concurrency": 6, "buffer": 3, "refill": "R1"},
          {"name": "buffered", "n_clients": 12, "concurrency": 8, "buffer": 3,
           "delay": {"law": "log_normal", "per": "client"}},
          {"name": "all_busy", "n_clients": 12, "sample": 4, "period": 3.0, "delay": {"law": "exponential"}}]


@pytest.mark.parametrize("clock", CLOCKS, ids=["R1", "R2-per-client", "all-busy"])
def test_replica_schedule_is_the_same_alone_or_beside_others(clock):
    participation = {"name": "bernoulli", "p": [0.8] * 12}
    alone = clock_schedule(participation, clock, 40, replicas=1, seed=3)
    beside = clock_schedule(participation, clock, 40, replicas=3, seed=3)
    again = clock_schedule(participation, clock, 40, replicas=3, seed=3)
    other = clock_schedule(participation, clock, 40, replicas=1, seed=4)
    for field in ("arrived", "staleness", "dispatched", "time"):
        np.testing.assert_array_equal(getattr(alone, field)[0], getattr(beside, field)[0])
        np.testing.assert_array_equal(getattr(again, field), getattr(beside, field))
    assert not np.array_equal(alone.arrived, other.arrived)


@pytest.mark.parametrize("refill", ["R1", "R2"])
def test_littles_identity_holds_run_by_run(refill):
    clock = {"name": "buffered", "n_clients": 30, "concurrency": 12, "buffer": 4, "refill": refill,
             "delay": {"law": "half_normal"}}
    schedule = clock_schedule(everyone(30), clock, 60, replicas=3, seed=1)
    tau = np.where(schedule.arrived, schedule.staleness, 0).sum((1, 2))
    total = tau + schedule.arrived.sum((1, 2)) + residual(schedule.state, 60)
    np.testing.assert_array_equal(total, jobs_in_flight_total(12, 4, refill, 60))
    assert steady_mean_staleness(12, 4, refill) == {"R1": 3.0, "R2": 2.0}[refill]
    assert staleness_histogram(schedule).sum() == schedule.arrived.sum()


BAD = [({"name": "all_busy", "n_clients": 3, "sample": 1, "delay": {"law": "fixed", "values": [1.0, -1.0, 2.0]}},
        "values\\[1\\]"),
       ({"name": "buffered", "n_clients": 100, "delay": {"law": "uniform", "t_max": 0.0}}, "t_max"),
       ({"name": "buffered", "n_clients": 100, "delay": {"law": "exponential", "mean": -2.0}}, "mean"),
       ({"name": "buffered", "n_clients": 100, "delay": {"law": "gamma"}}, "delay law"),
       ({"name": "buffered", "n_clients": 100, "delay": {"law": "uniform", "per": "round"}}, "delay per"),
       ({"name": "buffered", "n_clients": 100, "delay": {"law": "uniform", "scale": 2.0}}, "delay law 'uniform'"),
       ({"name": "buffered", "n_clients": 100, "concurrency": 5, "buffer": 10}, "buffer"),
       ({"name": "buffered", "n_clients": 10, "concurrency": 20, "buffer": 5}, "concurrency"),
       ({"name": "buffered", "n_clients": 100, "refill": "R3"}, "refill"),
       ({"name": "all_busy", "n_clients": 5, "sample": 6}, "sample"),
       ({"name": "all_busy", "n_clients": 5, "sample": 2, "period": 0.0}, "period"),
       ({"name": "all_busy", "n_clients": 5, "sample": 2, "reuse_consumed_delta": "yes"}, "reuse_consumed_delta")]


@pytest.mark.parametrize("spec, name", BAD, ids=[b[1].replace("\\", "") for b in BAD])
def test_bad_clock_parameters_are_refused_by_name(spec, name):
    with pytest.raises(ValueError, match=name):
        build("clock", spec)


BASE = RunConfig(problem={"name": "random_quadratic", "n_clients": 12, "dim": 3, "seed": 1, "sigma": 0.3},
                 participation=everyone(12), algorithm={"name": "fedavg", "local_steps": 2, "lr": 0.1},
                 rounds=30, replicas=2, seed=5, every=10)


@pytest.mark.parametrize("clock", CLOCKS, ids=["R1", "R2-per-client", "all-busy"])
def test_fedavg_runs_on_each_clock_and_records_its_statistics(clock):
    trace_ = run(BASE.replace(clock=clock))
    assert np.isfinite(trace_.metrics["server.gap"]).all()
    replay = clock_schedule(BASE.participation, clock, BASE.rounds, BASE.replicas, BASE.seed)
    for name in ("tau_avg", "tau_max", "time"):
        np.testing.assert_array_equal(trace_.metrics[f"clock.{name}"][:, -1], replay.metrics[name][:, -1])
    assert (trace_.metrics["clock.time"][:, 1:] > 0).all()


def test_cli_clock_spec_defaults_to_the_train_clients():
    assert _clock_spec('{"name": "buffered", "concurrency": 4}', 20) == {"n_clients": 20, "name": "buffered",
                                                                         "concurrency": 4}
    assert _clock_spec(None, 20) is None
    with pytest.raises(ValueError, match="--asynchrony"):
        _clock_spec('["buffered"]', 20)


def test_both_staleness_averages_of_mode_b():
    clock = {"name": "buffered", "n_clients": 20, "concurrency": 8, "buffer": 4}
    schedule = clock_schedule(everyone(20), clock, 30, replicas=2, seed=2)
    total = np.where(schedule.arrived, schedule.staleness, 0).sum((1, 2))
    np.testing.assert_allclose(schedule.metrics["tau_avg"][:, -1], total / schedule.arrived.sum((1, 2)), rtol=1e-15)
    np.testing.assert_allclose(schedule.metrics["tau_avg_nt"][:, -1], total / (20 * 30), rtol=1e-15)
    np.testing.assert_array_equal(schedule.metrics["tau_max"][:, -1], schedule.staleness.max((1, 2)))


@pytest.mark.parametrize("spec, reference", [
    ({"law": "uniform", "t_max": 20.0}, ("uniform", {"loc": 0.0, "scale": 20.0})),
    ({"law": "exponential", "mean": 3.0}, ("expon", {"scale": 3.0})),
    ({"law": "half_normal", "scale": 2.0}, ("halfnorm", {"scale": 2.0})),
    ({"law": "log_normal", "mu": 1.0, "sigma": 0.4}, ("lognorm", {"s": 0.4, "scale": np.exp(1.0)}))])
def test_delay_laws_match_scipys_quantiles_and_means(spec, reference):
    from scipy import stats

    from theorylab.clocks.delays import delay_law

    law, (name, params) = delay_law(spec, 4), reference
    u = torch.linspace(0.01, 0.99, 9, dtype=torch.float64).reshape(1, 9)
    np.testing.assert_allclose(law.quantile(u).numpy()[0], getattr(stats, name).ppf(u.numpy()[0], **params),
                               rtol=1e-9)
    assert law.mean == pytest.approx(getattr(stats, name).mean(**params), rel=1e-12)


def test_snapshot_kernels_refuse_mode_a_slots():
    """Mode A's slots can hold an update whose job started before the client's current one; a one-snapshot kernel
    cannot represent that and must refuse rather than approximate (theorylab.kernels.stale_start)."""
    import pytest as _pytest

    from theorylab.config import RunConfig
    from theorylab.runner import run

    config = RunConfig(problem={"name": "random_quadratic", "n_clients": 4, "dim": 2, "seed": 0},
                       participation={"name": "bernoulli", "p": [1.0] * 4},
                       algorithm={"name": "fedbuff"}, rounds=2, clock={"name": "all_busy", "n_clients": 4, "sample": 2})
    with _pytest.raises(ValueError, match="slotted"):
        run(config)
    run(config.replace(algorithm={"name": "fedavg"}))  # a synchronous kernel aggregates the arrived slots as given


def test_a_log_normal_whose_mean_overflows_is_named():
    from theorylab.clocks.delays import delay_law

    with pytest.raises(ValueError, match=r"log_normal.*exp\(800\.1\).*mu \+ sigma\^2/2 must be at most 700"):
        delay_law({"law": "log_normal", "mu": 800.0}, 5)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(2, 9), st.integers(0, 2**31 - 1), st.booleans())
def test_r1_incremental_loop_equals_pop_then_start(replicas, n, seed, per_client):
    # theorylab.clocks.buffered: R1's loop keeps its running count and busy mask up to date; reference: one _pop and
    # one _start per completion, which recompute them from the job table
    from theorylab.clocks.buffered import _pop, _pop_and_restart, _start

    rng = np.random.default_rng(seed)
    concurrency, S = int(rng.integers(1, n + 1)), int(rng.integers(1, 4))
    finish = np.where(rng.random((replicas, n)) < 0.6, rng.integers(0, 4, (replicas, n)).astype(float), np.inf)
    jobs = {"finish": finish, "version": rng.integers(0, 3, (replicas, n)),
            "pending": ~np.isfinite(finish) & (rng.random((replicas, n)) < 0.3), "now": np.zeros(replicas)}
    if per_client:
        jobs["speed"] = rng.integers(0, 3, (replicas, n)).astype(float)  # ties in finish times, as the fixed law
    keys, lengths = rng.random((replicas, S, n)), None if per_client else rng.random((replicas, S, n)) * 5
    available = rng.random((replicas, n)) < 0.7
    fast = {k: v.copy() for k, v in jobs.items()}
    started = _pop_and_restart(fast, keys, lengths, available, 7, concurrency)
    slow, expected = {k: v.copy() for k, v in jobs.items()}, np.zeros((replicas, n), dtype=bool)
    for j in range(S):
        _pop(slow, 1)
        expected |= _start(slow, keys[:, j], None if lengths is None else lengths[:, j], available, 7, concurrency)
    assert np.array_equal(started, expected)
    assert all(np.array_equal(fast[k], slow[k]) for k in jobs)
