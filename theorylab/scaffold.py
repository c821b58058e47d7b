"""``theorylab new NAME [--dir DIR]``: write a plugin folder that checks a lemma of your own.

``DIR/NAME/`` is a plain folder usable with ``--plugin DIR/NAME`` and a Python project (``pyproject.toml`` declares
the entry point of the group ``theorylab.plugins``, so ``pip install DIR/NAME`` registers it).  It holds, from the
templates in ``theorylab/templates/plugin/`` (package data; ``{{name}}`` replaced by NAME, ``NAME`` in a file name
too):

* ``lemma.md`` — the lemma in the user's own words (gradient descent on a one-dimensional quadratic contracts by
  :math:`|1 - \\eta L|` per step), registered as the plugin's source work so that its claim quotes it;
* ``kernel.py`` — the algorithm ``NAME.gd``, an ``init`` / ``step`` / ``points`` kernel over
  ``(replicas, clients, params)`` tensors;
* ``figure.py`` — the figure ``NAME.contraction`` (``compute`` / ``draw`` / ``render``);
* ``claims.py`` — the claim ``NAME.contraction``, a *statement* decided by ``equal`` against the closed form;
* ``tests/`` — pytest tests of the kernel (closed form, FedAvg equivalence), the claim, its quote and the figure,
  which pass as generated;
* ``pyproject.toml``, ``README.md``.

NAME must be a Python identifier that names no built-in package, no registered namespace and no importable module;
an existing ``DIR/NAME`` is never overwritten.  The folder is written under a temporary name and renamed into place,
so a failure leaves nothing half-written.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from theorylab.plugins import check_namespace
from theorylab.registry import KINDS, entries

TEMPLATES = Path(__file__).resolve().parent / "templates" / "plugin"
SUFFIX = ".tmpl"


def check_name(name: str) -> str:
    """``name`` if ``theorylab new`` may use it, else a ValueError that says why."""
    check_namespace(name, "NAME")
    for kind in KINDS:
        taken = [n for n, e in entries(kind).items() if n.split(".")[0] == name]
        if taken:
            raise ValueError(f"NAME {name!r} is taken: {kind} {taken[0]!r} is already registered "
                             f"({entries(kind)[taken[0]].owner}); choose another name")
    if importlib.util.find_spec(name) is not None:
        raise ValueError(f"NAME {name!r} is already an importable module; a plugin of that name would clash with it")
    return name


def templates() -> dict[Path, Path]:
    """Template file -> the relative path it is written to (``.tmpl`` dropped)."""
    return {path: path.relative_to(TEMPLATES).with_name(path.name[:-len(SUFFIX)])
            for path in sorted(TEMPLATES.rglob("*" + SUFFIX))}


def render(text: str, name: str) -> str:
    return text.replace("{{name}}", name)


def create(name: str, parent: str | Path = ".") -> Path:
    """Write the plugin ``parent/name`` from the templates and return its path."""
    check_name(name)
    parent = Path(parent).expanduser()
    folder = parent / name
    if folder.exists():
        raise ValueError(f"{folder} already exists; `theorylab new` never overwrites a folder (remove it or pass "
                         "another --dir or NAME)")
    if parent.exists() and not parent.is_dir():
        raise ValueError(f"--dir {parent} is a file, not a folder")
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=parent))
    try:
        for template, relative in templates().items():
            target = staging / relative.with_name(relative.name.replace("NAME", name))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(render(template.read_text(encoding="utf-8"), name), encoding="utf-8")
        staging.chmod(0o755)  # mkdtemp made it private
        os.rename(staging, folder)  # fails rather than overwrite a folder that appeared meanwhile
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder
