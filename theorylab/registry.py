"""Name -> component registries, filled by decorators at import time.

Components are described by *specs*: plain dicts ``{"name": ..., **params}`` that
are JSON-serialisable, so a run configuration can be hashed for the result store.
``build(kind, spec)`` turns a spec into an object by calling the registered
factory with the spec's parameters.

Before a factory runs, every spec value is checked against the parameter's simple annotation
(:func:`theorylab.validation.annotated_types`): a string for a count or NaN for a weight is a ValueError naming the
parameter, not a TypeError deep in the factory's arithmetic.

Modules register themselves; :func:`load_all` imports every module of the
component packages so that nothing has to be listed by hand.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable

from theorylab.validation import annotated_types

KINDS = ("testbed", "participation", "channel", "clock", "topology", "algorithm", "claim", "figure", "paper")
PACKAGES = ("theorylab.participation", "theorylab.channels", "theorylab.clocks", "theorylab.topology",
            "theorylab.kernels", "testbeds", "validations", "figures")


@dataclass(frozen=True)
class Entry:
    name: str
    obj: Any
    summary: str


_REGISTRY: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
_loaded = False


def _first_line(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def register(kind: str, name: str, summary: str | None = None) -> Callable[[Any], Any]:
    """Decorator: register ``obj`` under ``kind``/``name``; the summary defaults to the docstring's first line."""
    if kind not in _REGISTRY:
        raise ValueError(f"unknown registry kind {kind!r}; expected one of {KINDS}")

    def deco(obj: Any) -> Any:
        existing = _REGISTRY[kind].get(name)
        if existing is not None and existing.obj is not obj:
            raise ValueError(f"{kind} {name!r} is registered twice")
        _REGISTRY[kind][name] = Entry(name, obj, summary or _first_line(obj))
        return obj

    return deco


def load_all() -> None:
    """Import every module of the component packages (idempotent)."""
    global _loaded
    if _loaded:
        return
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            importlib.import_module(info.name)
    _loaded = True


def entries(kind: str) -> dict[str, Entry]:
    load_all()
    return dict(sorted(_REGISTRY[kind].items()))


def lookup(kind: str, name: str) -> Entry:
    table = entries(kind)
    if name not in table:
        known = ", ".join(table) or "none"
        raise ValueError(f"unknown {kind} {name!r}; known: {known}")
    return table[name]


def check(kind: str, spec: dict[str, Any], **context: Any) -> tuple[Callable, dict, dict]:
    """Check ``spec`` against its registered factory without calling it: a registered name, parameters the factory
    takes, values of the types its annotations name.  Returns ``(factory, params, context it accepts)``."""
    if not isinstance(spec, dict) or "name" not in spec:
        raise ValueError(f"a {kind} spec must be a dict with a 'name' key; got {spec!r}")
    params = {k: v for k, v in spec.items() if k != "name"}
    factory = lookup(kind, spec["name"]).obj
    accepted = inspect.signature(factory).parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    extra = {k: v for k, v in context.items() if takes_kwargs or k in accepted}
    try:
        inspect.signature(factory).bind(**params, **extra)
    except TypeError as err:
        raise ValueError(f"bad parameters for {kind} {spec['name']!r}: {err}") from None
    annotated_types(f"bad parameters for {kind} {spec['name']!r}", factory, params)
    return factory, params, extra


def build(kind: str, spec: dict[str, Any], **context: Any) -> Any:
    """Instantiate ``spec = {"name": ..., **params}`` with the registered factory, once :func:`check` accepts it.

    ``context`` carries run-level arguments (device, dtype, ...) that a factory
    may accept; they are passed only if the factory's signature names them.
    """
    factory, params, extra = check(kind, spec, **context)
    return factory(**params, **extra)
