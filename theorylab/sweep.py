r"""Sweeps: a grid's cells run as dask tasks, each result stored as soon as it finishes, then a tidy table and a figure.

:func:`run_cells` reads back every cell whose config key (:meth:`~theorylab.config.RunConfig.key`, a hash of the
configuration and the code) is already in the store and submits the others, one dask task per distinct key, each
calling the runner (:func:`theorylab.runner.run`) on a worker with the torch threads of
:func:`theorylab.parallel.thread_plan`.  This (client) process writes each trace into the SQLite store as its
task finishes, one transaction per cell (:class:`~theorylab.store.Store`), so

* a sweep killed at any moment (``kill -9`` of the client or of a worker) keeps every cell written before, and
  running it again computes only the missing cells;
* two sweeps on one store at once are safe: SQLite serialises their writes, and a cell that both compute is
  stored once under its key (``INSERT OR REPLACE``; a run is a function of its config, so both traces agree).
  On one cluster they also share in-flight cells: a task's dask key is ``cell-<config key>``.

:func:`table` is tidy: one row per (cell, metric) with the cell's axis values, the final evaluation round, the mean
over replicas and its 95% Student-t interval (:func:`theorylab.trace.mean_ci`; empty with one replica), the
replica count and how many diverged; :func:`write_csv` writes it as CSV and :func:`write_parquet` as Parquet
(read back with ``pandas.read_parquet``).  :func:`draw` plots the grid's metric against its first axis, one line per
combination of the other axes.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager, Sequence

import numpy as np

from theorylab.files import replacing
from theorylab.grid import Cell, Grid
from theorylab.parallel import PATIENCE_S, NoWorkers, completed, sized, thread_plan
from theorylab.progress import progress
from theorylab.runner import run
from theorylab.store import Store
from theorylab.trace import Trace, mean_ci

LEVEL = 0.95


@dataclass
class Outcome:
    """What a sweep did: how many distinct cells it found in the store and computed, and the ones that failed."""

    cells: int
    cached: int = 0
    computed: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # config key -> error


def _simulate(config) -> bytes:
    """Worker side: one cell through the runner (no store: the client writes it)."""
    return run(config, None, progress_bar=False).to_bytes()


def run_cells(cells: Sequence[Cell], store: Store, client: Callable[[], ContextManager],
              progress_bar: bool | None = None, patience: float = PATIENCE_S) -> Outcome:
    """Compute the cells missing from ``store`` on the dask client that ``client()`` opens (only when some are
    missing) and store each as it finishes; see the module docstring.  When the cluster has had no worker for
    ``patience`` seconds the cells still pending are reported as failed, and those finished stay stored."""
    configs = {cell.config.key(): cell.config for cell in cells}
    todo = {key: config for key, config in configs.items() if key not in store}
    outcome = Outcome(len(configs), cached=len(configs) - len(todo))
    if not todo:
        return outcome
    with client() as dask:
        plan = thread_plan(dask)
        futures = {dask.submit(sized, plan, _simulate, config, key=f"cell-{key}"): key for key, config in todo.items()}
        bar = progress(completed(dask, list(futures), patience), progress_bar, desc="cells", unit="cell",
                       total=len(configs), initial=outcome.cached)
        try:
            for future in bar:
                key = futures.pop(future)
                try:
                    store.put(key, Trace.from_bytes(future.result()))
                    outcome.computed += 1
                except Exception as err:  # a cell that cannot run is reported, the others go on
                    outcome.failed[key] = f"{type(err).__name__}: {err}"
                future.release()
        except NoWorkers as err:
            dask.cancel(err.pending)
            outcome.failed.update({key: str(err) for key in futures.values()})
    return outcome


def _plain(value):
    """An axis value as a table cell: scalars as they are, specs and lists as compact JSON."""
    return value if isinstance(value, (str, int, float, bool)) or value is None else json.dumps(value, sort_keys=True)


def check_metric(grid: Grid, cell: Cell, store: Store) -> None:
    """The grid's metric is one its runs record, before the sweep computes anything: read from the first cell's
    stored trace, else from a one-round, one-replica run of it (a second or so)."""
    trace = store.get(cell.config.key())
    if trace is None:
        trace = run(cell.config.replace(rounds=1, replicas=1, every=1), None, progress_bar=False)
    if grid.metric not in trace.metrics:
        raise ValueError(f"grid metric {grid.metric!r} is not recorded by the runs of this grid; they record: "
                         f"{', '.join(sorted(trace.metrics))}")


def table(grid: Grid, cells: Sequence[Cell], store: Store) -> list[dict]:
    """Tidy rows, one per (cell, metric), in cell order (cells missing from the store are left out)."""
    rows = []
    for cell in cells:
        key = cell.config.key()
        trace = store.get(key)
        if trace is None:
            continue
        axes = {axis: _plain(cell.values[axis]) for axis in grid.axes}
        for metric, samples in trace.metrics.items():
            final = samples[:, -1]
            lo, hi = mean_ci(final, LEVEL)
            rows.append({**axes, "metric": metric, "round": int(trace.rounds[-1]), "mean": float(final.mean()),
                         "ci_low": float(lo), "ci_high": float(hi), "replicas": trace.replicas,
                         "diverged": int((trace.diverged_at >= 0).sum()), "key": key})
    return rows


def write_csv(rows: Sequence[dict], path: str | Path) -> Path:
    """The tidy table, written atomically (:mod:`theorylab.files`)."""
    with replacing(path) as tmp, tmp.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["metric"])
        writer.writeheader()
        writer.writerows(rows)
    return Path(path)


def write_parquet(rows: Sequence[dict], path: str | Path) -> Path | None:
    """The tidy table as Parquet (pandas and pyarrow), written atomically; returns its path, or None (nothing
    written) when pyarrow is not installed.  A column whose values mix types (an axis of numbers and names) is
    stored as text, as the CSV stores it."""
    if importlib.util.find_spec("pyarrow") is None:
        return None
    import pandas as pd

    frame = pd.DataFrame(list(rows))
    for column in frame.columns:
        if frame[column].dtype == object and len({type(v) for v in frame[column].dropna()}) > 1:
            frame[column] = frame[column].astype(str)
    with replacing(path) as tmp:
        frame.to_parquet(tmp, index=False)
    return Path(path)


def draw(rows: Sequence[dict], grid: Grid, path: str | Path) -> Path:
    """The grid's metric (final mean, 95% interval) against its first axis; one line per other-axes combination."""
    from theorylab.plotting import pyplot, save

    plt = pyplot()
    rows = [r for r in rows if r["metric"] == grid.metric]
    if not rows:
        raise ValueError(f"grid metric {grid.metric!r} is not among the traces' metrics")
    axes = grid.axes
    x_axis, others = (axes[0], axes[1:]) if axes else (None, [])
    xs = list(dict.fromkeys(r[x_axis] for r in rows)) if x_axis else [0]
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
    position = {x: (x if numeric else i) for i, x in enumerate(xs)}
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    lines = {}
    for r in rows:
        lines.setdefault(tuple(r[a] for a in others), []).append(r)
    for label, members in lines.items():
        px = np.array([position[r[x_axis]] if x_axis else 0 for r in members], dtype=float)
        mean = np.array([r["mean"] for r in members])
        err = np.array([[r["mean"] - r["ci_low"], r["ci_high"] - r["mean"]] for r in members]).T
        ax.errorbar(px, mean, yerr=np.nan_to_num(err), marker="o", capsize=2,
                    label=", ".join(f"{a}={v}" for a, v in zip(others, label)) or None)
    if not numeric:
        ax.set_xticks(range(len(xs)), [str(x) for x in xs], rotation=20)
    elif min(xs) > 0 and max(xs) >= 10 * min(xs):
        ax.set_xscale("log")
    if all(r["mean"] > 0 for r in rows):
        ax.set_yscale("log")
    ax.set_xlabel(x_axis or "")
    ax.set_ylabel(f"{grid.metric} at round {rows[0]['round']} (mean, {LEVEL:.0%} CI)")
    if others:
        ax.legend(fontsize=7)
    return save(fig, path)
