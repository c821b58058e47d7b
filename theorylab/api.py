"""The notebook API: ``theorylab.validate``, ``theorylab.run`` and ``theorylab.figure``, whose results show themselves.

Each returns an object that Jupyter displays (``_repr_html_``) with the same pieces as the HTML report
(:mod:`theorylab.html_report`, one template of claims for both):

* :func:`validate` -> :class:`Results`, a list of :class:`theorylab.claims.Result`: a summary table (claim, verdict,
  deciding check, measured vs theory, basis, interval), the verdict counts and each claim folded; each result alone
  shows its verdict, statement, quote, checks table and figure.  :meth:`Results.to_frame` has one row per check.
* :func:`run` -> :class:`theorylab.trace.Trace`: its configuration and final metric means;
  :meth:`~theorylab.trace.Trace.to_frame` is the long table (replica, round, metric, value).
* :func:`figure` -> :class:`Figure`, a registered figure rendered to PNG (``_repr_png_``, ``_repr_html_``).

``import theorylab`` stays light: the package's ``__getattr__`` imports this module on first use.  Claims and
figures are found through the registry (:func:`theorylab.registry.lookup`), which imports the packages that hold
them by name, so the engine never imports the layers above it.
"""

from __future__ import annotations

import base64
import html
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from theorylab import runner
from theorylab.claims import Context, evaluate, select
from theorylab.config import RunConfig
from theorylab.grid import FIELDS
from theorylab.plugins import load_given
from theorylab.registry import lookup
from theorylab.store import Store
from theorylab.trace import Trace


class Results(list):
    """The results of :func:`validate`: a list of :class:`theorylab.claims.Result` that displays as a table."""

    def __repr__(self) -> str:
        """The terminal table of ``theorylab validate`` (:func:`theorylab.report.table`)."""
        from theorylab.report import table

        return table(self)

    def _repr_html_(self) -> str:
        """Jupyter's display: the summary table, the verdict counts, then each claim folded."""
        from theorylab.html_report import fragment

        return fragment(self)

    def to_frame(self):
        """A pandas DataFrame with one row per check: the claim's id, kind and verdict label, then the check's name,
        role, basis, relation, measured and theory values, interval (``ci_low``, ``ci_high``, ``level``) or
        tolerance, tightness, paired seeds and verdict.  A claim whose code raised has one row, with its error."""
        import pandas as pd

        rows = []
        for r in self:
            claim = {"claim": r.claim.id, "kind": r.claim.kind, "label": r.label}
            if r.evidence is None:
                rows.append({**claim, "verdict": "error", "error": r.error})
                continue
            for c in r.evidence.checks:
                lo, hi = c.ci if c.ci is not None else (None, None)
                rows.append({**claim, "check": c.name, "role": c.role, "basis": c.basis, "relation": c.relation,
                             "measured": c.measured, "theory": c.theory, "ci_low": lo, "ci_high": hi,
                             "level": c.level, "tolerance": c.tolerance, "tightness": c.tightness, "seeds": c.seeds,
                             "verdict": c.verdict})
        return pd.DataFrame(rows)


@dataclass(frozen=True)
class Figure:
    """A rendered figure: its registered name, its one-line summary and the PNG file."""

    name: str
    summary: str
    path: Path

    def _repr_png_(self) -> bytes:
        """The PNG's bytes (Jupyter's image display)."""
        return self.path.read_bytes()

    def _repr_html_(self) -> str:
        """The PNG embedded as a base64 ``<img>``, captioned with the figure's name and summary."""
        data = base64.b64encode(self.path.read_bytes()).decode()
        caption = html.escape(f"{self.name}: {self.summary}")
        return (f'<figure><img alt="{html.escape(self.name)}" src="data:image/png;base64,{data}" '
                f'style="max-width: 100%"><figcaption>{caption}</figcaption></figure>')


def _store(store: Store | str | Path | None) -> Store | None:
    return store if store is None or isinstance(store, Store) else Store(store)


def _folder(out: str | Path | None) -> Path:
    """``out``, or a new temporary folder (kept, so that the returned objects can still show their figures)."""
    return Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="theorylab-"))


def validate(*ids: str, quick: bool = True, seed: int = 0, store: Store | str | Path | None = None,
             out: str | Path | None = None, plugins: Iterable[str | Path] = ()) -> Results:
    """Run the claims whose id equals or starts with one of ``ids`` (all claims when none is given), serially, as
    ``theorylab validate`` does, and return their :class:`Results` in registry order.

    ``quick`` picks quick mode (the default) or full mode; ``store`` (a :class:`~theorylab.store.Store` or a path)
    caches the runs inside the claims, None runs them afresh; figures go to ``out/figures`` (a new temporary folder
    when ``out`` is None); ``plugins`` are loaded first, as ``--plugin`` does.  An id that matches no claim is a
    ValueError."""
    from theorylab.parallel import one_blas_thread

    load_given(plugins)
    claims = select(ids)
    ctx = Context(quick=quick, seed=seed, store=_store(store), figure_dir=_folder(out) / "figures", progress=False)
    with one_blas_thread():  # as the command line and its workers: numbers independent of the BLAS thread count
        return Results(evaluate(c, ctx) for c in claims)


def run(config: RunConfig | dict, store: Store | str | Path | None = None) -> Trace:
    """Run ``config`` (a :class:`~theorylab.config.RunConfig`, or a dict of its fields) and return its
    :class:`~theorylab.trace.Trace`, read from ``store`` when it holds the run (and stored there otherwise).  A dict
    with a field that a run configuration does not have is a ValueError naming it."""
    if isinstance(config, dict):
        unknown = sorted(set(config) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown run field(s) {unknown}; expected some of {list(FIELDS)}")
        config = RunConfig(**config)
    return runner.run(config, _store(store), progress_bar=False)


def figure(name: str, quick: bool = True, seed: int = 0, store: Store | str | Path | None = None,
           out: str | Path | None = None, plugins: Iterable[str | Path] = ()) -> Figure:
    """Render the registered figure ``name`` (``theorylab list figure``) as ``theorylab figure`` does and return it
    as a :class:`Figure`; the PNG goes to ``out`` (a new temporary folder when None), the runs behind it are cached
    in ``store`` when one is given.  An unknown name is a ValueError listing the known ones."""
    load_given(plugins)
    entry = lookup("figure", name)
    ctx = Context(quick=quick, seed=seed, store=_store(store), figure_dir=_folder(out), progress=False)
    return Figure(name, entry.summary, Path(entry.obj(ctx)))

