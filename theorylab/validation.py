"""Parameter checks shared by every component: a bad value is a ``ValueError`` that names the parameter.

``int(value) != value`` is not a check: it raises an unnamed ``ValueError`` on NaN and on strings, an
``OverflowError`` on infinity and a ``TypeError`` on ``None``.  These helpers refuse all of them with one
message, ``"<name> must be an integer in [low, high]; got <value>"``, so a user always learns which parameter
to change and to what (issue 16).  :func:`annotated_types` applies the same rule to every spec the registry
builds, from the factory's simple annotations (``int``, ``float``, ``str``, ``bool``, ``dict``, ``None``), so a
new component is covered as soon as it annotates its parameters.
"""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np
import torch


def _interval(low, high) -> str:
    return f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"


def integer(name: str, value, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int``, or a ValueError naming ``name`` unless it is an integer in ``[low, high]``.

    Integral floats (``3.0``) are accepted, booleans, strings, NaN and infinities are not."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) \
        and float(value).is_integer()
    if not ok or (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be an integer in {_interval(low, high)}; got {value!r}")
    return int(value)


def floats(name: str, values) -> np.ndarray:
    """``values`` as a float64 array (at least 1-d), or a ValueError naming ``name`` when they are not numbers."""
    try:
        return np.atleast_1d(np.asarray(values, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or a sequence of numbers; got {values!r}") from None


def real(name: str, value, low: float | None = None, high: float | None = None, open_low: bool = False) -> float:
    """``value`` as a ``float``, or a ValueError naming ``name`` unless it is a finite number in the interval
    (``(low, high]`` when ``open_low``, else ``[low, high]``)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if ok and low is not None:
        ok = value > low if open_low else value >= low
    if not ok or (high is not None and value > high):
        bracket = "(" if open_low else "["
        raise ValueError(f"{name} must be a finite number in {bracket}{_interval(low, high)[1:]}; got {value!r}")
    return float(value)


def device(value) -> torch.device:
    """``value`` as a ``torch.device``; a ValueError naming ``device`` when torch cannot parse it or it names a CUDA
    device torch cannot see (instead of torch's ``AssertionError`` deep inside the first tensor moved there)."""
    try:
        parsed = torch.device(value)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must name a torch device such as 'cpu' or 'cuda:0'; got {value!r}") from None
    if parsed.type == "cuda" and (not torch.cuda.is_available() or (parsed.index or 0) >= torch.cuda.device_count()):
        raise ValueError(f"device {str(parsed)!r} is not available: torch {torch.__version__} sees "
                         f"{torch.cuda.device_count()} CUDA device(s); use device 'cpu'")
    return parsed


_ACCEPTS = {  # simple annotation -> (test, what a value must be)
    "int": (lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)
            and float(v).is_integer(), "an integer"),
    "float": (lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool) and not math.isnan(v), "a number"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "bool": (lambda v: isinstance(v, (bool, np.bool_)), "true or false"),
    "dict": (lambda v: isinstance(v, dict), "a dict"),
    "None": (lambda v: v is None, "None"),
}


def _annotation(parameter: inspect.Parameter) -> str:
    ann = parameter.annotation
    return ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))


def annotated_types(what: str, factory, params: dict) -> None:
    """Refuse a spec value whose type contradicts its parameter's simple annotation (``int``, ``float``, ``str``,
    ``bool``, ``dict``, ``None`` and unions of them), with a ValueError naming the parameter: a string for a step
    count or NaN for a weight never reaches the factory's arithmetic.  Other annotations are left to the factory."""
    signature = inspect.signature(factory).parameters
    for name, value in params.items():
        parameter = signature.get(name)
        if parameter is None or parameter.annotation is parameter.empty:
            continue
        parts = [part.strip() for part in _annotation(parameter).split("|")]
        if not all(part in _ACCEPTS for part in parts):
            continue
        if not any(_ACCEPTS[part][0](value) for part in parts):
            allowed = " or ".join(_ACCEPTS[part][1] for part in parts)
            raise ValueError(f"{what}: {name} must be {allowed}; got {value!r}")
