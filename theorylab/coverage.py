"""How far the claims cover each source work: its digest's catalogued checks, its algorithms, its figures and tables.

Each work ships a **catalogue**, a JSON file that its package registers with
:func:`theorylab.sources.register_paper` (``catalogue=``; the built-in works keep theirs in
``validations/<paper>/catalogue.json``).  It lists what the work's digest in ``shared/spec/`` asks of the toolkit —
the numbered validation checks of 000_fedawe.md §8, 001_thesis_ch1-3.md §8 and 001_thesis_ch4-6.md §6, 002_afga.md
§5, 003_performative_fl.md §8 and 004_masfl.md §5.2 — with, per entry:

* ``checks``: ``id`` (as the digest numbers it), a one-line ``title``, optionally the ``digest`` file and section (else
  the catalogue's ``digest``) and ``status: "n/a"`` with ``why`` for a check that has nothing of the work to test; a
  check that claims test only in part needs ``why`` too (what they leave out, and why it cannot be run here);
* ``algorithms``: the work's algorithms and baselines, each with its registered ``kernel`` (``theorylab list
  algorithm``) and a ``spec`` of parameters that selects the variant, or the engine ``module`` that implements it when
  it is no kernel, or only ``why`` when nothing does;
* ``figures``: the figures and result tables the work prints, each with the ``recipes`` that draw it (``theorylab
  list figure``) and the ``claims`` that test its numbers; ``stand_in`` (``dataset``, ``model``, ``scale``: what
  differs from the paper) marks a substitution, ``status: "n/a"`` with ``why`` a figure with no data.

A claim cites the checks it tests: ``@claim(..., checks=("V8",), partial=("V9",))`` (:func:`theorylab.claims.claim`).
The status of a catalogued check is

* **covered** — at least one claim cites it in ``checks``;
* **partial** — claims cite it only in ``partial``: each tests a part of what the check asks (some of its items, or
  its ordering on a stand-in dataset, model or scale), so the check as the digest states it is not yet run;
* **missing** — no claim cites it;
* **n/a** — the catalogue says why the work offers nothing to check (e.g. 003 V19: the paper has no CNN task).

A figure or table is *n/a* when the catalogue says so, *missing* when no recipe and no claim reproduce it, a
*stand-in* when its entry names a substitution and *faithful* otherwise (the work's own setting, up to the choices it
leaves open).  An algorithm has a *kernel*, an engine *module*, or *none*.

:func:`cover` is pure: it takes the catalogue, the claims, the figure recipes and a spec checker, and returns a
:class:`Coverage` whose ``problems`` name every inconsistency — a claim citing an id the catalogue lacks, an n/a check
that is cited, an unknown recipe, claim or kernel, a spec the kernel refuses, a digest the work does not declare, a
recipe whose summary calls it a stand-in or an analogue listed as faithful.  :func:`collect` reads the registry;
:func:`markdown` and :func:`as_json` render what ``theorylab coverage`` prints.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

CHECK_STATUSES = ("covered", "partial", "missing", "n/a")
FIGURE_STATUSES = ("faithful", "stand-in", "missing", "n/a")
ALGORITHM_STATUSES = ("kernel", "module", "none")
STAND_IN_WORDS = re.compile(r"stand-in|analogue", re.IGNORECASE)  # how a recipe's summary says it is not faithful
KEYS = {"checks": {"id", "title", "digest", "status", "why"},
        "algorithms": {"name", "kernel", "spec", "module", "note", "why"},
        "figures": {"name", "what", "recipes", "claims", "stand_in", "note", "status", "why"}}


@dataclass(frozen=True)
class CheckRow:
    id: str
    title: str
    digest: str
    status: str
    claims: tuple[str, ...] = ()  # claims that cite it in ``checks``
    partial: tuple[str, ...] = ()  # claims that cite it in ``partial``
    why: str = ""


@dataclass(frozen=True)
class AlgorithmRow:
    name: str
    status: str  # ALGORITHM_STATUSES
    kernel: str = ""
    spec: Mapping[str, Any] = field(default_factory=dict)
    module: str = ""
    summary: str = ""  # the kernel's registry summary
    note: str = ""


@dataclass(frozen=True)
class FigureRow:
    name: str
    what: str
    status: str  # FIGURE_STATUSES
    recipes: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()
    note: str = ""


@dataclass
class Coverage:
    paper: str
    title: str
    checks: list[CheckRow]
    algorithms: list[AlgorithmRow]
    figures: list[FigureRow]
    uncited: list[str]  # the work's claims that cite no check
    own_recipes: list[str]  # the work's recipes (name prefix ``paper-``) drawing no catalogued figure
    problems: list[str]
    n_claims: int = 0  # the work's claims

    def totals(self) -> dict:
        """Counts per status: checks, algorithms, figures and tables, and the claims (all, citing no check)."""
        def count(rows, statuses):
            return {"total": len(rows), **{s: sum(r.status == s for r in rows) for s in statuses}}
        return {"checks": count(self.checks, CHECK_STATUSES), "algorithms": count(self.algorithms, ALGORITHM_STATUSES),
                "figures": count(self.figures, FIGURE_STATUSES),
                "claims": {"total": self.n_claims, "citing no check": len(self.uncited)}}


def load(path: Path | str) -> dict:
    """A catalogue file, checked for its shape (:func:`shape_problems`); a ValueError names the file and the fault."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"catalogue {path}: {err}") from None
    faults = shape_problems(raw)
    if faults:
        raise ValueError(f"catalogue {path}: " + "; ".join(faults))
    return raw


