"""What every command of :mod:`theorylab.cli` shares: numeric option types that refuse bad values as usage errors,
and the result store an ``--out`` / ``--store`` / ``--no-cache`` trio names."""

from __future__ import annotations

import argparse
import math

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
