"""The five defects of issue 16, each through the real command or API call a user would make."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from theorylab.app.cli import main
from theorylab.config import RunConfig
from theorylab.memory import available_bytes
from theorylab.runner import run
from theorylab.store import Store

BASE = dict(problem={"name": "random_quadratic", "n_clients": 3, "dim": 2},
            participation={"name": "bernoulli", "p": [0.5] * 3}, algorithm={"name": "fedavg"}, rounds=2)


def test_zero_clients_is_a_usage_error_naming_the_option(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["train", "--testbed", "digits", "--clients", "0", "--rounds", "1", "--out", str(tmp_path)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --clients: must be an integer in [1, inf]; got '0'" in err and "Traceback" not in err


@pytest.mark.parametrize("option, value, allowed", [("--rounds", "-1", "[1, inf]"), ("--lr", "nan", "(0, inf)"),
                                                    ("--p-min", "1.5", "(0, 1]"), ("--replicas", "two", "[1, inf]")])
def test_other_invalid_numeric_options_name_their_range(tmp_path, capsys, option, value, allowed):
    with pytest.raises(SystemExit) as stop:
        main(["train", option, value, "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert f"argument {option}: must be" in capsys.readouterr().err


def _healthy_store(path: Path) -> None:
    store = Store(path)
    run(RunConfig(**BASE), store)
    store.close()


@pytest.mark.parametrize("damage", ["truncated", "not_sqlite"])
def test_a_broken_store_is_one_line_naming_the_file_and_the_ways_on(tmp_path, capsys, damage):
    path = tmp_path / "store.sqlite"
    if damage == "truncated":
        _healthy_store(path)
        path.write_bytes(path.read_bytes()[:3000])
    else:
        path.write_text("results of last week, not SQLite\n" * 200)
    before = path.read_bytes()
    assert main(["validate", "fedawe.prop1", "--quick", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert f"{path} is not a valid theorylab result store" in err
    assert "move it away" in err and "--no-cache" in err and "--store" in err
    assert path.read_bytes() == before  # never deleted nor rewritten


def test_a_healthy_store_opens_and_keeps_its_runs(tmp_path):
    path = tmp_path / "store.sqlite"
    _healthy_store(path)
    assert len(Store(path)) == 1 and RunConfig(**BASE).key() in Store(path)


def test_an_oversized_run_is_refused_up_front_with_both_numbers():
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"needs an estimated .* of cpu memory but .* are available") as err:
        run(RunConfig(**{**BASE, "replicas": 10**9}))
    assert "replicas=1000000000" in str(err.value)
    assert time.perf_counter() - started < 5  # refused before allocating, not after a minute


def test_the_estimate_scales_with_replicas_and_admits_ordinary_runs():
    from theorylab.memory import run_estimate
    from theorylab.runner import build_run

    cfg = RunConfig(**BASE)
    problem, _, algorithm = build_run(cfg)
    small = run_estimate(cfg, problem, algorithm, {})
    large = run_estimate(cfg.replace(replicas=1000), problem, algorithm, {})
    assert large[0] > small[0] and large[1] > 500 * small[1]
    assert sum(small) < available_bytes("cpu")
    assert run(cfg).metrics["server.dist2"].shape == (1, 3)


@pytest.mark.parametrize("dim", [0, -2, 2.5, float("nan")])
def test_a_degenerate_dimension_names_dim(dim):
    with pytest.raises(ValueError, match=r"dim must be an integer"):
        run(RunConfig(**{**BASE, "problem": {**BASE["problem"], "dim": dim}}))


def test_explicit_quadratic_with_no_coordinates_names_its_centers():
    with pytest.raises(ValueError, match="centers must have .* dim >= 1"):
        run(RunConfig(**{**BASE, "problem": {"name": "quadratic", "hessians": [[[]]] * 3, "centers": [[]] * 3}}))


def test_list_into_a_closed_pipe_exits_quietly():
    exe = shutil.which("theorylab", path=os.path.dirname(sys.executable))
    shell = f"'{exe}' list | head -n 1 >/dev/null; echo ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120)
    assert done.stderr == ""
    assert done.stdout.strip() in ("0", "141")
