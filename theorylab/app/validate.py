"""``theorylab validate`` and ``theorylab errata``: run claims, report their verdicts (an assembler, like
:mod:`theorylab.app.cli`).

``validate [IDS...] [--quick | --full]`` runs claims (all, or those whose id equals or starts with an argument),
prints a table / JSON / Markdown, and writes ``report.md``, ``report.html``, ``claims.json``, ``errata.md`` and
figures under ``--out``.  It exits non-zero when a claim's code errors, not when a paper's claim is violated.

* ``--workers N`` / ``--scheduler ADDR`` run the claims on dask; the verdicts and numbers equal a serial run's.
* Every finished claim is appended to ``OUT/journal.jsonl`` at once; ``--resume`` reuses the results there that
  the same mode, seed, decision rule and code computed (:mod:`theorylab.journal`), so a long run killed halfway
  goes on where it stopped.  Runs inside claims are cached in the store either way.
* ``--check-expected`` exits 3 when a claim's verdict is not its reviewed expectation for the mode
  (:meth:`theorylab.claims.Claim.expected`) or a figure its evidence names was not written: ``make demo`` runs the
  quick suite this way, so a changed verdict fails the main job (and CI) instead of passing silently.
* ``--plan`` prints every selected claim's declared full-mode cost, the datasets it needs and the total, and runs
  nothing (:mod:`theorylab.plan`).
* ``--until-decided [--budget DURATION]`` decides paired orderings by anytime-valid confidence sequences and adds
  seeds to the claims whose orderings are still open until they are decided or the budget is spent
  (:mod:`theorylab.until_decided`).

``errata [PAPER...]`` runs the papers' claims the same way and writes ``errata.md``: every finding with its quote,
witness, readings, defence, severity and the command that reproduces it (:mod:`theorylab.errata`).
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

from theorylab import html_report, journal, provenance, report
from theorylab.claims import Context, evaluate, select
from theorylab.app.options import add_cluster, add_common, duration, store_of
from theorylab.files import output_dir, write_text
from theorylab.progress import progress

DEFAULT_BUDGET = "1h"


def _mode(args) -> str:
    return "quick" if args.quick else "full"


def _evaluate(args, claims) -> tuple[list, int]:
    """Run ``claims`` serially or on dask as ``args`` say, journaling each result as it finishes (and reading the
    journal's results back with ``--resume``); figures under OUT/figures, runs cached in the store.  Returns the
    results and how many came from the journal."""
    out = Path(args.out)
    anytime = getattr(args, "until_decided", False)
    ctx = Context(quick=args.quick, seed=args.seed, store=store_of(args), figure_dir=out / "figures", progress=False,
                  anytime=anytime)
    path, stamp = out / "journal.jsonl", (_mode(args), args.seed, anytime)
    resume = getattr(args, "resume", False)
    done = journal.finished(path, *stamp) if resume else {}
    journal.start(path, resume)
    todo = [c for c in claims if c.id not in done]
    if done:
        print(f"resuming: {sum(c.id in done for c in claims)} of {len(claims)} claims read from {path}",
              file=sys.stderr)

    def record(result):
        journal.append(path, result, *stamp)
        return result

    if args.workers is not None or args.scheduler is not None:
        from theorylab.parallel import connect, evaluate_claims

        with connect(args.workers, args.scheduler) as client:
            fresh = evaluate_claims(todo, ctx, client, on_result=record)
    else:
        from theorylab.parallel import one_blas_thread

        fresh = []
        bar = progress(todo, None, desc="claims", unit="claim")
        for c in bar:
            if hasattr(bar, "set_postfix_str"):
                bar.set_postfix_str(c.id)
            with one_blas_thread():  # as on a worker: numbers independent of the BLAS thread count
                fresh.append(record(evaluate(c, ctx)))
    by_id = {**done, **{r.claim.id: r for r in fresh}}
    results = [by_id[c.id] for c in claims]
    if anytime:
        from theorylab.parallel import one_blas_thread
        from theorylab.until_decided import add_seeds

        def rerun(claim, context):
            with one_blas_thread():
                return record(evaluate(claim, context))

        results = add_seeds(results, ctx, args.budget, run=rerun)
    return results, len(claims) - len(todo)


def _errata(results, out: Path, mode: str, seed: int) -> Path:
    from theorylab import errata
    from theorylab.sources import papers

    return write_text(out / "errata.md", errata.markdown(results, {k: p.title for k, p in papers().items()}, mode,
                                                          seed))


def _report_errors(results) -> int:
    for r in results:
        if r.error:
            print(f"\n{r.claim.id} raised:\n{r.error}", file=sys.stderr)
    missing = [r.claim.id for r in results if r.error and "DatasetMissing" in r.error]
    if missing:
        print(f"\n{len(missing)} claim(s) need a dataset that is absent ({', '.join(missing)}): run `make data` "
              "(or point THEORYLAB_DATA at a folder that holds it); the messages above say which file",
              file=sys.stderr)
    return 1 if any(r.error for r in results) else 0


def _plan(args, claims) -> int:
    from theorylab.testbeds.data import DatasetMissing, load

    from theorylab import plan

    def present(name: str) -> bool:
        try:
            load(name)
            return True
        except DatasetMissing:
            return False

    needed = {d for cost in plan.costs(claims).values() for d in cost.needs}
    print(plan.render(claims, args.workers or 1, {d: present(d) for d in needed}))
    return 0


def cmd_validate(args) -> int:
    claims = select(args.ids)
    if args.plan:
        return _plan(args, claims)
    out = output_dir(args.out)
    started = datetime.datetime.now(datetime.timezone.utc)
    results, resumed = _evaluate(args, claims)
    mode = _mode(args)
    write_text(out / "report.md", report.markdown(results, mode, args.seed, out))
    write_text(out / "claims.json", report.as_json(results))
    write_text(out / "provenance.json", json.dumps(provenance.record(
        results, mode=mode, seed=args.seed, anytime=args.until_decided, workers=args.workers, started=started,
        resumed=resumed), indent=1) + "\n")
    html_report.write(results, out, mode, args.seed)
    _errata(results, out, mode, args.seed)
    rendered = {"table": report.table, "json": report.as_json}.get(args.format)
    print(rendered(results) if rendered else report.markdown(results, mode, args.seed, out))
    if args.format == "table":
        print(f"\nreport: {out / 'report.md'} (html: {out / 'report.html'}, errata: {out / 'errata.md'})  "
              f"json: {out / 'claims.json'}  figures: {out / 'figures'}")
    errors = _report_errors(results)
    return errors or (_report_unexpected(results, mode) if args.check_expected else 0)


def _report_unexpected(results, mode: str) -> int:
    """Exit status 3 (and each reason on stderr) when a verdict differs from the claim's reviewed one for ``mode``
    or a figure named by the evidence is missing; else 0."""
    wrong = [f"{r.claim.id}: {r.verdict}, reviewed {r.claim.expected(mode)} ({r.claim.because or 'expected to hold'})"
             for r in results if r.verdict != r.claim.expected(mode)]
    wrong += [f"{r.claim.id}: figure {r.evidence.figure} was not written" for r in results
              if r.evidence is not None and r.evidence.figure and not Path(r.evidence.figure).exists()]
    for line in wrong:
        print(f"unexpected: {line}", file=sys.stderr)
    if wrong:
        print(f"{len(wrong)} claim(s) differ from their reviewed {mode}-mode verdicts (--check-expected)",
              file=sys.stderr)
    return 3 if wrong else 0


def cmd_errata(args) -> int:
    from theorylab.sources import papers

    known = papers()
    unknown = [p for p in args.papers if p not in known]
    if unknown:
        raise ValueError(f"unknown paper {', '.join(unknown)}; known: {', '.join(known)}")
    claims = select(args.papers or list(known))
    out = output_dir(args.out)
    results, _ = _evaluate(args, claims)
    path = _errata(results, out, _mode(args), args.seed)
    print(path.read_text())
    print(f"errata: {path}")
    return _report_errors(results)


def cmd_publish(args) -> int:
    """Merge full-run output folders into one dated reference folder kept in git (no images)."""
    results, segments = provenance.publish([Path(o) for o in args.outs], Path(args.to))
    dest = output_dir(args.to)
    modes = {s.get("mode") for s in segments}
    mode = modes.pop() if len(modes) == 1 else "mixed"
    seed = segments[0].get("seed", 0) if segments else 0
    write_text(dest / "claims.json", report.as_json(results))
    write_text(dest / "report.md", report.markdown(results, mode, seed, dest, figures=False))
    _errata(results, dest, mode, seed)
    summary = {"published": datetime.date.today().isoformat(), "mode": mode, "claims": len(results),
               "duration_s": round(sum(s.get("duration_s", 0) for s in segments), 1),
               "verdicts": {v: sum(r.verdict == v for r in results) for v in ("holds", "violated", "inconclusive",
                                                                               "error")},
               "segments": segments}
    write_text(dest / "provenance.json", json.dumps(summary, indent=1) + "\n")
    quick = html_report.load_results(args.quick_json) if args.quick_json else []
    if quick:
        write_text(dest / "quick_vs_full.md", report.side_by_side(quick, results))
    if args.record_costs:
        from theorylab import plan

        where = segments[-1].get("machine", {}) if segments else {}
        machine = f"{where.get('cpu', '?')}, {where.get('cores', '?')} cores, {where.get('memory_gib', '?')} GiB"
        for path in plan.record(results, str(args.to), machine, quick):
            print(f"costs: {path}")
    print(f"published {len(results)} claims from {len(segments)} run(s) to {dest}")
    return 0


def add_validate_parsers(sub) -> None:
    va = sub.add_parser("validate", help="run claims and report their verdicts")
    va.add_argument("ids", nargs="*", help="claim ids or prefixes (e.g. fedawe, fedawe.prop1); default all")
    va.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    va.add_argument("--plan", action="store_true", help="print each claim's declared full-mode cost and the total; "
                    "run nothing")
    va.add_argument("--check-expected", action="store_true", help="exit 3 when a verdict differs from the claim's "
                    "reviewed verdict for the mode, or a figure it names was not written")
    va.add_argument("--resume", action="store_true", help="reuse the results OUT/journal.jsonl holds for this mode, "
                    "seed and code")
    va.add_argument("--until-decided", action="store_true", help="decide paired orderings by confidence sequences "
                    "and add seeds until they are decided or --budget is spent")
    va.add_argument("--budget", type=duration, default=duration(DEFAULT_BUDGET), help="time for adding seeds under "
                    f"--until-decided, e.g. 90m, 2h, 1h30m (default {DEFAULT_BUDGET})")
    add_cluster(va)
    add_common(va, "results")
    va.set_defaults(func=cmd_validate)

    er = sub.add_parser("errata", help="run the papers' claims and write OUT/errata.md: every finding with its quote, "
                        "witness, readings, defence, severity and command")
    er.add_argument("papers", nargs="*", help="paper prefixes (fedawe, thesis, afga, performative, masfl); default all")
    add_cluster(er)
    add_common(er, "results")
    er.set_defaults(func=cmd_errata)

    pu = sub.add_parser("publish", help="merge validate output folders into a dated reference folder (claims.json, "
                        "report.md, errata.md, provenance.json; no images)")
    pu.add_argument("outs", nargs="+", help="validate --out folders, in order (a later one wins for the same claim)")
    pu.add_argument("--to", required=True, help="the reference folder, e.g. reference/full-2026-11-26")
    pu.add_argument("--quick-json", help="a quick run's claims.json: also write quick_vs_full.md")
    pu.add_argument("--record-costs", action="store_true", help="write the measured seconds into each paper's "
                    "full_costs.json (estimates from --quick-json for claims the runs did not finish)")
    pu.set_defaults(func=cmd_publish)
