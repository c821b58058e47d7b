"""The errata report: per paper, every finding a referee would accept, in the form one would send to the authors.

A finding is a claim that reads *violated* (``shared/DESIGN.md``, "Findings").  For each, the report gives

* the **quote** it tests (the paper's words, verbatim from the seed text) and where it stands;
* what we find (the claim's ``because`` and its evidence's errata);
* the **witness**: the check that decided — an exact counterexample, or the measured value with its interval;
* the **readings** tried: every reading or free choice that a check decided under (:func:`theorylab.checks.across`);
* the **defence**: the authors' strongest argument, and why the verdict stands anyway;
* its **severity** (:data:`theorylab.claims.SEVERITIES`) and the one command that reproduces it.

Findings are grouped by paper and ordered by severity.  Two more lists follow each paper's findings: the
*clarifications* (claims whose verdict depends on how an unclear point of the paper is read: a question for the
authors, not an erratum) and, apart from the paper, *unreviewed* violations (a violation that no one expected: a
defect of ours until it is reviewed) and findings about the digest (our own derivations, never the paper's).

Everything is read from :meth:`theorylab.claims.Result.as_dict`, so the report renders alike from a run and from a
``claims.json``.
"""

from __future__ import annotations

import datetime
from typing import Sequence

import theorylab
from theorylab.checks import fmt
from theorylab.claims import SEVERITIES, Result

ORDER = ("statement", "proof step", "constant", "scope", "experiment", "reference code", "typo")


def _reviewed(d: dict, mode: str | None) -> bool:
    """A violation someone expected (in the run's mode) and graded."""
    expected = d.get("expect_full", d["expect"]) if mode == "full" else d["expect"]
    return expected == "violated" and d["severity"] in SEVERITIES


def witness(d: dict) -> str:
    """The deciding check in one line: name, measured relation theory, basis, and its interval or tolerance."""
    head = next((c for c in d["checks"] if c["name"] == d["headline"]), None)
    if head is None:
        return "no deciding check"
    spread = ""
    if head["ci"]:
        lo, hi = head["ci"]
        spread = f"; {head['level']:.2%} interval [{fmt(lo)}, {fmt(hi)}]" if head["level"] else \
            f"; interval [{fmt(lo)}, {fmt(hi)}]"
    elif head["tolerance"] not in (None, 0, 0.0):
        spread = f"; tolerance {fmt(head['tolerance'])}"
    return (f"{head['name']}: measured {fmt(head['measured'])}, {head['relation']} "
            f"{fmt(head['theory'])} ({head['basis']}{spread})")


def readings(d: dict, disputed: bool = False) -> list[str]:
    """Each reading or free choice tried, with its outcome, for every check decided under several (with
    ``disputed``, only for the checks whose readings disagree)."""
    lines = []
    for c in d["checks"]:
        outcomes = c.get("readings") or {}
        if disputed and not {"holds", "violated"} <= {r["verdict"] for r in outcomes.values()}:
            continue
        for label, r in outcomes.items():
            lines.append(f"{c['name']} — {label}: {r['verdict']} (measured {fmt(r['measured'])} "
                         f"{r['relation']} {fmt(r['theory'])})")
    return lines


def command(d: dict, mode: str | None) -> str:
    return f"theorylab validate {d['id']}" + (" --quick" if mode == "quick" else "")


def sections(results: Sequence[Result], mode: str | None = None) -> dict[str, dict[str, list[dict]]]:
    """Per paper prefix: its ``findings`` (reviewed violations, by severity), ``clarifications`` (verdicts that
    depend on the reading), ``unreviewed`` violations and ``digest`` findings; ``mode`` ("quick" or "full") picks
    which expected verdict a violation is held to."""
    out: dict[str, dict[str, list[dict]]] = {}
    for r in results:
        d = r.as_dict()
        group = out.setdefault(d["id"].split(".")[0],
                               {"findings": [], "clarifications": [], "unreviewed": [], "digest": []})
        if d["verdict"] == "violated":
            key = "digest" if d["kind"] == "digest" else ("findings" if _reviewed(d, mode) else "unreviewed")
            group[key].append(d)
        elif d["label"].startswith("inconclusive (depends"):
            group["clarifications"].append(d)
    for group in out.values():
        group["findings"].sort(key=lambda d: (ORDER.index(d["severity"]), d["id"]))
    return out


