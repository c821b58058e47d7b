"""Sweeps: grid expansion, bad grids named by their axis, cells equal to the runner's, a sweep killed with SIGKILL
that resumes without losing or repeating a cell, and two sweeps writing one store at once.

One dask cluster (two worker threads of this process, reachable over TCP) serves the whole module: the
in-process sweeps connect to it, and so do the ``theorylab sweep --scheduler`` subprocesses."""

import contextlib
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import torch

from theorylab import grid, sweep
from theorylab.config import code_fingerprint
from theorylab.parallel import connect, torch_threads
from theorylab.runner import run
from theorylab.store import Store

BASE = {"problem": {"name": "random_quadratic", "n_clients": 6, "dim": 3, "sigma": 0.5, "seed": 0},
        "participation": {"name": "bernoulli", "p": [0.3, 0.5, 0.9, 0.3, 0.5, 0.9]},
        "algorithm": {"name": "fedavg", "lr": 0.05, "local_steps": 2}, "rounds": 60, "replicas": 4, "every": 20}
N_KILLED = 24  # cells of the sweep that is killed


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    threads = torch.get_num_threads()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address
    torch.set_num_threads(threads)  # the in-process workers set this process's torch threads


def spec(**axes) -> dict:
    return {"base": BASE, **axes}


def store_rows(path) -> dict[str, float]:
    """Config key -> creation time of every row of a store file (empty until its table exists)."""
    with sqlite3.connect(path, timeout=60) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'runs'").fetchone():
            return {}
        return dict(conn.execute("SELECT key, created FROM runs").fetchall())


def test_product_and_zip_expand_in_order_into_run_configs():
    g = grid.parse(spec(product={"algorithm.lr": [0.01, 0.1], "seed": [0, 1, 2]},
                        zip={"algorithm.local_steps": [1, 5], "replicas": [2, 8]}))
    cells = grid.expand(g)
    assert len(cells) == 2 * 3 * 2 and g.axes == ["algorithm.lr", "seed", "algorithm.local_steps", "replicas"]
    assert [tuple(c.values.values()) for c in cells[:3]] == [(0.01, 0, 1, 2), (0.01, 0, 5, 8), (0.01, 1, 1, 2)]
    last = cells[-1].config
    assert (last.algorithm, last.seed, last.replicas) == ({"name": "fedavg", "lr": 0.1, "local_steps": 5}, 2, 8)
    assert BASE["algorithm"]["lr"] == 0.05  # the base is never modified
    whole = grid.expand(grid.parse(spec(product={"participation": [{"name": "cyclic", "n_clients": 6, "groups": 3},
                                                                   BASE["participation"]]})))
    assert [c.config.participation["name"] for c in whole] == ["cyclic", "bernoulli"]
    assert len(grid.expand(grid.parse(spec()))) == 1  # no axes: the base alone


def test_yaml_and_json_grid_files_read_the_same(tmp_path):
    import yaml

    (tmp_path / "g.yaml").write_text(yaml.safe_dump(spec(product={"seed": [0, 1]})))
    (tmp_path / "g.json").write_text(json.dumps(spec(product={"seed": [0, 1]})))
    assert grid.load(tmp_path / "g.yaml") == grid.load(tmp_path / "g.json")
    with pytest.raises(ValueError, match="not valid JSON"):
        (tmp_path / "bad.json").write_text("{base: ")
        grid.load(tmp_path / "bad.json")


