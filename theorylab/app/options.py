"""What every command of :mod:`theorylab.app.cli` shares: numeric option types that refuse bad values as usage errors,
the result store an ``--out`` / ``--store`` / ``--no-cache`` trio names, and ``--plugin``."""

from __future__ import annotations

import argparse
import math
import re

from theorylab.files import output_dir
from theorylab.store import Store
from theorylab.validation import integer, real


def store_of(args) -> Store | None:
    """The store of a command: ``--store``, else ``OUT/store.sqlite`` (the folder checked first); none with
    ``--no-cache``."""
    if args.no_cache:
        return None
    return Store(args.store or output_dir(args.out) / "store.sqlite")


def int_at_least(low: int):
    """An argparse type: an integer >= ``low``, else a usage error (exit 2) that argparse prefixes with the option."""
    def parse(text: str) -> int:
        try:
            return integer("the value", int(text), low)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer in [{low}, inf]; got {text!r}") from None
    return parse


def number_in(low: float, high: float = math.inf, open_low: bool = False):
    """An argparse type: a finite number in ``[low, high]`` (``(low, high]`` when ``open_low``), else a usage error."""
    def parse(text: str) -> float:
        try:
            return real("the value", float(text), low, high, open_low)
        except ValueError:
            interval = f"{'(' if open_low else '['}{low:g}, {high:g}{')' if math.isinf(high) else ']'}"
            raise argparse.ArgumentTypeError(f"must be a finite number in {interval}; got {text!r}") from None
    return parse


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> float:
    """An argparse type: a duration in seconds from ``"90"``, ``"90s"``, ``"30m"``, ``"2h"`` or ``"1h30m"``; a usage
    error for anything else, a negative or a zero duration."""
    parts = re.fullmatch(r"\s*(?:(\d+(?:\.\d+)?)\s*([smhd]))+\s*|\s*\d+(?:\.\d+)?\s*", text or "")
    if parts is None:
        raise argparse.ArgumentTypeError(f"must be a duration such as 90s, 30m, 2h or 1h30m; got {text!r}")
    pieces = re.findall(r"(\d+(?:\.\d+)?)\s*([smhd]?)", text)
    seconds = sum(float(value) * _UNITS[unit or "s"] for value, unit in pieces)
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive duration; got {text!r}")
    return seconds


def add_plugin(sp) -> None:
    """``--plugin PATH|MODULE`` (repeatable): a plugin folder, ``.py`` file or module whose claims, kernels,
    testbeds, participation processes and figures the command sees (:mod:`theorylab.plugins`); ``theorylab.app.cli``
    loads them before the command runs."""
    sp.add_argument("--plugin", action="append", default=[], metavar="PATH|MODULE",
                    help="load a plugin: a folder with __init__.py (`theorylab new NAME` writes one), a .py file or "
                    "an importable module; repeatable (installed plugins load without it)")


def add_common(sp, out_default: str) -> None:
    """The options every command that runs claims or figures shares: seed, output folder, budget, store, plugins."""
    add_plugin(sp)
    sp.add_argument("--seed", type=int_at_least(0), default=0, help="base seed of every random stream (default 0)")
    sp.add_argument("--out", default=out_default, help=f"output folder (default {out_default})")
    budget = sp.add_mutually_exclusive_group()
    budget.add_argument("--quick", action="store_true", help="small budget: fewer replicas and rounds")
    budget.add_argument("--full", action="store_false", dest="quick", default=False,
                        help="each claim at the scale its docstring states (the default)")
    sp.add_argument("--store", help="result-store file (default OUT/store.sqlite)")
    sp.add_argument("--no-cache", action="store_true", help="neither read nor write the result store")


def add_cluster(sp) -> None:
    """``--workers`` / ``--scheduler``: where claims run in parallel."""
    sp.add_argument("--workers", type=int_at_least(1), help="run the claims in parallel on a dask LocalCluster of this "
                    "many single-threaded workers (default: serial, in this process)")
    sp.add_argument("--scheduler", help="run the claims on the dask cluster at this address (tcp://HOST:PORT)")
