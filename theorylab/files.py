"""Writing output files so that nothing good is ever replaced by nothing.

Every report, JSON, CSV and figure is written to a temporary file in the destination's folder and moved over the
destination with :func:`os.replace`, which is atomic on POSIX: a reader sees the old file or the new one, never a
half-written one, and a process killed mid-write leaves the old file in place.  The temporary name is unique to the
process and the call (``.<name>.<pid>-<token>.tmp<suffix>``), so two processes writing the same output folder never
trip over each other's temporary files; the last complete write wins.

:func:`output_dir` checks an ``--out`` folder before any work starts: a path that is a file, or a folder that cannot
be written, is a ``ValueError`` naming it.
"""

from __future__ import annotations

import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """Yield a unique temporary path beside ``path`` (same suffix, so writers that infer a format from it work);
    when the block ends normally, move it over ``path``; when it raises, remove it and leave ``path`` as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}-{secrets.token_hex(4)}.tmp{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (see the module docstring)."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def output_dir(path: str | Path, option: str = "--out") -> Path:
    """``path`` as a folder that exists and can be written (created when missing); a ValueError naming ``option``
    and the path when it is a file, cannot be created, or cannot be written."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path} is a file, not a folder: pass a folder for the outputs")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"{option} {path} cannot be created: {err.strerror or err}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {path} cannot be written (permission denied): pass a writable folder")
    return path
