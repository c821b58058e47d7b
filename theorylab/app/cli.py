"""Command line: ``theorylab list | validate | errata | coverage | report | store | figure | train | sweep | new``.

``theorylab validate`` and ``theorylab errata`` (:mod:`theorylab.app.validate`) run claims and report their verdicts
(quick or full mode, in parallel on dask, resumable, planned with ``--plan``, seeds added with ``--until-decided``).
``theorylab report`` re-renders ``report.html`` from ``OUT/claims.json``.  ``theorylab store check [--repair]`` checks every stored run against its
checksum (:mod:`theorylab.store`).

``theorylab sweep GRID.yaml|GRID.json`` runs a grid of run configurations (:mod:`theorylab.grid`) on dask
(:mod:`theorylab.sweep`): each finished cell goes into the store at once, so a killed sweep resumes; it writes
a tidy table (CSV, and Parquet when pyarrow is installed) and a figure of the grid's metric.

``theorylab train`` (:mod:`theorylab.app.train`) trains a network testbed with a federated algorithm.

``theorylab coverage [PAPER...] [--format md|json]`` prints, per source work, each check its digest catalogues with the
claims that cover it, its algorithms with their kernels and its figures and tables with their recipes
(:mod:`theorylab.coverage`); it exits 1 when a catalogue and the claims disagree.

``--plugin PATH|MODULE`` (on ``list``, ``validate``, ``errata``, ``figure`` and ``train``) loads a plugin's claims,
kernels, testbeds, participation processes and figures before the command runs (:mod:`theorylab.plugins`);
``theorylab new NAME [--dir DIR]`` writes one (:mod:`theorylab.scaffold`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from theorylab import html_report
from theorylab.claims import Context
from theorylab.app.options import add_common, add_plugin, int_at_least, store_of
from theorylab.app.train import add_train_parser
from theorylab.app.validate import add_validate_parsers
from theorylab.files import output_dir
from theorylab.plugins import load_given
from theorylab.progress import progress
from theorylab.registry import BUILT_IN, KINDS, entries, lookup
from theorylab.store import Store


HEADINGS = {"testbed": "testbeds", "participation": "participation processes", "channel": "lossy channels",
            "clock": "asynchronous clocks", "topology": "gossip topologies", "algorithm": "algorithms",
            "claim": "claims", "figure": "figures", "paper": "source works"}


def cmd_list(args) -> int:
    kinds = [args.kind] if args.kind else list(KINDS)
    for kind in kinds:
        print(f"{HEADINGS[kind]}:")
        for name, entry in entries(kind).items():
            owner = "" if entry.owner == BUILT_IN else f"  [plugin {entry.owner}]"
            print(f"  {name:34s} {entry.summary}{owner}")
        print()
    return 0


def cmd_coverage(args) -> int:
    from theorylab import coverage

    found = coverage.collect(args.papers)
    if args.format == "json":
        print(json.dumps(coverage.as_json(found), indent=1))
    else:
        print(coverage.markdown(found), end="")
    problems = [problem for work in found for problem in work.problems]
    for problem in problems:
        print(f"theorylab: coverage: {problem}", file=sys.stderr)
    return 1 if problems else 0


def cmd_report(args) -> int:
    if args.json is None and Path(args.out).is_file():
        raise ValueError(f"--out {args.out} is a file: pass the folder that holds claims.json (or --json FILE)")
    source = Path(args.json or Path(args.out) / "claims.json")
    if not source.is_file():
        raise ValueError(f"{source} does not exist: run `theorylab validate --out {args.out}` first, or pass --json")
    results = html_report.load_results(source)  # refuses an empty or malformed file before anything is written
    print(html_report.write(results, output_dir(args.out)))
    return 0


def cmd_store(args) -> int:
    path = Path(args.store or Path(args.out) / "store.sqlite")
    if not path.is_file():
        raise ValueError(f"{path} does not exist: pass --store FILE or the --out folder that holds store.sqlite")
    store = Store(path)
    damaged = store.check(repair=args.repair)
    rows = len(store)
    for key, run, problem in damaged:
        print(f"{key}  {run}: {problem}")
    if not damaged:
        print(f"{path}: {rows} rows, none damaged")
        return 0
    if args.repair:
        print(f"{path}: {len(damaged)} damaged rows deleted ({rows} sound rows kept); the next run recomputes them")
        return 0
    print(f"{path}: {len(damaged)} of {rows} rows damaged; `theorylab store check --repair` deletes them (they are "
          "also recomputed on the next run that needs them)")
    return 1


def cmd_sweep(args) -> int:
    from theorylab import grid, sweep
    from theorylab.parallel import connect

    spec = grid.parse(grid.load(args.grid))  # every axis value checked against the registry
    out = output_dir(args.out or Path("results") / f"sweep-{Path(args.grid).stem}")
    cells = grid.expand(spec, args.max_cells)
    store = Store(args.store or out / "store.sqlite")
    sweep.check_metric(spec, cells[0], store)
    done = sweep.run_cells(cells, store, lambda: connect(args.workers, args.scheduler))
    rows = sweep.table(spec, cells, store)
    name = Path(args.grid).stem
    print(f"{done.cells} distinct cells: {done.cached} read from the store, {done.computed} computed, "
          f"{len(done.failed)} failed; store: {store.path}")
    if rows:
        table, parquet = sweep.write_csv(rows, out / f"{name}.csv"), sweep.write_parquet(rows, out / f"{name}.parquet")
        also = f" (and {parquet})" if parquet else ""
        print(f"table: {table}{also}  figure: {sweep.draw(rows, spec, out / f'{name}.png')}")
    else:
        print(f"no cell finished: {out / f'{name}.csv'} is not written (an earlier table there is kept)")
    values = {cell.config.key(): cell.values for cell in cells}
    for key, error in done.failed.items():
        print(f"cell {values[key]} failed: {error}", file=sys.stderr)
    return 1 if done.failed else 0


def cmd_figure(args) -> int:
    names = list(entries("figure")) if args.all else args.names
    if not names:
        print("name a figure or pass --all; see `theorylab list figure`", file=sys.stderr)
        return 2
    recipes = [lookup("figure", name).obj for name in names]  # an unknown name before any store is created
    ctx = Context(quick=args.quick, seed=args.seed, store=store_of(args), figure_dir=Path(args.out))
    for recipe in progress(recipes, None, desc="figures"):
        print(recipe(ctx))
    return 0


def cmd_new(args) -> int:
    from theorylab.scaffold import create

    folder = create(args.name, args.dir)
    print(f"{folder}: a plugin with a lemma (lemma.md), a kernel, a claim, a figure and their tests\n"
          f"  theorylab validate {args.name} --plugin {folder} --quick\n  python -m pytest {folder / 'tests'}\n"
          f"  pip install {folder}    # then every command loads it without --plugin")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="theorylab", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    ls = sub.add_parser("list", help="list claims, algorithms, testbeds, participation processes, figures")
    ls.add_argument("kind", nargs="?", choices=KINDS)
    add_plugin(ls)
    ls.set_defaults(func=cmd_list)

    add_validate_parsers(sub)

    cv = sub.add_parser("coverage", help="per work: its digest's checks and the claims covering them, its "
                        "algorithms, figures and tables")
    cv.add_argument("papers", nargs="*", metavar="PAPER", help="source works (default: every one with a catalogue)")
    cv.add_argument("--format", choices=("md", "json"), default="md", help="Markdown tables (default) or JSON")
    add_plugin(cv)
    cv.set_defaults(func=cmd_coverage)

    rp = sub.add_parser("report", help="re-render OUT/report.html from OUT/claims.json")
    rp.add_argument("--out", default="results", help="folder of claims.json and report.html (default results)")
    rp.add_argument("--json", help="claims.json to render (default OUT/claims.json)")
    rp.set_defaults(func=cmd_report)

    st = sub.add_parser("store", help="check the result store: every row against its checksum")
    st.add_argument("action", choices=("check",))
    st.add_argument("--out", default="results", help="folder of store.sqlite (default results)")
    st.add_argument("--store", help="result-store file (default OUT/store.sqlite)")
    st.add_argument("--repair", action="store_true", help="delete the damaged rows (the next run recomputes them)")
    st.set_defaults(func=cmd_store)

    sw = sub.add_parser("sweep", help="run a grid of run configurations on dask; tidy CSV table and figure")
    sw.add_argument("grid", help="grid spec, .yaml/.yml (YAML) or JSON: base, product, zip, metric "
                    "(see theorylab.grid)")
    sw.add_argument("--workers", type=int_at_least(1), help="workers of the local dask cluster (default: one per core)")
    sw.add_argument("--scheduler", help="address of an existing dask scheduler (tcp://HOST:PORT) instead")
    sw.add_argument("--out", help="output folder (default results/sweep-<grid name>)")
    sw.add_argument("--store", help="result-store file (default OUT/store.sqlite); finished cells are read back")
    sw.add_argument("--max-cells", type=int_at_least(1), default=100_000, help="refuse a grid of more cells than this "
                    "before building them (default 100000)")
    sw.set_defaults(func=cmd_sweep)

    fi = sub.add_parser("figure", help="render figures by name")
    fi.add_argument("names", nargs="*")
    fi.add_argument("--all", action="store_true", help="render every registered figure")
    add_common(fi, "figures/gallery")
    fi.set_defaults(func=cmd_figure)

    add_train_parser(sub)

    nw = sub.add_parser("new", help="write a plugin folder: a lemma of your own, a kernel, a claim, a figure, tests")
    nw.add_argument("name", help="the plugin's name and namespace: a Python identifier, e.g. mylemma")
    nw.add_argument("--dir", default=".", help="folder to write NAME/ into (default: the current folder)")
    nw.set_defaults(func=cmd_new)
    return p


def main(argv=None) -> int:
    """Run a command; a ValueError is a one-line error (exit 2); a reader that closes the pipe early (``| head``)
    ends the command quietly with the shell's SIGPIPE status 141, as other command-line tools do."""
    args = parser().parse_args(argv)
    try:
        load_given(getattr(args, "plugin", None) or ())
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe surfaces here, not in the interpreter's exit
        return code
    except ValueError as err:
        print(f"theorylab: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
