"""SQLite result store: traces keyed by :meth:`theorylab.config.RunConfig.key`.

One table, one row per run.  Each ``put`` is a single transaction, so a process
killed mid-write leaves either the old state or the complete new row, never a
partial entry (SQLite's rollback journal is replayed on the next open).  The
default location is ``$THEORYLAB_STORE`` or ``~/.cache/theorylab/store.sqlite``.

A file that is not a valid store (truncated, overwritten, not SQLite, another program's database) is reported as
a one-line ``ValueError`` naming the file and the ways on (move it away, ``--no-cache``, ``--store`` elsewhere);
the store never deletes or rewrites such a file, since it may hold finished results (issue 16).

**Rows heal.**  Each row carries the SHA-256 of its payload.  A row whose payload no longer matches it (bytes
flipped on disk, a truncated write by another tool), or that cannot be decoded (a row written before checksums,
damaged since), is *damaged*: :meth:`Store.get` reports it once on stderr — its key, what the run was and what is
wrong — and answers "not stored", so the run is recomputed and its good row replaces the damaged one.  The other
rows are untouched.  :meth:`Store.check` scans every row (``theorylab store check [--repair]``); repairing deletes
only the damaged rows, which the next run recomputes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import theorylab
from theorylab.trace import Trace

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    config TEXT NOT NULL,
    created REAL NOT NULL,
    payload BLOB NOT NULL,
    checksum TEXT
)
"""


def checksum(payload) -> str:
    return hashlib.sha256(bytes(payload) if not isinstance(payload, str) else payload.encode()).hexdigest()


def describe(config: str) -> str:
    """A run in a few words for a message: its testbed, algorithm and size, from the stored configuration."""
    try:
        c = json.loads(config)
        return (f"{c['problem']['name']} / {c['algorithm']['name']} / {c['participation']['name']}, "
                f"{c['rounds']} rounds x {c['replicas']} replicas, seed {c['seed']}")
    except (ValueError, KeyError, TypeError):
        return "configuration unreadable"


def damage(payload, stored_sum: str | None) -> str | None:
    """What is wrong with a row's payload, or None when it is sound."""
    if stored_sum is not None and checksum(payload) != stored_sum:
        return "its payload does not match its checksum"
    try:
        Trace.from_bytes(payload)
    except Exception as err:  # noqa: BLE001 - any failure to decode is damage, reported with its message
        return f"its payload cannot be decoded ({type(err).__name__}: {err})"
    return None


def default_path() -> Path:
    env = os.environ.get("THEORYLAB_STORE")
    return Path(env) if env else Path.home() / ".cache" / "theorylab" / "store.sqlite"


@contextmanager
def _valid(path: Path):
    """Turn SQLite's complaints about the file itself into a ValueError that says how to go on (a busy database
    is not the file's fault and is passed through)."""
    try:
        yield
    except sqlite3.DatabaseError as err:
        if isinstance(err, sqlite3.OperationalError) and "locked" in str(err):
            raise
        raise ValueError(f"{path} is not a valid theorylab result store ({err}); move it away, run with --no-cache, "
                         f"or pass --store with another file (theorylab never deletes a store)") from None


class Store:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._reported: set[str] = set()
        with _valid(self.path):
            self._conn = sqlite3.connect(self.path, timeout=60)
            with self._conn:
                self._conn.execute(_SCHEMA)
                columns = {row[1] for row in self._conn.execute("PRAGMA table_info(runs)")}
                if "checksum" not in columns:  # a store written before rows carried checksums
                    self._conn.execute("ALTER TABLE runs ADD COLUMN checksum TEXT")
            self._conn.execute("SELECT key, version, config, created, payload, checksum FROM runs LIMIT 1").fetchone()

    def get(self, key: str) -> Trace | None:
        """The stored trace of ``key``; None when it is not stored or its row is damaged (reported once)."""
        with _valid(self.path):
            row = self._conn.execute("SELECT payload, checksum, config FROM runs WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        payload, stored_sum, config = row
        if stored_sum is None or checksum(payload) == stored_sum:
            try:
                return Trace.from_bytes(payload)
            except Exception:  # noqa: BLE001 - reported below with what is wrong
                pass
        if key not in self._reported:
            self._reported.add(key)
            print(f"theorylab: store {self.path}: row {key} ({describe(config)}) is damaged: "
                  f"{damage(payload, stored_sum)}; recomputing it (the other rows are unaffected)", file=sys.stderr)
        return None

    def put(self, key: str, trace: Trace) -> None:
        payload = trace.to_bytes()
        with _valid(self.path), self._conn:  # one transaction: all or nothing
            self._conn.execute(
                "INSERT OR REPLACE INTO runs (key, version, config, created, payload, checksum) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (key, theorylab.__version__, json.dumps(trace.config, sort_keys=True), time.time(), payload,
                 checksum(payload)),
            )

    def check(self, repair: bool = False) -> list[tuple[str, str, str]]:
        """Every damaged row as (key, what the run was, what is wrong); with ``repair`` those rows are deleted, in
        one transaction, so the next run recomputes them."""
        damaged = []
        with _valid(self.path):
            for key, config, payload, stored_sum in self._conn.execute(
                    "SELECT key, config, payload, checksum FROM runs ORDER BY key"):
                problem = damage(payload, stored_sum)
                if problem is not None:
                    damaged.append((key, describe(config), problem))
            if repair and damaged:
                with self._conn:
                    self._conn.executemany("DELETE FROM runs WHERE key = ?", [(k,) for k, _, _ in damaged])
        return damaged

    def __contains__(self, key: str) -> bool:
        with _valid(self.path):
            return self._conn.execute("SELECT 1 FROM runs WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        with _valid(self.path):
            return self._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def close(self) -> None:
        self._conn.close()
