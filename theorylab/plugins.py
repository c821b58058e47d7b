"""Plugins: claims, kernels, testbeds, participation processes and figures that live outside this repository.

A plugin is a Python package (or a single module) whose top-level name is its *namespace*.  It registers its
components with the same decorators as the built-ins (``@claim``, ``@register("algorithm", ...)``, ...), and every
name it registers must be the namespace or start with ``namespace + "."`` (``mylemma.contraction``,
``mylemma.gd``): a claim's id then selects it by prefix (``theorylab validate mylemma``), and a name that a
built-in or another plugin already has is a ValueError naming both owners (:func:`theorylab.registry.owned_by`).

Two ways in:

* **installed** — a distribution declares an entry point in the group :data:`GROUP`
  (``[project.entry-points."theorylab.plugins"] mylemma = "mylemma"``); :func:`theorylab.registry.load_all` loads
  every one after the built-ins, so every command sees it with no option;
* **given** — ``--plugin PATH|MODULE`` on ``validate``, ``errata``, ``list``, ``figure`` and ``train``: a folder
  that holds ``__init__.py`` (imported by its file location under the folder's name, so it works from any
  directory and nothing is put on ``sys.path``), a single ``.py`` file, or the name of an importable module.

Loading imports the package and every module in it (as :func:`~theorylab.registry.load_all` does for the
built-ins); a plugin that registers nothing is an error, and a failed plugin leaves no registration behind.

**Cache key.**  Each loaded plugin has a *fingerprint*: SHA-256 over its ``.py`` files (relative path and content).
:meth:`theorylab.config.RunConfig.key` adds the fingerprints of the plugins whose names occur in the configuration
(:func:`fingerprints_in`), so editing a plugin's kernel or testbed invalidates its cached runs and leaves every
built-in run's key as it was; the validation journal (:mod:`theorylab.journal`) is stamped with the fingerprints
of all loaded plugins.

**Workers.**  :func:`given` returns the ``--plugin`` arguments of this process (paths made absolute); parallel
validation passes them to every dask task, which loads them (:func:`load_given`) before it looks its claim up.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import keyword
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable

from theorylab import registry

GROUP = "theorylab.plugins"
RESERVED = ("theorylab", "testbeds", "validations", "figures")  # the built-in packages' names


@dataclass(frozen=True)
class Plugin:
    namespace: str  # its top-level module name; every name it registers starts with it
    origin: str  # where it came from: a path, a module name, or "entry point NAME = VALUE"
    source: Path  # the folder or file its fingerprint hashes
    fingerprint: str

    @property
    def registered(self) -> dict[str, list[str]]:
        """Kind -> the names it registered."""
        return registry.owned(self.namespace)


_LOADED: dict[str, Plugin] = {}
_GIVEN: list[str] = []  # --plugin arguments of this process, as :func:`load_given` resolved them


def check_namespace(name: str, what: str = "a plugin's namespace") -> str:
    """``name`` if it can name a plugin: a Python identifier, not a keyword, not a built-in package; else a
    ValueError that says why."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{what} must be a Python identifier (letters, digits, underscores; not a keyword); "
                         f"got {name!r}")
    if name in RESERVED:
        raise ValueError(f"{what} {name!r} is one of theorylab's own packages {RESERVED}; choose another name")
    return name


def _skipped(folder: str) -> bool:
    """A folder that holds no source of the plugin: hidden, a cache, or what building or installing it left."""
    return folder.startswith(".") or folder in ("__pycache__", "build", "dist") or folder.endswith(".egg-info")


def source_fingerprint(source: Path) -> str:
    """SHA-256 (first 16 hex digits) of the ``.py`` files of a plugin folder (relative path and content; hidden,
    cache and build folders skipped), or of a single module file."""
    source = Path(source)
    files = [source] if source.is_file() else sorted(
        p for p in source.rglob("*.py") if not any(_skipped(part) for part in p.relative_to(source).parts[:-1]))
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(source.parent if source.is_file() else source).as_posix()}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def loaded() -> dict[str, Plugin]:
    """Namespace -> every plugin loaded in this process (installed and given)."""
    return dict(_LOADED)


def given() -> tuple[str, ...]:
    """The ``--plugin`` arguments this process loaded (folders and files as absolute paths), for dask workers."""
    return tuple(_GIVEN)


def fingerprints() -> dict[str, str]:
    """Namespace -> fingerprint of every loaded plugin."""
    return {ns: p.fingerprint for ns, p in sorted(_LOADED.items())}


def fingerprints_in(value: Any) -> dict[str, str]:
    """Namespace -> fingerprint of each loaded plugin named by a string inside ``value`` (nested dicts and lists,
    e.g. a run configuration): the namespace itself or a name that starts with ``namespace + "."``."""
    if not _LOADED:
        return {}
    found: dict[str, str] = {}

    def visit(v: Any) -> None:
        if isinstance(v, dict):
            for item in v.values():
                visit(item)
        elif isinstance(v, (list, tuple)):
            for item in v:
                visit(item)
        elif isinstance(v, str):
            plugin = _LOADED.get(v.split(".")[0])
            if plugin is not None:
                found[plugin.namespace] = plugin.fingerprint

    visit(value)
    return dict(sorted(found.items()))


def _forget_modules(namespace: str) -> None:
    for name in [n for n in sys.modules if n == namespace or n.startswith(namespace + ".")]:
        del sys.modules[name]


