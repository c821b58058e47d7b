"""Render claim results as a terminal table, JSON, or a Markdown report.

Every summary row shows the claim's *headline*: the check that decided its verdict (the first violated one,
else the first inconclusive one, else the loosest statement bound).  The closing lines count verdicts, findings by kind
(violated statements, unreproduced numbers, out-of-scope findings, ...), vacuous and not-tight holds, verdicts that
depend on a reading and checks by basis.
"""

from __future__ import annotations

import datetime
import json
import os
from collections import Counter
from pathlib import Path
from typing import Sequence

import theorylab
from theorylab.checks import BASES, VACUOUS, fmt
from theorylab.claims import Result

MARK = {"holds": "holds", "violated": "VIOLATED", "inconclusive": "inconclusive", "error": "ERROR"}
FINDINGS = {"statement": "violated statements", "reproduction": "unreproduced numbers",
            "scope": "out-of-scope findings", "code": "reference-code findings",
            "digest": "digest findings (ours, not the paper's)"}


def mark(label: str) -> str:
    """The verdict label as printed: VIOLATED in capitals, a vacuous hold with its factor."""
    return MARK.get(label, label)


def summary(results: Sequence[Result]) -> list[str]:
    """Counts by verdict, findings by kind (a violated claim of each kind), vacuous and not-tight holds, verdicts
    that depend on a reading, and checks by basis."""
    verdicts = Counter(r.verdict for r in results)
    findings = Counter(r.claim.kind for r in results if r.verdict == "violated")
    vacuous = [r.claim.id for r in results if r.label.startswith("holds (vacuous")]
    loose = [r.claim.id for r in results if r.label == "holds (not tight)"]
    depends = [r.claim.id for r in results if r.label.startswith("inconclusive (depends")]
    bases = Counter(c.basis for r in results if r.evidence for c in r.evidence.checks)

    def listed(ids: list[str]) -> str:
        return f"{len(ids)}" + (f" ({', '.join(ids)})" if ids else "")

    return [
        ", ".join(f"{n} {v}" for v, n in ((v, verdicts[v]) for v in MARK) if n),
        "findings: " + ", ".join(f"{findings[k]} {text}" for k, text in FINDINGS.items() if findings[k] or
                                 k in ("statement", "reproduction", "scope")),
        f"vacuous holds (a statement bound > {VACUOUS:g}x the measurement): {listed(vacuous)}",
        f"not tight (a criterion of our own fails; never a violation): {listed(loose)}",
        f"verdicts that depend on the reading: {listed(depends)}",
        "checks by basis: " + ", ".join(f"{bases[b]} {b}" for b in BASES if bases[b]),
    ]


def clip(text: str, width: int = 44) -> str:
    """A table cell cut to ``width`` characters (the reports hold the whole value)."""
    return text if len(text) <= width else text[:width - 1] + "…"


