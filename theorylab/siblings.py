"""Where the sibling packages live: ``theorylab.testbeds``, ``theorylab.validations`` and ``theorylab.figures``.

A checkout keeps them as top-level folders beside ``theorylab/`` (``testbeds/``, ``validations/``, ``figures/``),
while an installed wheel holds them inside the package (``site-packages/theorylab/testbeds``; ``setup.py`` maps the
folders there).  Either way they are imported only by their full names, so a user's own ``figures`` or
``validations`` package — in a notebook's working directory, say — neither shadows them nor is shadowed by them
(issue 27, item 2).  In a checkout, :func:`install_finder` (run by ``theorylab/__init__.py``) maps exactly these
three names to the folders; every other ``theorylab.*`` name is found as usual.

:func:`source_files` lists the sources of the engine and of each sibling under the names the code fingerprints
use (``testbeds/quadratic.py``, …), the same in both layouts.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path

NAMES = ("testbeds", "validations", "figures")
PACKAGE = Path(__file__).resolve().parent  # theorylab/


def folder(name: str) -> Path:
    """The folder of sibling ``name``: inside the package when installed, beside it in a checkout."""
    inside = PACKAGE / name
    return inside if inside.is_dir() else PACKAGE.parent / name


class _CheckoutFinder(importlib.abc.MetaPathFinder):
    """Finds ``theorylab.<sibling>`` in the checkout's top-level folder of that name (and nothing else)."""

    def find_spec(self, fullname, path=None, target=None):
        prefix, _, name = fullname.partition(".")
        if prefix != "theorylab" or name not in NAMES:
            return None
        init = PACKAGE.parent / name / "__init__.py"
        return importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[str(init.parent)])


def install_finder() -> None:
    """Map the siblings to the checkout's folders, once, when the package does not hold them itself."""
    if all((PACKAGE / name).is_dir() for name in NAMES):
        return
    if not any(isinstance(f, _CheckoutFinder) for f in sys.meta_path):
        sys.meta_path.append(_CheckoutFinder())


def source_files(packages=("theorylab", *NAMES)) -> list[tuple[str, Path]]:
    """``(name, path)`` of every ``.py`` file of ``packages``, named ``<package>/<relative path>``, sorted; the
    engine's own files exclude the siblings installed inside it."""
    out = []
    for package in packages:
        root = PACKAGE if package == "theorylab" else folder(package)
        for path in root.rglob("*.py"):
            relative = path.relative_to(root)
            if package == "theorylab" and relative.parts[0] in NAMES:
                continue
            out.append((f"{package}/{relative.as_posix()}", path))
    return sorted(out)
