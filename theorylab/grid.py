r"""Sweep grids: a base run configuration and axes over any of its fields, expanded into :class:`RunConfig`\ s.

A grid spec is plain data (a JSON or YAML file, see :func:`load`)::

    {"base":    {"problem": {"name": "random_quadratic", "n_clients": 10, "dim": 5},
                 "participation": {"name": "bernoulli", "p": 0.5},
                 "algorithm": {"name": "fedavg", "lr": 0.05}, "rounds": 100, "replicas": 8},
     "product": {"algorithm.name": ["fedavg", "fedawe"], "seed": [0, 1, 2]},
     "zip":     {"algorithm.lr": [0.01, 0.05], "algorithm.local_steps": [10, 2]},
     "metric":  "server.dist2"}

An *axis* is a dotted path into the configuration: a run field (``seed``, ``rounds``, ``replicas``, ...), a
whole component spec (``participation``: a list of specs) or a field inside one (``algorithm.lr``,
``problem.label_swap.fraction``).  The cells are the Cartesian product
:math:`\prod_k V_k \times \prod_g Z_g` of the ``product`` axes :math:`V_k` (in the order given, the last varying
fastest) and the ``zip`` groups :math:`Z_g` (``zip`` is one group or a list of groups; the axes of a group advance
together, so they need equal lengths).  The number of cells is :math:`\prod_k |V_k| \prod_g |Z_g|`.

Every mistake is a ``ValueError`` that names the axis: an empty axis, a zip group of unequal lengths, a path
into a field that does not exist, an unknown component, and — checked for every axis value before anything runs
(:func:`check_values`) — a parameter the component does not take, a value of the wrong type or out of its range, a
device that does not exist.  Each value is checked set alone into the base (a zip group's values together), so the
cost grows with the number of values, not of cells.  A grid of more than :data:`MAX_CELLS` cells is refused before
its cells are built (each cell holds a full configuration: about 5 kB and 0.1 ms).
``metric`` names the trace metric that the sweep's figure draws (default ``server.dist2``).
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path

from theorylab.config import RunConfig
from theorylab.progress import progress
from theorylab.registry import lookup

COMPONENTS = {"problem": "testbed", "participation": "participation", "algorithm": "algorithm",
              "channel": "channel", "clock": "clock"}  # RunConfig field -> registry kind
FIELDS = ("problem", "participation", "algorithm", "rounds", "replicas", "seed", "every", "device", "dtype",
          "channel", "clock")
KEYS = ("base", "product", "zip", "metric")
DEFAULT_METRIC = "server.dist2"
MAX_CELLS = 100_000  # cells a sweep builds at most (--max-cells raises it)


@dataclass(frozen=True)
class Cell:
    """One point of the grid: its axis values (axis path -> value) and its run configuration."""

    values: dict
    config: RunConfig


@dataclass(frozen=True)
class Grid:
    base: dict
    product: tuple[tuple[str, tuple], ...]  # (axis, values) in spec order
    zips: tuple[tuple[tuple[str, tuple], ...], ...]  # groups of (axis, values) of equal lengths
    metric: str = DEFAULT_METRIC

    @property
    def axes(self) -> list[str]:
        return [axis for axis, _ in self.product] + [axis for group in self.zips for axis, _ in group]

    @property
    def size(self) -> int:
        r"""The number of cells, :math:`\prod_k |V_k| \prod_g |Z_g|`, without building them."""
        return math.prod(len(v) for _, v in self.product) * math.prod(len(g[0][1]) for g in self.zips)


def load(path: str | Path) -> dict:
    """Read a grid spec: YAML for ``.yaml``/``.yml`` (PyYAML, installed with dask), JSON otherwise."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"grid file {path} does not exist")
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise ValueError(f"grid file {path} is not valid YAML: {err}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"grid file {path} is not valid JSON ({err}); name a YAML file .yaml or .yml") from None


def _axes(name: str, table) -> tuple[tuple[str, tuple], ...]:
    if not isinstance(table, dict):
        raise ValueError(f"grid {name!r} must map axis paths to lists of values; got {table!r}")
    axes = []
    for axis, values in table.items():
        if not isinstance(values, list):
            raise ValueError(f"axis {axis!r} must be a list of values; got {values!r}")
        if not values:
            raise ValueError(f"axis {axis!r} is empty: give it at least one value")
        axes.append((axis, tuple(values)))
    return tuple(axes)


def parse(spec: dict) -> Grid:
    """Check a grid spec (see the module docstring) and return it as a :class:`Grid`."""
    if not isinstance(spec, dict):
        raise ValueError(f"a grid spec must be a mapping with keys {KEYS}; got {type(spec).__name__}")
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise ValueError(f"unknown grid key(s) {unknown}; expected some of {list(KEYS)}")
    base = spec.get("base", {})
    if not isinstance(base, dict):
        raise ValueError(f"grid 'base' must be a mapping of run fields; got {base!r}")
    if set(base) - set(FIELDS):
        raise ValueError(f"grid 'base': unknown run field(s) {sorted(set(base) - set(FIELDS))}; expected some of "
                         f"{list(FIELDS)}")
    zips = spec.get("zip", [])
    zips = tuple(group for group in (_axes("zip", g) for g in (zips if isinstance(zips, list) else [zips])) if group)
    for group in zips:
        if len({len(values) for _, values in group}) > 1:
            lengths = ", ".join(f"{axis!r} has {len(values)}" for axis, values in group)
            raise ValueError(f"zip axes must have equal lengths: {lengths} values")
    metric = spec.get("metric", DEFAULT_METRIC)
    if not isinstance(metric, str) or "." not in metric:
        raise ValueError(f"grid 'metric' must name a trace metric '<point>.<metric>' (e.g. server.dist2); got {metric!r}")
    grid = Grid(copy.deepcopy(base), _axes("product", spec.get("product", {})), zips, metric)
    twice = sorted({a for a in grid.axes if grid.axes.count(a) > 1})
    if twice:
        raise ValueError(f"axis {twice[0]!r} appears twice in the grid")
    for axis in grid.axes:
        if axis.split(".")[0] not in FIELDS:
            raise ValueError(f"axis {axis!r}: unknown run field {axis.split('.')[0]!r}; expected one of {list(FIELDS)}")
    _check_components(grid)
    check_values(grid)
    return grid


def _check_config(fields: dict, where: str) -> None:
    """The run configuration ``fields`` is one the runner can build: run fields in range, a device torch knows,
    components the registry accepts (the testbed by its parameters only, so no data is loaded; the others are
    built, which is cheap)."""
    from theorylab.registry import build, check
    from theorylab.validation import device

    try:
        config = RunConfig(**fields)
        device(config.device)
        check("testbed", config.problem)
        for field in ("participation", "algorithm", "channel", "clock"):
            if getattr(config, field) is not None:
                build(COMPONENTS[field], getattr(config, field))
    except TypeError as err:
        raise ValueError(f"{where}: {err} (give it in 'base' or as an axis)") from None
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def check_values(grid: Grid) -> None:
    """Every axis value set alone into the base (a zip group's values together) gives a configuration that
    :func:`_check_config` accepts; the error names the axis and the value."""
    if not grid.axes:
        _check_config(copy.deepcopy(grid.base), "base")
    for axis, values in grid.product:
        for value in values:
            fields = copy.deepcopy(grid.base)
            _set(fields, axis, value)
            _check_config(fields, f"axis {axis!r} = {value!r}")
    for group in grid.zips:
        for i in range(len(group[0][1])):
            fields = copy.deepcopy(grid.base)
            for axis, values in sorted(group, key=lambda a: a[0].count(".")):
                _set(fields, axis, values[i])
            _check_config(fields, "zip " + ", ".join(f"{axis!r} = {values[i]!r}" for axis, values in group))


def _check_components(grid: Grid) -> None:
    """Every component name the grid can produce is registered; the error names the axis (or ``base``)."""
    named = set()  # RunConfig fields whose component name an axis sets
    for axis, values in grid.product + tuple(a for group in grid.zips for a in group):
        parts = axis.split(".")
        if parts[0] in COMPONENTS and parts[1:] in ([], ["name"]):
            named.add(parts[0])
            for value in values:
                _known(f"axis {axis!r}", parts[0], {"name": value} if parts[1:] else value)
    for field in COMPONENTS:
        if field not in named and grid.base.get(field) is not None:
            _known("base", field, grid.base[field])


def _known(where: str, field: str, spec) -> None:
    """``spec`` names a registered component of ``field``'s kind, else a ValueError starting with ``where``."""
    name = spec.get("name") if isinstance(spec, dict) else None
    if not isinstance(name, str):
        raise ValueError(f"{where}: a {field} spec needs a 'name' string; got {spec!r}")
    try:
        lookup(COMPONENTS[field], name)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def _set(config: dict, axis: str, value) -> None:
    *path, leaf = axis.split(".")
    node = config
    for i, part in enumerate(path):
        if not isinstance(node.get(part), dict):
            where = ".".join(path[:i + 1])
            raise ValueError(f"axis {axis!r}: the configuration has no spec at {where!r} to set {leaf!r} in")
        node = node[part]
    node[leaf] = copy.deepcopy(value)


def expand(grid: Grid, max_cells: int = MAX_CELLS) -> list[Cell]:
    """The grid's cells in order: product axes (last fastest), then zip groups, as :class:`Cell`\\ s; a grid of
    more than ``max_cells`` cells is refused before any is built."""
    if grid.size > max_cells:
        raise ValueError(f"the grid has {grid.size:,} cells, more than max_cells = {max_cells:,} (about "
                         f"{grid.size * 5 / 1e6:,.0f} GB of configurations to build); split it into smaller grids or "
                         "raise --max-cells")
    dims = [[((axis, v),) for v in values] for axis, values in grid.product]
    dims += [list(zip(*[[(axis, v) for v in values] for axis, values in group])) for group in grid.zips]
    cells = []
    for combo in progress(itertools.product(*dims), None, desc="building cells", unit="cell", total=grid.size):
        values = dict(pair for dim in combo for pair in dim)
        fields = copy.deepcopy(grid.base)
        for axis in sorted(values, key=lambda a: a.count(".")):  # whole specs before fields inside them
            _set(fields, axis, values[axis])
        try:
            config = RunConfig(**fields)
        except TypeError as err:
            raise ValueError(f"grid cell {values}: {err} (give it in 'base' or as an axis)") from None  # missing
        except ValueError as err:
            raise ValueError(f"grid cell {values}: {err}") from None
        cells.append(Cell(values, config))
    return cells
