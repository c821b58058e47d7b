"""The validation report as one self-contained HTML page (Jinja2 template ``theorylab/templates/report.html.j2``).

The page has a summary table (one row per claim with its deciding check's interval or tolerance, sortable by any
column, filterable by paper and verdict; a dozen lines of inline script, and the filters and sort can also be set by
the query string ``?paper=fedawe&verdict=violated&sort=tightness&order=desc``) and, per claim, its source,
statement, every check with measured vs theory, CI or tolerance, tightness, basis and role (and each reading it was
decided under), its quote, defence, notes, deviations, errata and figure (embedded as a base64 PNG, so the page can
be mailed or archived alone). Like the Markdown report (:mod:`theorylab.report`), each summary row shows the claim's
*headline*: for a violated claim the check that failed, not its first check. An *Errata* section at the top lists
the findings as :mod:`theorylab.errata` does.

``theorylab validate`` renders it from its results; ``theorylab report`` re-renders it from a ``claims.json``
(:func:`load_results` rebuilds the results from that file; ``as_dict`` of the rebuilt results equals the file).

The summary table and a claim's section are macros of ``templates/claims.html.j2``, which also show results in a
notebook (:func:`fragment`, the ``_repr_html_`` of :mod:`theorylab.api`'s objects); :func:`trace_fragment` shows
a run's trace.
"""

from __future__ import annotations

import base64
import datetime
import json
import math
from pathlib import Path
from typing import Sequence

import theorylab
from theorylab import errata
from theorylab.checks import BASES, FAMILY_LEVEL, VACUOUS, Check
from theorylab.claims import Claim, Evidence, Result
from theorylab.report import MARK, fmt, mark, reference_line, spread_of, summary
from theorylab.files import write_text
from theorylab.sources import papers

VERDICT_ORDER = ("violated", "error", "inconclusive", "holds")
_NUMERIC = ("tolerance", "level", "tightness")  # Check fields that claims.json may hold as "inf" / "nan" strings


def _number(value):
    return float(value) if isinstance(value, str) and value in ("inf", "-inf", "nan") else value


_TEXT, _NUMBER, _LIST = (str,), (int, float), (list,)
REQUIRED = {"id": _TEXT, "source": _TEXT, "statement": _TEXT, "kind": _TEXT, "expect": _TEXT, "checks": _LIST,
            "error": (str, type(None)), "seconds": _NUMBER}  # each claims.json entry: field -> accepted types
OPTIONAL = {"figure": (str, type(None)), "notes": _LIST, "deviations": _LIST, "errata": _LIST,
            "level": _NUMBER + _TEXT + (type(None),), "because": _TEXT, "quote": _TEXT, "where": _TEXT, "defence": _TEXT,
            "severity": _TEXT}


def _rows(path: Path) -> list[dict]:
    """The entries of a ``claims.json``, or a ValueError naming the file and what is wrong with it (so a report is
    never replaced by an empty or broken one)."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path} is not a claims.json written by theorylab validate ({err}); nothing rendered") \
            from None
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"{path} holds no claims (a claims.json is a non-empty list of claim objects); nothing "
                         "rendered, the existing report is kept")
    for i, d in enumerate(rows):
        if not isinstance(d, dict):
            raise ValueError(f"{path}: entry {i} is a {type(d).__name__}, not a claim object; nothing rendered")
        missing = ", ".join(k for k in REQUIRED if k not in d)
        if missing:
            raise ValueError(f"{path}: entry {i} ({d.get('id', 'no id')}) lacks {missing}; nothing rendered")
        for field, types in (*REQUIRED.items(), *OPTIONAL.items()):
            value = d.get(field, types[0]())
            if not isinstance(value, types) or isinstance(value, bool) or (
                    types is _LIST and not all(isinstance(v, dict if field == "checks" else str) for v in value)):
                raise ValueError(f"{path}: entry {i} ({d['id']!r}): {field} = {value!r} is not what theorylab "
                                 "validate writes; nothing rendered")
    return rows


def _check(path: Path, d: dict, c) -> Check:
    try:
        return Check(**{k: _number(v) if k in _NUMERIC else v for k, v in c.items()})
    except (TypeError, ValueError, AttributeError) as err:
        raise ValueError(f"{path}: a check of {d['id']} is not valid ({err}); nothing rendered") from None


def result_of(d: dict, path: str | Path = "claims.json") -> Result:
    """One result rebuilt from its ``as_dict`` (a claims.json entry or a journal line); ``path`` names the file in
    errors."""
    claim = Claim(d["id"], d["source"], d["statement"], None, d["kind"], d["expect"], d.get("because", ""),
                  d.get("quote", ""), d.get("where", ""), d.get("defence", ""), d.get("severity", ""),
                  d.get("expect_full", ""))
    evidence = None
    if d["error"] is None:
        evidence = Evidence([_check(Path(path), d, c) for c in d["checks"]], d.get("figure"), d.get("notes", []),
                            d.get("deviations", []), d.get("errata", []), _number(d.get("level", FAMILY_LEVEL)),
                            d["kind"])
    return Result(claim, evidence, d["seconds"], d["error"])


def load_results(path: str | Path) -> list[Result]:
    """Results rebuilt from a ``claims.json`` written by ``theorylab validate`` (``as_dict`` of the rebuilt results
    equals the file); a file that is empty, malformed or not a list of claims is a ValueError naming it."""
    path = Path(path)
    return [result_of(d, path) for d in _rows(path)]


def _embedded(figure: str | None, out: Path) -> str | None:
    """The figure as a ``data:`` URI: found where it was written, or under ``out/figures`` (a moved report)."""
    if not figure:
        return None
    for path in (Path(figure), out / "figures" / Path(figure).name, out / Path(figure).name):
        if path.is_file():
            return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()
    return None


def _sort_key(value) -> str:
    """A cell's sort key for the page's script: numbers as numbers, anything else as text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return repr(float(value))
    return "" if value is None else str(value)