@pytest.mark.parametrize("bad, message", [
    (spec(product={"algorithm.name": ["fedavg", "no_such_kernel"]}), "axis 'algorithm.name': unknown algorithm 'no_such_kernel'"),
    (spec(product={"participation": [{"name": "no_such_process"}]}), "axis 'participation': unknown participation"),
    ({"base": {**BASE, "problem": {"name": "no_such_testbed"}}}, "base: unknown testbed 'no_such_testbed'"),
    (spec(product={"seed": []}), "axis 'seed' is empty"),
    (spec(zip={"algorithm.lr": [0.1, 0.2], "seed": [1, 2, 3]}), "'algorithm.lr' has 2, 'seed' has 3 values"),
    (spec(product={"sed": [1]}), "axis 'sed': unknown run field 'sed'"),
    (spec(product={"channel.p": [0.1]}), "axis 'channel.p': the configuration has no spec at 'channel'"),
    (spec(product={"seed": 3}), "axis 'seed' must be a list"),
    (spec(product={"seed": [1]}, zip={"seed": [2]}), "axis 'seed' appears twice"),
    (spec(product={"rounds": [10, -1]}), r"axis 'rounds' = -1: rounds must be an integer"),
    (spec(product={"algorithm.lrr": [0.1]}), r"axis 'algorithm.lrr' = 0.1: bad parameters for algorithm 'fedavg'"),
    (spec(product={"algorithm.aggregation": [1, 2]}), r"axis 'algorithm.aggregation' = 1: .*aggregation"),
    (spec(product={"participation.dynamics": [1, 2]}), r"axis 'participation.dynamics' = 1: .*dynamics"),
    (spec(product={"device": [0, 1]}), r"axis 'device' = 0: .*device"),
    (spec(product={"algorithm.lr": [0.05, -1]}), r"axis 'algorithm.lr' = -1: .*lr"),
    (spec(zip={"algorithm.lr": [0.05, 0.1], "algorithm.local_steps": [2, 0]}),
     r"zip 'algorithm.lr' = 0.1, 'algorithm.local_steps' = 0: .*local_steps"),
    ({**spec(), "product": {"seed": list(range(1000)), "rounds": list(range(1, 1001))}}, "1,000,000 cells"),
    (spec(prodcut={"seed": [1]}), r"unknown grid key\(s\) \['prodcut'\]"),
    ({"base": {**BASE, "round": 5}}, r"grid 'base': unknown run field\(s\) \['round'\]"),
    ({"base": {k: v for k, v in BASE.items() if k != "rounds"}}, "missing 1 required positional argument: 'rounds'"),
])
def test_bad_grids_name_the_axis(bad, message):
    with pytest.raises(ValueError, match=message):
        grid.expand(grid.parse(bad))


def test_torch_threads_never_oversubscribe():
    assert [torch_threads(n, 2) for n in (1, 2, 3)] == [2, 1, 1]
    assert torch_threads(4, 16) * 4 <= 16 and torch_threads(3, 16) == 5
    with pytest.raises(ValueError, match="dask_threads must be an integer in"):
        torch_threads(0, 2)


def test_cells_equal_the_runner_and_are_read_back(tmp_path, scheduler):
    g = grid.parse(spec(product={"seed": [0, 1], "algorithm.lr": [0.02, 0.08]}))
    cells = grid.expand(g)
    store = Store(tmp_path / "store.sqlite")
    done = sweep.run_cells(cells, store, lambda: connect(scheduler=scheduler))
    assert (done.cells, done.cached, done.computed, done.failed) == (4, 0, 4, {})
    for cell in cells:
        np.testing.assert_array_equal(store.get(cell.config.key()).metrics["server.dist2"],
                                      run(cell.config).metrics["server.dist2"])
    again = sweep.run_cells(cells, store, lambda: pytest.fail("nothing is missing: no cluster is needed"))
    assert (again.cached, again.computed) == (4, 0)
    rows = sweep.table(g, cells, store)
    metrics = len(store.get(cells[0].config.key()).metrics)
    assert len(rows) == 4 * metrics and {r["seed"] for r in rows} == {0, 1} and rows[0]["round"] == 60
    first = next(r for r in rows if r["metric"] == "server.dist2")
    assert first["ci_low"] <= first["mean"] <= first["ci_high"] and first["replicas"] == 4
    assert sweep.write_csv(rows, tmp_path / "t.csv").read_text().count("\n") == len(rows) + 1
    assert sweep.draw(rows, g, tmp_path / "t.png").stat().st_size > 5_000


def test_a_failing_cell_is_reported_and_the_others_are_stored(tmp_path, scheduler):
    # each value is sound alone; only the runner sees that 3 clients of participation meet 6 of the testbed
    cells = grid.expand(grid.parse(spec(product={"participation.p": [[0.5] * 3], "seed": [1, 2]})))
    cells += grid.expand(grid.parse(spec(product={"seed": [5]})))
    done = sweep.run_cells(cells, Store(tmp_path / "s.sqlite"), lambda: connect(scheduler=scheduler))
    assert done.computed == 1 and len(done.failed) == 2
    assert all("participation has 3 clients but the testbed has 6" in e for e in done.failed.values())


def _sweep(grid_path, out, scheduler) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "theorylab.app.cli", "sweep", str(grid_path), "--scheduler", scheduler,
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _started(path, seeds, out, scheduler, rows=3, rounds=300):
    """A ``theorylab sweep`` subprocess over ``seeds``, once it has stored ``rows`` cells; with its grid's cells."""
    path.write_text(json.dumps({"base": {**BASE, "rounds": rounds, "replicas": 16, "every": rounds},
                                "product": {"seed": list(seeds)}}))
    proc = _sweep(path, out, scheduler)
    deadline = time.monotonic() + 90
    while not ((out / "store.sqlite").exists() and len(store_rows(out / "store.sqlite")) >= rows):
        assert proc.poll() is None, f"the sweep ended too early: {proc.communicate()}"
        assert time.monotonic() < deadline, "the sweep stored nothing in 90 s"
        time.sleep(0.02)
    code_fingerprint.cache_clear()  # hash configs with the code as the subprocess does (this session may be older)
    return proc, grid.expand(grid.parse(grid.load(path)))


