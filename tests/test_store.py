import subprocess
import sys
import textwrap

import numpy as np

import theorylab.runner as runner
from theorylab.config import RunConfig
from theorylab.store import Store

CFG = RunConfig(problem={"name": "scalar_quadratic", "centers": [0.0, 1.0], "sigma": 0.1},
                participation={"name": "bernoulli", "p": [0.7, 0.3]}, algorithm={"name": "fedavg"},
                rounds=20, replicas=4, every=5)


def test_second_run_reads_the_cache(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite")
    first = runner.run(CFG, store)
    calls = []
    monkeypatch.setattr(runner, "_simulate", lambda *a: calls.append(a) or first)
    second = runner.run(CFG, store)
    assert calls == [] and len(store) == 1
    assert np.array_equal(first.metrics["server.dist2"], second.metrics["server.dist2"])
    runner.run(CFG.replace(seed=1), store)  # a different config is a miss
    assert len(calls) == 1


def test_key_changes_with_any_config_field():
    keys = {CFG.key(), CFG.replace(seed=1).key(), CFG.replace(rounds=21).key(),
            CFG.replace(algorithm={"name": "fedavg", "lr": 0.1}).key()}
    assert len(keys) == 4 and CFG.key() == RunConfig(**CFG.as_dict()).key()


def test_a_write_killed_midway_leaves_no_entry(tmp_path):
    path = tmp_path / "s.sqlite"
    script = textwrap.dedent(f"""
        import os
        from theorylab.config import RunConfig
        from theorylab.runner import run
        from theorylab.store import Store
        cfg = RunConfig(**{CFG.as_dict()!r})
        store = Store({str(path)!r})
        trace = run(cfg)
        store.put("complete", trace)

        class DiesBeforeCommit:
            def __init__(self, conn): self.conn = conn
            def __enter__(self): return self.conn.__enter__()
            def __exit__(self, *exc): os._exit(9)  # killed after the INSERT ran, before COMMIT
            def execute(self, *a): return self.conn.execute(*a)

        store._conn = DiesBeforeCommit(store._conn)
        store.put("partial", trace)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    store = Store(path)
    assert "complete" in store and "partial" not in store
    assert store._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert store.get("complete").metrics["server.dist2"].shape == (4, 5)


def _damage(store: Store, key: str, how: str) -> None:
    payload = bytearray(store._conn.execute("SELECT payload FROM runs WHERE key = ?", (key,)).fetchone()[0])
    if how == "flip_end":
        payload[-40:-30] = bytes(b ^ 0xFF for b in payload[-40:-30])
    elif how == "flip_middle":
        payload[len(payload) // 2] ^= 0xFF
    elif how == "truncate":
        payload = payload[: len(payload) // 3]
    with store._conn:
        store._conn.execute("UPDATE runs SET payload = ? WHERE key = ?", (bytes(payload), key))


def test_a_damaged_row_is_reported_once_and_recomputed(tmp_path, capsys):
    for how in ("flip_end", "flip_middle", "truncate"):
        store = Store(tmp_path / f"{how}.sqlite")
        good = runner.run(CFG, store)
        other = runner.run(CFG.replace(seed=1), store)
        _damage(store, CFG.key(), how)
        assert store.get(CFG.key()) is None and store.get(CFG.key()) is None
        err = capsys.readouterr().err
        assert err.count("is damaged") == 1 and CFG.key() in err and "scalar_quadratic / fedavg" in err, err
        again = runner.run(CFG, store)  # recomputed, and the good row replaces the damaged one
        assert np.array_equal(again.final["server"], good.final["server"])
        assert Store(store.path).get(CFG.key()) is not None and store.check() == []
        assert np.array_equal(store.get(CFG.replace(seed=1).key()).final["server"], other.final["server"])


def test_a_row_written_before_checksums_is_read_and_checked(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    trace = runner.run(CFG)
    with sqlite3.connect(path) as conn:  # the schema of stores written before rows carried checksums
        conn.execute("CREATE TABLE runs (key TEXT PRIMARY KEY, version TEXT NOT NULL, config TEXT NOT NULL, "
                     "created REAL NOT NULL, payload BLOB NOT NULL)")
        conn.execute("INSERT INTO runs VALUES (?, '0', '{}', 0, ?)", ("old", trace.to_bytes()))
        conn.execute("INSERT INTO runs VALUES (?, '0', '{}', 0, ?)", ("text", "not a trace"))
    store = Store(path)
    assert np.array_equal(store.get("old").final["server"], trace.final["server"])
    assert store.get("text") is None
    assert [(k, problem.split(" (")[0]) for k, _, problem in store.check()] == [
        ("text", "its payload cannot be decoded")]
    assert [k for k, _, _ in store.check(repair=True)] == ["text"] and len(store) == 1 and store.check() == []


def test_store_check_command(tmp_path, capsys):
    from theorylab.app.cli import main

    store = Store(tmp_path / "store.sqlite")
    runner.run(CFG, store)
    runner.run(CFG.replace(seed=1), store)
    assert main(["store", "check", "--out", str(tmp_path)]) == 0
    assert "2 rows, none damaged" in capsys.readouterr().out
    _damage(store, CFG.key(), "flip_middle")
    assert main(["store", "check", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert CFG.key() in out and "1 of 2 rows damaged" in out
    assert main(["store", "check", "--out", str(tmp_path), "--repair"]) == 0
    assert len(Store(store.path)) == 1
    assert main(["store", "check", "--store", str(tmp_path / "none.sqlite")]) == 2
