"""Run configurations: plain data, hashable into a cache key.

A :class:`RunConfig` names a testbed, a participation process and an algorithm
by their specs (``{"name": ..., **params}``, see :mod:`theorylab.registry`) plus the
run's size; optionally a lossy ``channel`` and an asynchronous ``clock`` (``None``: a lossless, synchronous run;
a ``None`` field is left out of the config's dict, so adding these fields changed no existing config's JSON).  Its key hashes the canonical JSON of the config together with the
package version and a fingerprint of the engine and testbed sources, so a code
change never serves a stale cached trace; a configuration that names a plugin's component (a name in the plugin's
namespace) also hashes that plugin's source fingerprint (:mod:`theorylab.plugins`), so editing the plugin
invalidates its runs, and the keys of configurations that name no plugin are unchanged.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from typing import Any

import theorylab
from theorylab.plugins import fingerprints_in
from theorylab.siblings import source_files
from theorylab.validation import integer

_FINGERPRINTED = ("theorylab", "testbeds")
_OPTIONAL = ("channel", "clock")  # world models beyond participation; omitted from the dict when None


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 over the sources that determine a trace (engine and testbeds)."""
    h = hashlib.sha256()
    for name, path in source_files(_FINGERPRINTED):
        h.update(name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_jsonable)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON-serialisable in a config: {value!r}")


@dataclasses.dataclass(frozen=True)
class RunConfig:
    problem: dict
    participation: dict
    algorithm: dict
    rounds: int
    replicas: int = 1
    seed: int = 0
    every: int = 1
    device: str = "cpu"
    dtype: str = "float64"
    channel: dict | None = None
    clock: dict | None = None

    def __post_init__(self):
        for name in ("rounds", "replicas", "every", "seed"):  # stored as int (3.0 and 1e300 are integers too)
            low = 1 if name in ("replicas", "every") else 0  # rounds and seed: from 0, as the CLI takes them
            object.__setattr__(self, name, integer(name, getattr(self, name), low))
        for name in ("problem", "participation", "algorithm", *_OPTIONAL):
            spec = getattr(self, name)
            absent = name in _OPTIONAL and spec is None
            if not absent and not (isinstance(spec, dict) and isinstance(spec.get("name"), str)):
                raise ValueError(f"{name} must be a spec dict with a 'name' string; got {spec!r}")
        if self.dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32'; got {self.dtype!r}")

    def as_dict(self) -> dict:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # JSON below copies them
        return json.loads(canonical_json({k: v for k, v in fields.items() if not (k in _OPTIONAL and v is None)}))

    def key(self) -> str:
        config = self.as_dict()
        parts = {"config": config, "version": theorylab.__version__, "code": code_fingerprint()}
        plugins = fingerprints_in(config)
        if plugins:  # left out otherwise, so that a configuration of built-ins keeps its key
            parts["plugins"] = plugins
        return hashlib.sha256(canonical_json(parts).encode()).hexdigest()

    def replace(self, **changes) -> "RunConfig":
        return dataclasses.replace(self, **changes)