def test_a_sweep_killed_with_sigkill_resumes_without_lost_or_repeated_cells(tmp_path, scheduler):
    proc, cells = _started(tmp_path / "grid.json", range(N_KILLED), tmp_path / "out", scheduler)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store_path = tmp_path / "out" / "store.sqlite"
    before = store_rows(store_path)
    assert 3 <= len(before) < N_KILLED, "the kill came after the end: nothing left to resume"
    done = sweep.run_cells(cells, Store(store_path), lambda: connect(scheduler=scheduler))
    assert (done.cached, done.computed, done.failed) == (len(before), N_KILLED - len(before), {})
    after = store_rows(store_path)
    assert set(after) == {c.config.key() for c in cells}  # none lost, each once (the key is the primary key)
    assert {k: after[k] for k in before} == before  # finished cells were not recomputed


def test_two_sweeps_on_one_store_at_once(tmp_path, scheduler):
    out = tmp_path / "shared"
    with connect(2, processes=False) as own:  # the second sweep's own cluster: both compute at the same time
        # the subprocess does the shared seeds 15-29 first, this process its own seeds 30-44 first
        proc, first = _started(tmp_path / "a.json", [*range(15, 30), *range(15)], out, scheduler, rows=1,
                               rounds=100)
        second = grid.expand(grid.parse({"base": first[0].config.as_dict(), "product": {"seed": [*range(30, 45),
                                                                                                  *range(15, 30)]}}))
        done = sweep.run_cells(second, Store(out / "store.sqlite"), lambda: contextlib.nullcontext(own))
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "30 distinct cells" in stdout and not done.failed, stderr
    rows = store_rows(out / "store.sqlite")
    keys = [{c.config.key() for c in cells} for cells in (first, second)]
    assert set(rows) == keys[0] | keys[1] and len(rows) == 45
    only = [[rows[k] for k in keys[i] - keys[1 - i]] for i in (0, 1)]
    assert min(only[1]) < max(only[0]), "the second sweep wrote nothing before the first one's last write"
    table = (out / "a.csv").read_text().splitlines()
    assert {line.split(",")[-1] for line in table[1:]} == keys[0]  # the subprocess' table has all its cells


def test_a_misspelt_metric_is_refused_before_any_cell_runs(tmp_path, capsys):
    from theorylab.app.cli import main

    path = tmp_path / "g.json"
    path.write_text(json.dumps(spec(product={"seed": [0, 1]}, metric="server.dist")))
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "grid metric 'server.dist' is not recorded" in err and "server.dist2" in err
    assert store_rows(tmp_path / "out" / "store.sqlite") == {}


def test_a_grid_whose_first_cell_cannot_run_is_refused_and_keeps_the_earlier_table(tmp_path, scheduler, capsys):
    from theorylab.app.cli import main

    out = tmp_path / "out"
    path = tmp_path / "g.json"
    path.write_text(json.dumps(spec(product={"seed": [0]})))
    assert main(["sweep", str(path), "--out", str(out), "--scheduler", scheduler]) == 0
    table = (out / "g.csv").read_text()
    path.write_text(json.dumps(spec(product={"participation.p": [[0.5] * 3], "seed": [7]})))
    capsys.readouterr()  # the metric's probe runs the first cell before any other: a usage error, nothing written
    assert main(["sweep", str(path), "--out", str(out), "--scheduler", scheduler, "--max-cells", "5"]) == 2
    assert "participation has 3 clients" in capsys.readouterr().err and (out / "g.csv").read_text() == table


_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-3, 50), st.floats(-1e3, 1e3), st.just(float("nan")),
                   st.text(max_size=6), st.lists(st.integers(-1, 3), max_size=3))
_AXIS = st.sampled_from(["seed", "rounds", "replicas", "every", "device", "dtype", "algorithm.lr",
                         "algorithm.local_steps", "algorithm.name", "algorithm.aggregation", "algorithm.bogus",
                         "participation.p", "participation.dynamics", "problem.dim", "problem.sigma", "metric.x"])


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(_AXIS, st.lists(_VALUE, min_size=0, max_size=3), max_size=3), st.booleans(),
       st.one_of(st.just("server.dist2"), st.text(max_size=8)))
def test_fuzzed_grids_are_parsed_or_refused_by_name(axes, zipped, metric):
    """Grid files with arbitrary axes and values (issue 24): a grid, or a ValueError — never another exception."""
    raw = spec(**({"zip": axes} if zipped else {"product": axes}), metric=metric)
    try:
        parsed = grid.parse(raw)
    except ValueError:
        return
    assert parsed.size == len(grid.expand(parsed))