def _claim(r: Result, out: Path) -> dict:
    d = r.as_dict()
    head = None if r.evidence is None else r.evidence.headline
    checks = [{**c, "spread": spread_of(c), "mark": MARK[c["verdict"]],
               **{k: fmt(c[k]) for k in ("measured", "theory", "tightness")}} for c in d["checks"]]
    return {
        **d, "anchor": d["id"].replace(".", "-"), "paper": d["id"].split(".")[0], "mark": mark(r.label),
        "cells": {k: fmt(d[k]) for k in ("measured", "theory", "tightness")},
        "spread": "" if head is None else spread_of(head.as_dict()),
        "sort": {k: _sort_key(d[k]) for k in ("tightness", "seconds")},
        "checks": checks, "check_notes": [f"{c['name']}: {c['note']}" for c in d["checks"] if c["note"]],
        "expected": None if r.verdict in (r.claim.expect, "error") else (r.claim.expect, r.claim.because),
        "image": _embedded(d["figure"], out),
    }


def _template(name: str):
    """A template of ``theorylab/templates``, rendered with HTML escaping on."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("theorylab", "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    return env.get_template(name)


def render(results: Sequence[Result], out: str | Path, mode: str | None = None, seed: int | None = None) -> str:
    """The page for ``results``; figures are read relative to the working directory or under ``out/figures``."""
    claims = [_claim(r, Path(out)) for r in results]
    present = {c["verdict"] for c in claims}
    found = errata.sections(results, mode)
    return _template("report.html.j2").render(
        errata=found, errata_count=sum(len(g["findings"]) for g in found.values()),
        titles={k: p.title for k, p in papers().items()}, witness=errata.witness,
        command=lambda d: errata.command(d, mode),
        claims=claims, papers=sorted({c["paper"] for c in claims}),
        verdicts=[v for v in VERDICT_ORDER if v in present], summary=summary(results), bases=BASES, vacuous=VACUOUS,
        version=theorylab.__version__, mode=mode, seed=seed, reference=reference_line(),
        stamp=datetime.datetime.now().strftime("%Y-%m-%d %H:%M"))


def write(results: Sequence[Result], out: str | Path, mode: str | None = None, seed: int | None = None) -> Path:
    """Write ``out/report.html`` and return its path."""
    return write_text(Path(out) / "report.html", render(results, out, mode, seed))


def fragment(results: Sequence[Result], table: bool = True) -> str:
    """An HTML fragment showing ``results`` in a notebook (``_repr_html_``): with ``table``, the summary table (each
    claim's verdict and deciding check with its measured and theory values, basis and interval) and the verdict
    counts, then each claim folded in a ``<details>``; without it, the single claim's section unfolded (statement,
    quote, every check with basis, interval or tolerance, seeds and role, the figure embedded)."""
    return _template("notebook.html.j2").render(claims=[_claim(r, Path.cwd()) for r in results], table=table,
                                                summary=summary(results))


def trace_fragment(trace) -> str:
    """An HTML fragment showing a :class:`~theorylab.trace.Trace` in a notebook: its configuration and, per metric,
    the mean over replicas at the last evaluated round with its 95% interval."""
    from theorylab.trace import mean_ci

    rows = []
    for name, samples in sorted(trace.metrics.items()):
        lo, hi = mean_ci(samples[:, -1])
        rows.append({"metric": name, "mean": fmt(float(samples[:, -1].mean())), "ci": fmt((float(lo), float(hi)))})
    specs = {k: v for k, v in trace.config.items() if isinstance(v, dict)}
    sizes = {k: v for k, v in trace.config.items() if not isinstance(v, dict) and v is not None}
    return _template("trace.html.j2").render(specs=specs, sizes=sizes, rows=rows, trace=trace,
                                             last=int(trace.rounds[-1]),
                                             diverged=int((trace.diverged_at >= 0).sum()))
