"""Name -> component registries, filled by decorators at import time.

Components are described by *specs*: plain dicts ``{"name": ..., **params}`` that
are JSON-serialisable, so a run configuration can be hashed for the result store.
``build(kind, spec)`` turns a spec into an object by calling the registered
factory with the spec's parameters.

Before a factory runs, every spec value is checked against the parameter's simple annotation
(:func:`theorylab.validation.annotated_types`): a string for a count or NaN for a weight is a ValueError naming the
parameter, not a TypeError deep in the factory's arithmetic.

Modules register themselves; :func:`load_all` imports every module of the
component packages so that nothing has to be listed by hand, then the plugins that installed packages declare
(entry-point group ``theorylab.plugins``, :mod:`theorylab.plugins`).

Every entry records its *owner*: :data:`BUILT_IN`, or the namespace of the plugin that registered it.  While a
plugin is imported (:func:`owned_by`), each name it registers must be its namespace or start with
``namespace + "."``, and a name that is already taken — by a built-in or by another plugin — is a ValueError that
names both owners.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from theorylab.validation import annotated_types

KINDS = ("testbed", "participation", "channel", "clock", "topology", "algorithm", "claim", "figure", "paper")
PACKAGES = ("theorylab.participation", "theorylab.channels", "theorylab.clocks", "theorylab.topology",
            "theorylab.kernels", "theorylab.testbeds", "theorylab.validations", "theorylab.figures")


BUILT_IN = "built-in"


@dataclass(frozen=True)
class Entry:
    name: str
    obj: Any
    summary: str
    owner: str = BUILT_IN  # BUILT_IN, or the namespace of the plugin that registered it


_REGISTRY: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
_loaded = False
_owner: tuple[str, str] | None = None  # (namespace, where it comes from) of the plugin being imported


def describe(kind: str, entry: Entry) -> str:
    """How an error names a registered component: "the built-in claim 'x' (module m)" or "the claim 'x' of plugin
    'ns' (module m)"."""
    module = getattr(getattr(entry.obj, "check", entry.obj), "__module__", None)
    at = f" (module {module})" if module else ""
    if entry.owner == BUILT_IN:
        return f"the built-in {kind} {entry.name!r}{at}"
    return f"the {kind} {entry.name!r} of plugin {entry.owner!r}{at}"


@contextlib.contextmanager
def owned_by(namespace: str, origin: str) -> Iterator[None]:
    """Inside the block every registration belongs to the plugin ``namespace`` (loaded from ``origin``) and must be
    namespaced by it; on an error the plugin's registrations are removed again, so a failed plugin leaves none."""
    global _owner
    if _owner is not None:
        raise ValueError(f"plugin {namespace!r} ({origin}) is loaded while plugin {_owner[0]!r} is still importing")
    _owner = (namespace, origin)
    try:
        yield
    except BaseException:
        forget(namespace)
        raise
    finally:
        _owner = None


def forget(namespace: str) -> None:
    """Remove every entry that the plugin ``namespace`` registered."""
    for table in _REGISTRY.values():
        for name in [n for n, e in table.items() if e.owner == namespace]:
            del table[name]


def owned(namespace: str) -> dict[str, list[str]]:
    """Kind -> the names the plugin ``namespace`` registered (kinds it registered nothing of left out)."""
    found = {kind: sorted(n for n, e in table.items() if e.owner == namespace) for kind, table in _REGISTRY.items()}
    return {kind: names for kind, names in found.items() if names}


def _first_line(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def register(kind: str, name: str, summary: str | None = None) -> Callable[[Any], Any]:
    """Decorator: register ``obj`` under ``kind``/``name``; the summary defaults to the docstring's first line."""
    if kind not in _REGISTRY:
        raise ValueError(f"unknown registry kind {kind!r}; expected one of {KINDS}")

    def deco(obj: Any) -> Any:
        owner = BUILT_IN if _owner is None else _owner[0]
        if _owner is not None and not (name == owner or name.startswith(owner + ".")):
            raise ValueError(f"plugin {owner!r} ({_owner[1]}) registers {kind} {name!r}: a plugin's names must be "
                             f"its namespace or start with it, e.g. {owner + '.' + name!r}")
        entry = Entry(name, obj, summary or _first_line(obj), owner)
        existing = _REGISTRY[kind].get(name)
        if existing is not None and existing.obj is not obj:
            if existing.owner == owner == BUILT_IN:
                raise ValueError(f"{kind} {name!r} is registered twice")
            raise ValueError(f"{describe(kind, entry)} clashes with {describe(kind, existing)}: a name is registered "
                             "once; rename the plugin (its namespace) or the component")
        _REGISTRY[kind][name] = entry
        return obj

    return deco


def load_all() -> None:
    """Import every module of the component packages, then the installed plugins' (idempotent)."""
    global _loaded
    if _loaded:
        return
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            importlib.import_module(info.name)
    _loaded = True  # before the plugins, which load after the built-ins (so that a clash names the plugin)
    from theorylab.plugins import load_entry_points

    load_entry_points()


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