def shape_problems(raw: Any) -> list[str]:
    """What is wrong with a catalogue's structure: its lists, their keys, unique check ids, known statuses."""
    if not isinstance(raw, dict):
        return ["a catalogue is a JSON object"]
    faults = []
    for section, keys in KEYS.items():
        rows = raw.get(section, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            faults.append(f"{section} must be a list of objects")
            continue
        for row in rows:
            label = row.get("id", row.get("name"))
            if not isinstance(label, str) or not label:
                faults.append(f"a row of {section} has no {'id' if section == 'checks' else 'name'}")
            if set(row) - keys:
                faults.append(f"{section} {label!r}: unknown keys {sorted(set(row) - keys)}")
            if "status" in row and (row["status"] != "n/a" or not row.get("why")):
                faults.append(f"{section} {label!r}: the only status is 'n/a', and it needs `why`")
    ids = [row.get("id") for row in raw.get("checks", []) if isinstance(row, dict)]
    faults += [f"check id {i!r} is listed twice" for i in sorted({i for i in ids if ids.count(i) > 1}, key=str)]
    if not faults and any(not row.get("title") for row in raw.get("checks", [])):
        faults.append("every check needs a title")
    return faults


def cited(claim) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The check ids a claim cites, fully and in part (none for objects without the fields)."""
    return tuple(getattr(claim, "checks", ()) or ()), tuple(getattr(claim, "partial", ()) or ())


def cover(paper: str, catalogue: dict, claims: Mapping[str, Any], recipes: Mapping[str, str] | None = None,
          kernels: Mapping[str, str] | None = None, spec_error: Callable[[str, dict], str | None] | None = None,
          title: str = "", digests: Iterable[str] = ()) -> Coverage:
    """The coverage of work ``paper``: ``claims`` maps claim ids to claims (only those starting with ``paper.``
    count), ``recipes`` figure names to their summaries, ``kernels`` algorithm names to their summaries,
    ``spec_error(kernel, spec)`` says why a kernel refuses a spec (None when it accepts it); ``digests`` are the file
    names the work declares (empty: not checked).  ``None`` for recipes or kernels skips their checks."""
    problems = shape_problems(catalogue)
    if problems:
        return Coverage(paper, title, [], [], [], [], [], problems)
    mine = {name: c for name, c in sorted(claims.items()) if name.split(".")[0] == paper}
    default_digest = catalogue.get("digest", "")
    catalogued = {row["id"]: row for row in catalogue.get("checks", [])}
    full, part = {i: [] for i in catalogued}, {i: [] for i in catalogued}
    for name, c in mine.items():
        checks, partial = cited(c)
        for check_id in (*checks, *partial):
            if check_id not in catalogued:
                problems.append(f"claim {name} cites check {check_id!r}, which the catalogue of {paper} does not list "
                                f"(known: {', '.join(catalogued)})")
        for check_id in checks:
            full.get(check_id, []).append(name)
        for check_id in partial:
            part.get(check_id, []).append(name)
    declared = set(digests)
    rows = []
    for check_id, row in catalogued.items():
        digest = row.get("digest", default_digest)
        if declared and digest.split(" ")[0] not in declared:
            problems.append(f"check {check_id} of {paper}: digest {digest!r} is not one the work declares "
                            f"{sorted(declared)}")
        if row.get("status") == "n/a":
            status = "n/a"
            if full[check_id] or part[check_id]:
                problems.append(f"check {check_id} of {paper} is catalogued n/a but cited by "
                                f"{', '.join(full[check_id] + part[check_id])}")
        else:
            status = "covered" if full[check_id] else "partial" if part[check_id] else "missing"
            if status == "partial" and not row.get("why"):
                problems.append(f"check {check_id} of {paper} is only partly tested: its catalogue entry needs `why` "
                                "(what the claims leave out, and why it cannot be run here)")
        rows.append(CheckRow(check_id, row["title"], digest, status, tuple(full[check_id]), tuple(part[check_id]),
                             row.get("why", "")))
    algorithms = [_algorithm(row, kernels, spec_error, paper, problems) for row in catalogue.get("algorithms", [])]
    figures = [_figure(row, recipes, mine, paper, problems) for row in catalogue.get("figures", [])]
    drawn = {r for f in figures for r in f.recipes}
    own = sorted(r for r in (recipes or {}) if r.startswith(paper + "-") and r not in drawn)
    uncited = [name for name, c in mine.items() if not any(cited(c))]
    return Coverage(paper, title, rows, algorithms, figures, uncited, own, problems, n_claims=len(mine))


def _algorithm(row: dict, kernels, spec_error, paper: str, problems: list[str]) -> AlgorithmRow:
    kernel, spec, module = row.get("kernel", ""), dict(row.get("spec", {})), row.get("module", "")
    note = row.get("note", row.get("why", ""))
    if kernel:
        if kernels is not None and kernel not in kernels:
            problems.append(f"algorithm {row['name']!r} of {paper}: no kernel {kernel!r} is registered")
        elif spec_error is not None and (error := spec_error(kernel, spec)):
            problems.append(f"algorithm {row['name']!r} of {paper}: kernel {kernel!r} refuses {spec}: {error}")
        return AlgorithmRow(row["name"], "kernel", kernel, spec, summary=(kernels or {}).get(kernel, ""), note=note)
    if module:
        if importlib.util.find_spec(module) is None:
            problems.append(f"algorithm {row['name']!r} of {paper}: no module {module!r}")
        return AlgorithmRow(row["name"], "module", module=module, note=note)
    return AlgorithmRow(row["name"], "none", note=note)


def _figure(row: dict, recipes, mine: Mapping[str, Any], paper: str, problems: list[str]) -> FigureRow:
    names, tested = tuple(row.get("recipes", ())), tuple(row.get("claims", ()))
    stand_in = row.get("stand_in") or {}
    if recipes is not None:
        problems += [f"{row['name']} of {paper}: no recipe {r!r} is registered" for r in names if r not in recipes]
    problems += [f"{row['name']} of {paper}: no claim {c!r} of this work is registered"
                 for c in tested if c not in mine]
    if row.get("status") == "n/a":
        status = "n/a"
        if names or tested:
            problems.append(f"{row['name']} of {paper} is catalogued n/a but lists recipes or claims")
    elif not names and not tested:
        status = "missing"
    else:
        status = "stand-in" if stand_in else "faithful"
        if not stand_in:
            problems += [f"{row['name']} of {paper} is listed as faithful, but recipe {r!r} says: {recipes[r]}"
                         for r in names if recipes and r in recipes and STAND_IN_WORDS.search(recipes[r])]
    parts = [f"{key}: {stand_in[key]}" for key in ("dataset", "model", "scale") if stand_in.get(key)]
    note = "; ".join(parts + [text for text in (row.get("note", ""), row.get("why", "")) if text])
    return FigureRow(row["name"], row.get("what", ""), status, names, tested, note)


def collect(papers: Iterable[str] = ()) -> list[Coverage]:
    """The coverage of the registered works that have a catalogue (``papers``: these prefixes only; a named work
    without a catalogue is a ValueError)."""
    from theorylab.registry import build, entries
    from theorylab.sources import papers as registered

    works = registered()
    chosen = list(papers) or [name for name, p in works.items() if p.catalogue is not None]
    unknown = [name for name in chosen if name not in works]
    if unknown:
        raise ValueError(f"no source work {unknown}; known: {', '.join(works)}")
    bare = [name for name in chosen if works[name].catalogue is None]
    if bare:
        raise ValueError(f"source work {bare} has no catalogue (register_paper(..., catalogue=PATH))")

    def spec_error(kernel: str, spec: dict) -> str | None:
        try:
            build("algorithm", {"name": kernel, **spec})
        except (ValueError, TypeError) as err:
            return str(err)
        return None

    claims = {name: e.obj for name, e in entries("claim").items()}
    recipes = {name: e.summary for name, e in entries("figure").items()}
    kernels = {name: e.summary for name, e in entries("algorithm").items()}
    return [cover(name, load(works[name].catalogue), claims, recipes, kernels, spec_error, works[name].title,
                  works[name].digests) for name in chosen]


def grand_total(coverages: Iterable[Coverage]) -> dict:
    """The per-status counts summed over works."""
    total: dict = {}
    for cov in coverages:
        for part, counts in cov.totals().items():
            for key, value in counts.items():
                total.setdefault(part, {}).setdefault(key, 0)
                total[part][key] += value
    return total


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]


def _counts(counts: dict, statuses: tuple[str, ...]) -> str:
    return ", ".join(f"{counts[s]} {s}" for s in statuses)


def summary_rows(coverages: list[Coverage]) -> list[list[Any]]:
    """One row per work and the total: checks by status, algorithms (with a kernel), figures and tables by status."""
    rows = []
    for label, t in [*((c.paper, c.totals()) for c in coverages), ("**all**", grand_total(coverages))]:
        c, a, f = t["checks"], t["algorithms"], t["figures"]
        rows.append([label, c["total"], c["covered"], c["partial"], c["missing"], c["n/a"],
                     f"{a['total']} ({a['kernel']} kernel, {a['module']} module, {a['none']} none)",
                     f"{f['total']} ({f['faithful']} faithful, {f['stand-in']} stand-in, {f['missing']} missing, "
                     f"{f['n/a']} n/a)"])
    return rows


def markdown(coverages: list[Coverage]) -> str:
    """The coverage report: the totals per work, then per work its checks, algorithms, figures and tables."""
    out = ["# Coverage of the source works", "",
           "Per work: each check its digest catalogues and the claims that cite it (*covered*: a claim tests it; "
           "*partial*: claims test only part of it; *missing*: none; *n/a*: nothing of the work to test), each "
           "algorithm with its registered kernel, each figure and result table with its recipes and claims, "
           "faithful or a stand-in (catalogues: `validations/<paper>/catalogue.json`).", ""]
    out += _table(["work", "checks", "covered", "partial", "missing", "n/a", "algorithms", "figures and tables"],
                  summary_rows(coverages))
    for cov in coverages:
        t = cov.totals()
        out += ["", f"## {cov.paper}: {cov.title}" if cov.title else f"## {cov.paper}", ""]
        digests = sorted({row.digest for row in cov.checks})
        out += [f"**Checks** ({'; '.join(digests)}): {t['checks']['total']} — "
                f"{_counts(t['checks'], CHECK_STATUSES)}.", ""]
        out += _table(["check", "title", "status", "claims"],
                      ([r.id, r.title, r.status,
                        "; ".join([*r.claims, *(f"{c} (partial)" for c in r.partial)]) + (
                            f" — {r.why}" if r.why and r.status == "partial" else "") or r.why or "—"]
                       for r in cov.checks))
        out += ["", f"**Algorithms**: {t['algorithms']['total']} — {_counts(t['algorithms'], ALGORITHM_STATUSES)}.", ""]
        out += _table(["algorithm", "registered as", "parameters", "note"],
                      ([a.name, f"`{a.kernel}`" if a.kernel else f"`{a.module}`" if a.module else "—",
                        json.dumps(a.spec, separators=(",", ":")) if a.spec else "", a.note or a.summary]
                       for a in cov.algorithms))
        out += ["", f"**Figures and tables**: {t['figures']['total']} — {_counts(t['figures'], FIGURE_STATUSES)}.", ""]
        out += _table(["figure / table", "shows", "recipes", "claims", "fidelity", "note"],
                      ([f.name, f.what, ", ".join(f.recipes) or "—", ", ".join(f.claims) or "—", f.status, f.note]
                       for f in cov.figures))
        out += ["", f"Claims citing no catalogued check: {len(cov.uncited)} of {cov.n_claims}"
                    + (f" ({', '.join(cov.uncited)})." if cov.uncited else "."),
                f"Recipes of ours beyond the work's figures: {', '.join(cov.own_recipes) or 'none'}."]
        if cov.problems:
            out += ["", "**Problems** (the catalogue or a claim must change):", ""] + [f"* {p}" for p in cov.problems]
    return "\n".join(out) + "\n"


def as_json(coverages: list[Coverage]) -> dict:
    """The report as plain data: per work its totals, rows, uncited claims, own recipes and problems; the total."""
    def rows(items):
        return [dict(vars(item)) for item in items]
    works = [{"paper": c.paper, "title": c.title, "totals": c.totals(), "checks": rows(c.checks),
              "algorithms": rows(c.algorithms), "figures": rows(c.figures), "claims_citing_no_check": c.uncited,
              "own_recipes": c.own_recipes, "problems": c.problems} for c in coverages]
    return {"works": works, "totals": grand_total(coverages)}