def _import_tree(namespace: str, origin: str, source: Path, import_root) -> Plugin:
    """Import a plugin (``import_root()`` returns its top module) and all its submodules under its namespace's
    ownership; record it.  A failure removes its registrations and modules."""
    registry.load_all()  # built-ins first, so that a clash names the plugin as the newcomer
    if namespace in _LOADED:
        known = _LOADED[namespace]
        if known.source == source:
            return known
        raise ValueError(f"plugin {namespace!r} from {origin} clashes with plugin {namespace!r} already loaded from "
                         f"{known.origin}: two plugins cannot share a namespace")
    try:
        with registry.owned_by(namespace, origin):
            module = import_root()
            if hasattr(module, "__path__"):
                for info in pkgutil.walk_packages(module.__path__, namespace + "."):
                    importlib.import_module(info.name)
        if not registry.owned(namespace):
            raise ValueError(f"plugin {namespace!r} ({origin}) registers nothing: decorate its claims, kernels, "
                             "testbeds, participation processes or figures with theorylab's @claim / @register, "
                             f"with names that start with {namespace + '.'!r}")
    except BaseException:
        registry.forget(namespace)
        _forget_modules(namespace)
        raise
    plugin = Plugin(namespace, origin, source, source_fingerprint(source))
    _LOADED[namespace] = plugin
    return plugin


def _taken(namespace: str, origin: str, file: Path | None) -> None:
    """A ValueError when ``namespace`` is already a module of this process from somewhere else than ``file``."""
    other = sys.modules.get(namespace)
    if other is None or namespace in _LOADED:
        return
    where = getattr(other, "__file__", None) or "built in"
    if file is None or where == "built in" or Path(where).resolve() != file.resolve():
        raise ValueError(f"plugin {origin}: its namespace {namespace!r} is already the module {namespace!r} from "
                         f"{where}; rename the plugin")
    raise ValueError(f"plugin {origin}: the module {namespace!r} ({where}) was imported before theorylab loaded it "
                     "as a plugin: it is no plugin, or load it with --plugin / theorylab.plugins.load before importing "
                     "it")


def load_path(path: str | Path) -> Plugin:
    """Load the plugin in the folder ``path`` (a package: it holds ``__init__.py``) or in the module file ``path``
    (``NAME.py``), under the namespace of its folder or file name."""
    path = Path(path).expanduser().resolve()
    if not path.exists():
        raise ValueError(f"plugin path {path} does not exist")
    if path.is_dir():
        init = path / "__init__.py"
        if not init.is_file():
            raise ValueError(f"plugin folder {path} holds no __init__.py: a plugin folder is a Python package "
                             "(`theorylab new NAME` writes one)")
        namespace, locations = path.name, [str(path)]
    elif path.suffix == ".py":
        init, namespace, locations = path, path.stem, None
    else:
        raise ValueError(f"plugin path {path} is neither a folder nor a .py file")
    check_namespace(namespace, f"plugin {path}: its name")
    if namespace in _LOADED and _LOADED[namespace].source == path:
        return _LOADED[namespace]
    _taken(namespace, str(path), init)

    def import_root() -> ModuleType:
        spec = importlib.util.spec_from_file_location(namespace, init, submodule_search_locations=locations)
        module = importlib.util.module_from_spec(spec)
        sys.modules[namespace] = module
        spec.loader.exec_module(module)
        return module

    return _import_tree(namespace, str(path), path, import_root)


def load_module(name: str, origin: str | None = None) -> Plugin:
    """Load the plugin that is the importable top-level module ``name``."""
    check_namespace(name, "a plugin module's name")
    if name in _LOADED:
        return _LOADED[name]
    found = importlib.util.find_spec(name)
    if found is None or found.origin is None:
        raise ValueError(f"plugin {name!r} is neither a path that exists nor an importable module")
    file = Path(found.origin).resolve()
    _taken(name, origin or name, file)
    source = file.parent if found.submodule_search_locations else file
    return _import_tree(name, origin or name, source, lambda: importlib.import_module(name))


def _is_path(text: str) -> bool:
    return Path(text).expanduser().exists() or "/" in text or "\\" in text or text.endswith(".py")


def load(spec: str | Path) -> Plugin:
    """Load the plugin that ``--plugin spec`` names: a folder or ``.py`` file when ``spec`` is a path that exists
    or looks like one (has a separator or ends in ``.py``), else an importable module."""
    text = str(spec)
    if not text.strip():
        raise ValueError("--plugin needs a plugin folder, a .py file or a module name; got an empty string")
    if _is_path(text):
        return load_path(text)
    if not text.isidentifier():
        raise ValueError(f"--plugin {text!r}: not an existing path, nor a module name")
    return load_module(text)


def load_given(specs: Iterable[str | Path]) -> list[Plugin]:
    """Load every ``--plugin`` argument in order (each once) and remember them for dask workers (:func:`given`)."""
    plugins = []
    for spec in specs:
        plugin = load(spec)
        resolved = str(plugin.source) if _is_path(str(spec)) else str(spec)
        if resolved not in _GIVEN:
            _GIVEN.append(resolved)
        plugins.append(plugin)
    return plugins


def load_entry_points() -> list[Plugin]:
    """Load the plugins that installed distributions declare in the entry-point group :data:`GROUP` (each value
    a top-level module, ``mylemma = "mylemma"``)."""
    from importlib.metadata import entry_points

    plugins = []
    for ep in entry_points(group=GROUP):
        module = ep.module
        if "." in module:
            raise ValueError(f"entry point {ep.name} = {ep.value} of group {GROUP!r}: the value must be the plugin's "
                             "top-level module, e.g. mylemma")
        plugins.append(load_module(module, f"entry point {ep.name} = {ep.value}"))
    return plugins
