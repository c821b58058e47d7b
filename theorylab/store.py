"""SQLite result store: traces keyed by :meth:`theorylab.config.RunConfig.key`.

One table, one row per run.  Each ``put`` is a single transaction, so a process
killed mid-write leaves either the old state or the complete new row, never a
partial entry (SQLite's rollback journal is replayed on the next open).  The
default location is ``$THEORYLAB_STORE`` or ``~/.cache/theorylab/store.sqlite``.

A file that is not a valid store (truncated, overwritten, not SQLite, another program's database) is reported as
a one-line ``ValueError`` naming the file and the ways on (move it away, ``--no-cache``, ``--store`` elsewhere);
the store never deletes or rewrites such a file, since it may hold finished results (issue 16).
"""

from __future__ import annotations

import json
import os
import sqlite3
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
    payload BLOB NOT NULL
)
"""


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
        with _valid(self.path):
            self._conn = sqlite3.connect(self.path, timeout=60)
            with self._conn:
                self._conn.execute(_SCHEMA)
            self._conn.execute("SELECT key, version, config, created, payload FROM runs LIMIT 1").fetchone()

    def get(self, key: str) -> Trace | None:
        with _valid(self.path):
            row = self._conn.execute("SELECT payload FROM runs WHERE key = ?", (key,)).fetchone()
        return None if row is None else Trace.from_bytes(row[0])

    def put(self, key: str, trace: Trace) -> None:
        with _valid(self.path), self._conn:  # one transaction: all or nothing
            self._conn.execute(
                "INSERT OR REPLACE INTO runs (key, version, config, created, payload) VALUES (?, ?, ?, ?, ?)",
                (key, theorylab.__version__, json.dumps(trace.config, sort_keys=True), time.time(), trace.to_bytes()),
            )

    def __contains__(self, key: str) -> bool:
        with _valid(self.path):
            return self._conn.execute("SELECT 1 FROM runs WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        with _valid(self.path):
            return self._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def close(self) -> None:
        self._conn.close()