def table(results: Sequence[Result]) -> str:
    rows = [("claim", "kind", "verdict", "measured", "theory", "relation", "basis", "tightness", "seconds")]
    for r in results:
        d = r.as_dict()
        rows.append((d["id"], d["kind"], mark(r.label), clip(fmt(d["measured"])), clip(fmt(d["theory"])),
                     clip(d["relation"] or ""), d["basis"] or "", fmt(d["tightness"]), f"{r.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + [""] + summary(results))


def as_json(results: Sequence[Result]) -> str:
    return json.dumps([r.as_dict() for r in results], indent=2)


def _cell(text) -> str:
    return fmt(text).replace("|", "\\|")


def reference() -> str | None:
    """The newest dated full-mode reference result kept in the repository (``reference/full-YYYY-MM-DD``), as a
    path relative to the repository; None outside a checkout."""
    top = Path(__file__).resolve().parents[1] / "reference"
    found = sorted(p.name for p in top.glob("full-*") if (p / "claims.json").is_file()) if top.is_dir() else []
    return f"reference/{found[-1]}" if found else None


def reference_line() -> str:
    """One sentence pointing at the reference result, or nothing."""
    ref = reference()
    return (f"Full-mode reference result: `{ref}/` in the repository (claims.json, report.md, errata.md, "
            f"provenance.json; quick and full verdicts side by side in quick_vs_full.md)." if ref else "")


def markdown(results: Sequence[Result], mode: str, seed: int, out: Path, figures: bool = True) -> str:
    """The Markdown report; ``figures=False`` names each claim's figure instead of linking it (a reference result
    kept in git without its images)."""
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [
        "# theorylab validation report", "",
        f"Generated {stamp} by theorylab {theorylab.__version__}; mode **{mode}**, seed {seed}. {reference_line()}"
        .rstrip(), "",
        "Verdicts: *holds* (the measurement agrees with the statement), *violated* (it contradicts the statement "
        "on our testbed under every reading of it; see errata.md), *inconclusive* (the measurement cannot decide, "
        f"or the verdict depends on the reading). *holds (vacuous xN)*: a bound of the statement is N > {VACUOUS:g} "
        "times the measurement; *holds (not tight)*: a criterion of our own about the bound's strength fails.", "",
        "Kinds: *statement* (the paper asserts it), *reproduction* (a number the paper prints), *scope* (whether a "
        "theorem covers a setting), *code* (the authors' public code), *digest* (our digest's own derivation). Each "
        "row shows the check that decided the verdict.", "",
        "Bases: " + "; ".join(f"*{b}*: {text}" for b, text in BASES.items()) + ".", "",
        "| claim | kind | verdict | measured | theory | relation | basis | tightness | s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        d = r.as_dict()
        lines.append(f"| [{d['id']}](#{d['id'].replace('.', '')}) | {d['kind']} | {mark(r.label)} | "
                     f"{_cell(d['measured'])} | {_cell(d['theory'])} | {_cell(d['relation'])} | {_cell(d['basis'])} | "
                     f"{_cell(d['tightness'])} | {r.seconds:.1f} |")
    lines += [""] + [f"- {line}" for line in summary(results)]
    for r in results:
        d = r.as_dict()
        lines += ["", f"## {d['id']}", "", f"**{mark(r.label)}** ({d['kind']}) — {d['statement']}", "",
                  f"Source: {d['source']}", ""]
        if d["quote"]:
            lines += [f"> {d['quote']}", ">", f"> — {d['where']}", ""]
        if r.error:
            lines += ["```", r.error.rstrip(), "```"]
            continue
        if r.verdict != r.claim.expect:
            lines += [f"*Expected on this testbed: {r.claim.expect}* ({r.claim.because or 'no reason recorded'})", ""]
        lines += ["| check | basis | measured | theory | relation | CI / tolerance | tightness | verdict |",
                  "|---|---|---|---|---|---|---|---|"]
        for c in d["checks"]:
            spread = spread_of(c)
            name = c["name"] + ("" if c["role"] == "statement" else f" ({c['role']})")
            lines.append(f"| {_cell(name)} | {c['basis']} | {_cell(c['measured'])} | {_cell(c['theory'])} | "
                         f"{_cell(c['relation'])} | {_cell(spread)} | {_cell(c['tightness'])} | {MARK[c['verdict']]} |")
        notes = [f"{c['name']}: {c['note']}" for c in d["checks"] if c["note"]]
        tried = [f"{c['name']} — {label}: {v['verdict']}" for c in d["checks"] for label, v in
                 (c["readings"] or {}).items()]
        defence = [d["defence"]] if d["defence"] else []
        for title, items in (("Readings", tried), ("Defence", defence), ("Notes", d["notes"] + notes),
                             ("Deviations from the paper", d["deviations"]), ("Errata", d["errata"])):
            if items:
                lines += ["", f"*{title}:*", ""] + [f"- {item}" for item in items]
        if d["figure"] and figures:
            lines += ["", f"![{d['id']}]({os.path.relpath(d['figure'], out)})"]
        elif d["figure"]:
            lines += ["", f"*Figure {Path(d['figure']).name} is not kept here: `theorylab validate {d['id']} --"
                          f"{mode}` draws it.*"]
    return "\n".join(lines) + "\n"


def spread_of(check: dict) -> str:
    """A check's interval or tolerance as the reports print it, with the paired seeds behind an ordering."""
    spread = fmt(check["ci"]) if check["ci"] else fmt(check["tolerance"])
    return spread + (f" over {check['seeds']} seeds" if check.get("seeds") else "")


def side_by_side(quick: Sequence[Result], full: Sequence[Result]) -> str:
    """Markdown: verdict counts per paper in quick and in full mode, then every claim whose label differs."""
    papers = sorted({r.claim.paper for r in (*quick, *full)})
    verdicts = ("holds", "violated", "inconclusive", "error")

    def counts(results, paper):
        found = Counter(r.verdict for r in results if r.claim.paper == paper)
        return " / ".join(str(found[v]) for v in verdicts)

    lines = ["| paper | quick: holds / violated / inconclusive / error | full: holds / violated / inconclusive / "
             "error |", "|---|---|---|"]
    lines += [f"| {p} | {counts(quick, p)} | {counts(full, p)} |" for p in papers]
    lines.append(f"| **all** | {' / '.join(str(sum(r.verdict == v for r in quick)) for v in verdicts)} | "
                 f"{' / '.join(str(sum(r.verdict == v for r in full)) for v in verdicts)} |")
    by_id = {r.claim.id: r for r in quick}
    changed = [(r, by_id[r.claim.id]) for r in full if r.claim.id in by_id and r.label != by_id[r.claim.id].label]
    if changed:
        lines += ["", "| claim | quick | full | deciding check in full |", "|---|---|---|---|"]
        for f, q in changed:
            head = f.evidence.headline if f.evidence is not None else None
            lines.append(f"| {f.claim.id} | {mark(q.label)} | {mark(f.label)} | "
                         f"{_cell(head.name) if head else ''} |")
    missing = [r.claim.id for r in quick if r.claim.id not in {f.claim.id for f in full}]
    if missing:
        lines += ["", f"Not in the full run ({len(missing)}): {', '.join(missing)}."]
    return "\n".join(lines) + "\n"
