"""Render claim results as a terminal table, JSON, or a Markdown report."""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Sequence

import theorylab
from theorylab.claims import Result

MARK = {"holds": "holds", "violated": "VIOLATED", "inconclusive": "inconclusive", "error": "ERROR"}


def fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in value[:4]) + (", ..." if len(value) > 4 else "") + "]"
    return str(value)


def table(results: Sequence[Result]) -> str:
    rows = [("claim", "verdict", "measured", "theory", "relation", "tightness", "seconds")]
    for r in results:
        d = r.as_dict()
        rows.append((d["id"], MARK[r.verdict], fmt(d["measured"]), fmt(d["theory"]), d["relation"] or "",
                     fmt(d["tightness"]), f"{r.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    counts = {v: sum(r.verdict == v for r in results) for v in MARK}
    lines.append("\n" + ", ".join(f"{n} {v}" for v, n in counts.items() if n))
    return "\n".join(lines)


def as_json(results: Sequence[Result]) -> str:
    return json.dumps([r.as_dict() for r in results], indent=2)


def _cell(text) -> str:
    return fmt(text).replace("|", "\\|")


def markdown(results: Sequence[Result], mode: str, seed: int, out: Path) -> str:
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [
        "# theorylab validation report", "",
        f"Generated {stamp} by theorylab {theorylab.__version__}; mode **{mode}**, seed {seed}.", "",
        "Verdicts: *holds* (the measurement agrees with the statement), *violated* (it contradicts the statement "
        "on our testbed; see the notes and errata), *inconclusive* (the measurement cannot decide).", "",
        "Tightness is the worst (smallest) bound/measured ratio among a claim's bound checks.", "",
        "| claim | verdict | measured | theory | relation | tightness | s |", "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        d = r.as_dict()
        lines.append(f"| [{d['id']}](#{d['id'].replace('.', '')}) | {MARK[r.verdict]} | {_cell(d['measured'])} | "
                     f"{_cell(d['theory'])} | {_cell(d['relation'])} | {_cell(d['tightness'])} | {r.seconds:.1f} |")
    for r in results:
        d = r.as_dict()
        lines += ["", f"## {d['id']}", "", f"**{MARK[r.verdict]}** — {d['statement']}", "", f"Source: {d['source']}", ""]
        if r.error:
            lines += ["```", r.error.rstrip(), "```"]
            continue
        lines += ["| check | measured | theory | relation | CI / tolerance | bound/measured | verdict |",
                  "|---|---|---|---|---|---|---|"]
        for c in d["checks"]:
            spread = fmt(c["ci"]) if c["ci"] else fmt(c["tolerance"])
            lines.append(f"| {_cell(c['name'])} | {_cell(c['measured'])} | {_cell(c['theory'])} | {_cell(c['relation'])} | "
                         f"{_cell(spread)} | {_cell(c['tightness'])} | {MARK[c['verdict']]} |")
        notes = [f"{c['name']}: {c['note']}" for c in d["checks"] if c["note"]]
        for title, items in (("Notes", d["notes"] + notes), ("Deviations from the paper", d["deviations"]),
                             ("Errata", d["errata"])):
            if items:
                lines += ["", f"*{title}:*", ""] + [f"- {item}" for item in items]
        if d["figure"]:
            rel = os.path.relpath(d["figure"], out)
            lines += ["", f"![{d['id']}]({rel})"]
    return "\n".join(lines) + "\n"
