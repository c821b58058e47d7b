"""The validation journal: each claim's result is appended to ``OUT/journal.jsonl`` the moment it finishes, so a
long ``validate`` killed halfway (a reboot, a lost session) resumes with ``--resume`` where it stopped.

A line holds the result (``Result.as_dict``) with what it was computed under: the mode, the seed, whether orderings
were decided by confidence sequences, and the *code fingerprint* — a SHA-256 over the source files of the engine,
the testbeds, the validations and the figures (with the fingerprints of the loaded plugins,
:mod:`theorylab.plugins`, when there are any).  ``--resume`` takes a line only when all four match the run being
resumed, so a result computed by other code is never reused; the runs inside claims are cached separately, by
their configuration, in the result store (:mod:`theorylab.store`).  Lines are appended and flushed one at a time;
a line cut short by a crash is skipped on reading.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from theorylab.claims import Result
from theorylab.siblings import source_files

SOURCES = ("theorylab", "testbeds", "validations", "figures")


def fingerprint(top: Path | None = None) -> str:
    """SHA-256 (first 16 hex digits) of every ``.py`` file of :data:`SOURCES` under ``top``, by relative path and
    content; by default of the installed or checked-out packages (:func:`theorylab.siblings.source_files`, the
    same names in both layouts), read once per process."""
    if top is None:
        return _installed()
    return _digest((f"{package}/{path.relative_to(Path(top) / package).as_posix()}", path)
                   for package in SOURCES for path in sorted((Path(top) / package).rglob("*.py")))


@functools.lru_cache(maxsize=1)
def _installed() -> str:
    return _digest(source_files(SOURCES))


def _digest(files) -> str:
    digest = hashlib.sha256()
    for name, path in files:
        digest.update(f"{name}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _stamp(mode: str, seed: int, anytime: bool) -> dict:
    from theorylab.plugins import fingerprints

    stamp = {"mode": mode, "seed": seed, "anytime": anytime, "code": fingerprint()}
    if fingerprints():  # left out without plugins, so that earlier journals still resume
        stamp["plugins"] = fingerprints()
    return stamp


def start(path: Path, resume: bool) -> None:
    """Begin a journal at ``path``: kept for ``resume``, else emptied (a fresh run journals only its own results)."""
    if not resume:
        Path(path).write_text("")


def append(path: Path, result: Result, mode: str, seed: int, anytime: bool) -> None:
    """Append one finished result (flushed and synced, so a crash right after it keeps it)."""
    line = json.dumps({**_stamp(mode, seed, anytime), "result": result.as_dict()})
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def finished(path: Path, mode: str, seed: int, anytime: bool) -> dict[str, Result]:
    """Claim id -> result for the journal lines of this mode, seed, decision rule and code (later lines win); an
    error result is not kept, so a resumed run retries it."""
    from theorylab.html_report import result_of

    path, want, found = Path(path), _stamp(mode, seed, anytime), {}
    if not path.is_file():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
            if {k: row.get(k) for k in want} != want:
                continue
            result = result_of(row["result"], path)
        except (ValueError, KeyError, TypeError, AttributeError):  # a line cut short, or not ours
            continue
        if result.error is None:
            found[result.claim.id] = result
    return found