def _finding(n: int, d: dict, mode: str | None) -> list[str]:
    lines = [f"### {n}. {d['id']} — {d['severity'] or 'unreviewed'} ({d['kind']})", ""]
    if d["quote"]:
        lines += [f"> {d['quote']}", "", f"— {d['where'] or d['source']}", ""]
    else:
        lines += [f"*(no quote: {d['source']})*", ""]
    lines += [f"**Finding.** {(d['because'] or d['statement']).rstrip('.')}.", ""]
    if d["errata"]:
        lines += ["**What to correct.**", ""] + [f"- {e}" for e in d["errata"]] + [""]
    lines += [f"**Witness.** {witness(d)}", ""]
    tried = readings(d)
    lines += ["**Readings tried.** " + ("" if tried else "one: no check of this finding was decided under "
                                        "alternative readings or choices."), ""]
    lines += [f"- {t}" for t in tried] + ([""] if tried else [])
    lines += [f"**Defence.** {d['defence'] or '(none recorded)'}", "",
              f"**Reproduce.** `{command(d, mode)}`", ""]
    return lines


def markdown(results: Sequence[Result], titles: dict[str, str], mode: str | None = None,
             seed: int | None = None) -> str:
    """The errata report of ``results`` (every claim of the papers it covers); ``titles`` maps a paper prefix to
    the heading of its section."""
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    groups = sections(results, mode)
    lines = ["# theorylab errata", "",
             f"Generated {stamp} by theorylab {theorylab.__version__}" + (f"; mode **{mode}**, seed {seed}" if mode
                                                                         else "") + ".", "",
             "Each finding quotes the paper, gives the witness that decides it, the readings of unclear points that "
             "were tried (a finding stands only when every reading violates), the authors' strongest defence and why "
             "the verdict stands, a severity and the command that reproduces it. Severities: "
             + "; ".join(f"*{k}*: {v}" for k, v in SEVERITIES.items()) + ".", ""]
    total = sum(len(g["findings"]) for g in groups.values())
    lines += [f"{total} findings in {sum(bool(g['findings']) for g in groups.values())} of {len(groups)} works; "
              f"{sum(len(g['clarifications']) for g in groups.values())} verdicts depend on a reading; "
              f"{sum(len(g['unreviewed']) for g in groups.values())} unreviewed violations.", ""]
    for prefix in sorted(groups):
        g = groups[prefix]
        lines += [f"## {titles.get(prefix, prefix)}", ""]
        if not g["findings"]:
            lines += ["No finding.", ""]
        for n, d in enumerate(g["findings"], 1):
            lines += _finding(n, d, mode)
        if g["clarifications"]:
            lines += ["#### Clarifications requested (the verdict depends on the reading)", ""]
            for d in g["clarifications"]:
                lines += [f"- **{d['id']}** — {d['statement']}", ""] + [f"  - {t}" for t in readings(d, True)] + [
                    f"  - `{command(d, mode)}`", ""]
            lines += [""]
        if g["unreviewed"]:
            lines += ["#### Unreviewed violations (not errata: no one expected them; a defect of ours until reviewed)",
                      ""] + [f"- **{d['id']}** — {witness(d)} (`{command(d, mode)}`)" for d in g["unreviewed"]] + [""]
        if g["digest"]:
            lines += ["#### Our digest's own numbers, not reproduced (not the paper's: internal)", ""]
            lines += [f"- **{d['id']}** — {d['because'] or d['statement']} (`{command(d, mode)}`)" for d in g["digest"]]
            lines += [""]
    return "\n".join(lines).rstrip() + "\n"
