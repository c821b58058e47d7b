"""Command line: ``theorylab list | validate | errata | report | store | figure | train | sweep``.

``theorylab validate [IDS...] [--quick]`` runs claims (all, or those whose id
equals or starts with an argument), prints a table / JSON / Markdown, and writes
``report.md``, ``report.html``, ``claims.json`` and figures under ``--out``.  It exits non-zero when
a claim's code errors, not when a paper's claim is violated.  ``--workers N`` runs the claims in parallel on a
dask LocalCluster of N workers, ``--scheduler ADDR`` on an existing cluster; the verdicts and numbers equal a
serial run's.  ``theorylab report`` re-renders ``report.html`` from ``OUT/claims.json``.  ``theorylab errata
[PAPER...]`` runs the papers' claims (cached like ``validate``) and writes ``errata.md``: every finding with its quote,
witness, readings, defence, severity and the command that reproduces it (:mod:`theorylab.errata`); ``validate``
writes it too, for the claims it ran.  ``theorylab store check [--repair]`` checks every stored run against its
checksum (:mod:`theorylab.store`).

``theorylab sweep GRID.yaml|GRID.json`` runs a grid of run configurations (:mod:`theorylab.grid`) on dask
(:mod:`theorylab.sweep`): each finished cell goes into the store at once, so a killed sweep resumes; it writes
a tidy CSV table and a figure of the grid's metric.

``theorylab train --testbed fmnist --algorithm fedavg --participation sine --rounds R`` trains a
network testbed for each ``--seeds`` value (results in the store), shows round, accuracy and
throughput while it runs, and draws the learning curves (mean ± sample std over seeds).  By default
each algorithm runs with FedAWE Table 7's step size and is read at the point its theory evaluates
(FedAWE: the all-client mean); ``--lr`` and ``--point`` override them.  ``--algorithm cafed`` runs on the thesis'
Markov availability classes (``--participation markov``, its default) with their oracle (pi, lambda);
``--algorithm fedstale --beta B`` on its two Bernoulli groups (``two_groups``, ``--p-min``), optionally with the rare
group's labels swapped (``--label-swap``); a combination that cannot run is a usage error (exit 2).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

from theorylab import html_report, report
from theorylab.claims import Context, evaluate, select
from theorylab.files import output_dir, write_text
from theorylab.participation.dynamics import DYNAMICS
from theorylab.progress import progress
from theorylab.registry import KINDS, entries, lookup
from theorylab.store import Store
from theorylab.validation import integer, real


DEFAULT_LR0 = 0.05  # train's eta_0 for algorithms that FedAWE's Table 7 does not list
HEADINGS = {"testbed": "testbeds", "participation": "participation processes", "channel": "lossy channels",
            "clock": "asynchronous clocks", "topology": "gossip topologies", "algorithm": "algorithms",
            "claim": "claims", "figure": "figures", "paper": "source works"}


def _store(args) -> Store | None:
    if args.no_cache:
        return None
    return Store(args.store or output_dir(args.out) / "store.sqlite")


def cmd_list(args) -> int:
    kinds = [args.kind] if args.kind else list(KINDS)
    for kind in kinds:
        print(f"{HEADINGS[kind]}:")
        for name, entry in entries(kind).items():
            print(f"  {name:34s} {entry.summary}")
        print()
    return 0


def _evaluate(args, claims) -> list:
    """Run ``claims`` serially or on dask as ``args`` say; figures under OUT/figures, runs cached in the store."""
    out = Path(args.out)
    ctx = Context(quick=args.quick, seed=args.seed, store=_store(args), figure_dir=out / "figures", progress=False)
    if args.workers is not None or args.scheduler is not None:
        from theorylab.parallel import connect, evaluate_claims

        with connect(args.workers, args.scheduler) as client:
            return evaluate_claims(claims, ctx, client)
    from theorylab.parallel import one_blas_thread

    results = []
    bar = progress(claims, None, desc="claims", unit="claim")
    for c in bar:
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(c.id)
        with one_blas_thread():  # as on a worker: numbers independent of the BLAS thread count
            results.append(evaluate(c, ctx))
    return results


def _errata(results, out: Path, mode: str, seed: int) -> Path:
    from theorylab import errata
    from theorylab.sources import papers

    return write_text(out / "errata.md", errata.markdown(results, {k: p.title for k, p in papers().items()}, mode,
                                                          seed))


def _report_errors(results) -> int:
    for r in results:
        if r.error:
            print(f"\n{r.claim.id} raised:\n{r.error}", file=sys.stderr)
    return 1 if any(r.error for r in results) else 0


def cmd_validate(args) -> int:
    claims = select(args.ids)
    out = output_dir(args.out)
    results = _evaluate(args, claims)
    mode = "quick" if args.quick else "full"
    write_text(out / "report.md", report.markdown(results, mode, args.seed, out))
    write_text(out / "claims.json", report.as_json(results))
    html_report.write(results, out, mode, args.seed)
    _errata(results, out, mode, args.seed)
    rendered = {"table": report.table, "json": report.as_json}.get(args.format)
    print(rendered(results) if rendered else report.markdown(results, mode, args.seed, out))
    if args.format == "table":
        print(f"\nreport: {out / 'report.md'} (html: {out / 'report.html'}, errata: {out / 'errata.md'})  "
              f"json: {out / 'claims.json'}  figures: {out / 'figures'}")
    return _report_errors(results)


def cmd_errata(args) -> int:
    from theorylab.sources import papers

    known = papers()
    unknown = [p for p in args.papers if p not in known]
    if unknown:
        raise ValueError(f"unknown paper {', '.join(unknown)}; known: {', '.join(known)}")
    claims = select(args.papers or list(known))
    out = output_dir(args.out)
    results = _evaluate(args, claims)
    path = _errata(results, out, "quick" if args.quick else "full", args.seed)
    print(path.read_text())
    print(f"errata: {path}")
    return _report_errors(results)


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
        print(f"table: {sweep.write_csv(rows, out / f'{name}.csv')}  figure: {sweep.draw(rows, spec, out / f'{name}.png')}")
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
    ctx = Context(quick=args.quick, seed=args.seed, store=_store(args), figure_dir=Path(args.out))
    for recipe in progress(recipes, None, desc="figures"):
        print(recipe(ctx))
    return 0


def cmd_train(args) -> int:
    import numpy as np

    from figures.learning_curves import draw
    from testbeds.network import torch_device
    from testbeds.training import TrainProgress, choose_point, final_accuracy, paper_lr0
    from theorylab.config import RunConfig
    from theorylab.registry import build
    from theorylab.runner import run

    torch_device(args.device)  # fail before loading data when the device is missing
    problem = {"name": args.testbed, "model": args.model, "clients": args.clients, "partition": args.partition,
               "alpha": args.alpha, "batch_size": args.batch_size,
               **_json_option("--testbed-options", args.testbed_options or "{}")}
    if args.label_swap is not None:
        problem["label_swap"] = {"fraction": args.label_swap}
    algorithm = (_json_option("--algorithm", args.algorithm, spec=True) if args.algorithm.lstrip().startswith("{")
                 else {"name": args.algorithm})
    if args.aggregation:
        algorithm["aggregation"] = args.aggregation
    if args.topology is not None:
        algorithm["topology"] = _topology_spec(args.topology, algorithm, args.clients)
    if algorithm.get("name") == "afga" and args.participation is None:  # AFGA samples M of N clients (seed 002 §6: 10%)
        args.participation = json.dumps({"name": "uniform_k", "n_clients": args.clients,
                                         "k": max(1, args.clients // 10)})
    dynamics = _check_train_combination(args, algorithm)
    if args.beta is not None:
        algorithm["beta"] = args.beta
    traces = []
    try:
        runs = [(seed, {**problem, "seed": seed}) for seed in args.seeds]
        runs = [(seed, spec, *_train_participation(args, spec, algorithm, dynamics)) for seed, spec in runs]
        lr0 = args.lr if args.lr is not None else paper_lr0(runs[0][3]) or DEFAULT_LR0
        lr = {"name": "inverse_sqrt", "lr0": lr0, "t0": 10} if args.schedule == "inverse_sqrt" else lr0
        runs = [(seed, spec, part, _masfl_steps(args, kernel) if kernel.get("name") in ("masfl", "adamasfl")
                 else {"local_steps": args.local_steps, "lr": lr, **kernel}) for seed, spec, part, kernel in runs]
        label = build("algorithm", runs[0][3]).name
        point = choose_point(runs[0][3], problem["clients"], args.point)
        store = _store(args)  # only once every usage error has had its chance
        for seed, spec, participation, kernel in runs:
            config = RunConfig(spec, participation, kernel, args.rounds, args.replicas, seed, args.every,
                               args.device, args.dtype, clock=_clock_spec(args.asynchrony, problem["clients"]))
            bar = TrainProgress(args.rounds, args.local_steps * args.batch_size, point, f"{label} seed {seed}")
            traces.append(run(config, store, progress_bar=False, on_record=bar))
    except FileNotFoundError as err:
        print(f"theorylab: error: {err}", file=sys.stderr)
        return 2
    window = min(args.window, min(len(t.rounds) for t in traces))  # as many evaluations as there are
    accuracy = np.concatenate([final_accuracy(t, point, window) for t in traces])
    name = f"train-{args.testbed}-{label.replace('[', '-').rstrip(']')}-{dynamics}"
    figure = draw({f"{args.testbed}, {dynamics} participation": {label: traces}},
                  Path(args.out) / "figures" / f"{name}.png", {label: point},
                  f"{label} on {args.testbed} ({args.model}, {args.clients} clients): mean ± sample std over runs")
    spread = f" ± {accuracy.std(ddof=1):.2f}" if len(accuracy) > 1 else ""
    print(f"{label} ({_step_size(runs[0][3])}): final test accuracy of the {point} model (mean of the last "
          f"{window} evaluations{_fewer(window, args.window)}) {accuracy.mean():.2f}{spread} % over "
          f"{len(accuracy)} run(s); "
          f"{sum(t.seconds for t in traces):.1f} s simulated\nfigure: {figure}")
    if args.asynchrony:
        final = {k: np.mean([t.metrics[f"clock.{k}"][:, -1] for t in traces]) for k in ("tau_avg", "tau_max", "time")}
        print(f"asynchrony: mean staleness {final['tau_avg']:.3f}, largest {final['tau_max']:.0f}, simulated clock "
              f"{final['time']:.1f} s at the last server step (mean over runs; per-round values in the trace's clock.*)")
    return 0


def _fewer(used: int, asked: int) -> str:
    """Say so when the final accuracy averages fewer evaluations than --window asked for."""
    return "" if used == asked else f"; --window {asked} asked for more than the {used} recorded"


def _masfl_steps(args, kernel: dict) -> dict:
    """MasFL / AdaMasFL take no ``lr``: unless the spec sets them, (beta, gamma, eta) are Theorem 4.1's problem-free
    choice (seed 004; :func:`theorylab.bounds.masfl.steps_thm41`) with S the clock's buffer (10% of the clients
    without a clock), K = --local-steps and T = --rounds."""
    from theorylab.bounds.masfl import steps_thm41

    clock = _clock_spec(args.asynchrony, args.clients) or {}
    steps = steps_thm41(int(clock.get("buffer", max(1, args.clients // 10))), args.local_steps, args.rounds)
    return {"local_steps": args.local_steps, **steps._asdict(), **kernel}


def _clock_spec(text: str | None, clients: int) -> dict | None:
    """``--asynchrony``'s JSON clock spec (theorylab.clocks), its ``n_clients`` defaulting to ``--clients``."""
    if not text:
        return None
    spec = _json_option("--asynchrony", text)
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise ValueError(f"--asynchrony must be a JSON clock spec with a 'name' (buffered | all_busy); got {text!r}")
    return {"n_clients": clients, **spec}


def _check_train_combination(args, algorithm: dict) -> str:
    """The participation's name (``custom`` for a JSON spec), after refusing combinations that cannot run: CA-Fed
    needs the oracle (pi, lambda) of ``markov`` availability; ``--beta`` is FedStale's; ``--p-min`` sets
    ``two_groups``.  Defaults: ``markov`` for cafed, ``two_groups`` for fedstale, FedAWE's ``sine`` otherwise."""
    name = algorithm.get("name")
    default = {"cafed": "markov", "fedstale": "two_groups"}.get(name, "sine")
    dynamics = args.participation or default
    custom = dynamics.lstrip().startswith("{")
    if not custom and dynamics not in (*DYNAMICS, "markov", "two_groups"):
        raise ValueError(f"--participation must be one of {(*DYNAMICS, 'markov', 'two_groups')} or a JSON "
                         f"participation spec; got {dynamics!r}")
    if args.beta is not None and name != "fedstale":
        raise ValueError(f"--beta is FedStale's staleness weight; it needs --algorithm fedstale, not {name!r}")
    if args.p_min is not None and dynamics != "two_groups":
        raise ValueError(f"--p-min sets the rare group of --participation two_groups, not {dynamics!r}")
    markov_spec = custom and _json_option("--participation", dynamics, spec=True).get("name") == "markov"
    if name == "cafed" and dynamics != "markov" and not markov_spec:
        raise ValueError(f"--algorithm cafed needs Markov availability (--participation markov or a JSON 'markov' "
                         f"spec) for its oracle (pi, lambda); got {dynamics!r}")
    return "custom" if custom else dynamics


def _train_participation(args, spec: dict, algorithm: dict, dynamics: str) -> tuple[dict, dict]:
    """The participation spec of one seed's run and the algorithm spec completed for it (CA-Fed: the chains'
    oracle pi and lambda, and the running-minimum F_i* since a network has no known minima)."""
    from testbeds.network import fedawe_participation
    from testbeds.thesis_recipes import thesis_markov_participation, two_group_participation

    if dynamics == "custom":
        participation = _json_option("--participation", args.participation, spec=True)
    elif dynamics == "markov":
        participation = thesis_markov_participation(spec["clients"], spec["seed"])
    elif dynamics == "two_groups":
        p_min = 0.1 if args.p_min is None else args.p_min
        participation = two_group_participation(spec["clients"], spec["seed"], p_min)
    else:
        participation = fedawe_participation(spec, dynamics)
    if algorithm["name"] == "cafed":
        algorithm = {"pi": participation["pi"], "lam": participation["lam"], "f_star": "running_min", **algorithm}
    return participation, algorithm


def _topology_spec(text: str, algorithm: dict, clients: int) -> dict:
    """``--topology``: a registered topology name (built over ``clients`` clients) or a JSON topology spec; only
    the gossip algorithm (afga) reads one."""
    if algorithm.get("name") != "afga":
        raise ValueError(f"--topology sets the gossip graph of --algorithm afga, not {algorithm.get('name')!r}")
    return _json_option("--topology", text) if text.lstrip().startswith("{") else {"name": text, "n": clients}


def _json_option(option: str, text: str, spec: bool = False) -> dict:
    """The JSON object an option holds (a component ``spec`` needs a ``name``), or a ValueError naming the option
    (not only the parser's complaint)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{option} is not valid JSON ({err}): {text!r}") from None
    if not isinstance(value, dict) or (spec and not isinstance(value.get("name"), str)):
        raise ValueError(f"{option} must be a JSON object {{...}}{' with a name' if spec else ''}; got {text!r}")
    return value


def _step_size(kernel: dict) -> str:
    """The step sizes of a run's kernel spec as the summary line shows them: a schedule's eta_0, the ``lr`` spec as
    given, or MasFL's (beta, gamma, eta)."""
    lr = kernel.get("lr")
    if lr is None:
        return ", ".join(f"{k} = {kernel[k]:.4g}" for k in ("beta", "gamma", "eta") if k in kernel)
    return f"eta_0 = {lr['lr0']:g}" if isinstance(lr, dict) and "lr0" in lr else f"lr = {json.dumps(lr)}"


def _int(low: int):
    """An argparse type: an integer >= ``low``, else a usage error (exit 2) that argparse prefixes with the option."""
    def parse(text: str) -> int:
        try:
            return integer("the value", int(text), low)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer in [{low}, inf]; got {text!r}") from None
    return parse


def _float(low: float, high: float = math.inf, open_low: bool = False):
    """An argparse type: a finite number in ``[low, high]`` (``(low, high]`` when ``open_low``), else a usage error."""
    def parse(text: str) -> float:
        try:
            return real("the value", float(text), low, high, open_low)
        except ValueError:
            interval = f"{'(' if open_low else '['}{low:g}, {high:g}{')' if math.isinf(high) else ']'}"
            raise argparse.ArgumentTypeError(f"must be a finite number in {interval}; got {text!r}") from None
    return parse


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="theorylab", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    ls = sub.add_parser("list", help="list claims, algorithms, testbeds, participation processes, figures")
    ls.add_argument("kind", nargs="?", choices=KINDS)
    ls.set_defaults(func=cmd_list)

    def common(sp, out_default):
        sp.add_argument("--seed", type=_int(0), default=0, help="base seed of every random stream (default 0)")
        sp.add_argument("--out", default=out_default, help=f"output folder (default {out_default})")
        sp.add_argument("--quick", action="store_true", help="small budget: fewer replicas and rounds")
        sp.add_argument("--store", help="result-store file (default OUT/store.sqlite)")
        sp.add_argument("--no-cache", action="store_true", help="neither read nor write the result store")

    def cluster(sp):
        sp.add_argument("--workers", type=_int(1), help="run the claims in parallel on a dask LocalCluster of this "
                        "many single-threaded workers (default: serial, in this process)")
        sp.add_argument("--scheduler", help="run the claims on the dask cluster at this address (tcp://HOST:PORT)")

    va = sub.add_parser("validate", help="run claims and report their verdicts")
    va.add_argument("ids", nargs="*", help="claim ids or prefixes (e.g. fedawe, fedawe.prop1); default all")
    va.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    cluster(va)
    common(va, "results")
    va.set_defaults(func=cmd_validate)

    er = sub.add_parser("errata", help="run the papers' claims and write OUT/errata.md: every finding with its quote, "
                        "witness, readings, defence, severity and command")
    er.add_argument("papers", nargs="*", help="paper prefixes (fedawe, thesis, afga, performative, masfl); default all")
    cluster(er)
    common(er, "results")
    er.set_defaults(func=cmd_errata)

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
    sw.add_argument("--workers", type=_int(1), help="workers of the local dask cluster (default: one per core)")
    sw.add_argument("--scheduler", help="address of an existing dask scheduler (tcp://HOST:PORT) instead")
    sw.add_argument("--out", help="output folder (default results/sweep-<grid name>)")
    sw.add_argument("--store", help="result-store file (default OUT/store.sqlite); finished cells are read back")
    sw.add_argument("--max-cells", type=_int(1), default=100_000, help="refuse a grid of more cells than this "
                    "before building them (default 100000)")
    sw.set_defaults(func=cmd_sweep)

    fi = sub.add_parser("figure", help="render figures by name")
    fi.add_argument("names", nargs="*")
    fi.add_argument("--all", action="store_true", help="render every registered figure")
    common(fi, "figures/gallery")
    fi.set_defaults(func=cmd_figure)

    tr = sub.add_parser("train", help="train a network testbed with a federated algorithm; learning-curve figure")
    tr.add_argument("--testbed", default="fmnist", help="image testbed (fmnist, mnist10k, digits, cifar10, svhn, "
                    "synthetic; default fmnist)")
    tr.add_argument("--testbed-options", help='JSON of further testbed parameters, e.g. \'{"train_size": 5000}\'')
    tr.add_argument("--model", default="cnn_cifar", help="cnn_svhn | cnn_cifar | cnn_cinic | mlp | logistic")
    tr.add_argument("--clients", type=_int(1), default=100)
    tr.add_argument("--partition", default="dirichlet", help="dirichlet | dirichlet_per_class | classes | iid")
    tr.add_argument("--alpha", type=_float(0.0, open_low=True), default=0.1,
                    help="Dirichlet concentration (default 0.1)")
    tr.add_argument("--batch-size", type=_int(1), default=128)
    tr.add_argument("--algorithm", default="fedavg", help="registered algorithm name or a JSON spec")
    tr.add_argument("--aggregation", help="FedAvg aggregation: active | all | known_p")
    tr.add_argument("--topology", help="gossip graph of --algorithm afga: a topology name over --clients clients "
                    "(ring, complete, ...; theorylab list topology) or a JSON topology spec; afga's participation "
                    "defaults to uniform_k with 10%% of the clients")
    tr.add_argument("--local-steps", type=_int(1), default=10)
    tr.add_argument("--lr", type=_float(0.0, open_low=True), help="local step size eta_0 (default: FedAWE Table 7's "
                    "value for the algorithm, 0.1 for fedawe and fedavg known_p, 0.05 for fedavg active/all, fedau, f3ast, mifa, fedvarp; "
                    f"{DEFAULT_LR0} for any other)")
    tr.add_argument("--schedule", choices=("inverse_sqrt", "constant"), default="inverse_sqrt",
                    help="eta_0 / sqrt(t/10 + 1) as FedAWE's code (default), or constant")
    tr.add_argument("--participation", help="FedAWE dynamics on the recipe p_i = <nu_i, phi> (stationary | "
                    "staircase | sine | interleaved_sine), markov (CA-Fed's four availability classes, thesis "
                    "§2.5.1), two_groups (FedStale's p = 1 / p_min halves, thesis §3.5.1) or a JSON participation "
                    "spec; default markov for cafed, two_groups for fedstale, sine otherwise")
    tr.add_argument("--beta", type=float,  # its range is checked by fedstale, after --algorithm
                    help="FedStale's weight of stale updates in [0, 1] (fedstale only)")
    tr.add_argument("--p-min", type=_float(0.0, 1.0, open_low=True),
                    help="participation probability of the rare group of two_groups (default 0.1)")
    tr.add_argument("--label-swap", type=_float(0.0, 1.0), help="FedStale's data heterogeneity sigma_g^2: the "
                    "fraction of the rare group's labels 0 and 1 that are swapped (thesis §3.5.1)")
    tr.add_argument("--asynchrony", "--clock", dest="asynchrony", help="JSON clock spec that runs the algorithm "
                    "asynchronously on a virtual clock, e.g. '{\"name\": \"buffered\", \"concurrency\": 20, "
                    "\"buffer\": 10}' (FedBuff, seed 004) or '{\"name\": \"all_busy\", \"sample\": 10}'; "
                    "n_clients defaults to --clients; a round is then a server step")
    tr.add_argument("--rounds", type=_int(1), default=100)
    tr.add_argument("--every", type=_int(1), default=10, help="evaluate every this many rounds (default 10)")
    tr.add_argument("--window", type=_int(1), default=5, help="final accuracy = mean of the last WINDOW evaluations")
    tr.add_argument("--seeds", type=_int(0), nargs="+", default=[0], help="one run per seed (partition, phi, streams)")
    tr.add_argument("--replicas", type=_int(1), default=1, help="replicas per seed (same partition)")
    tr.add_argument("--point", help="model to report (default: the point the algorithm's theory evaluates, the "
                    "all-client mean for fedawe, the server model for the others); an unknown point is an error")
    tr.add_argument("--device", default="cpu", help="cpu or cuda (an error when CUDA is not available)")
    tr.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    tr.add_argument("--out", default="results", help="output folder (default results)")
    tr.add_argument("--store", help="result-store file (default OUT/store.sqlite)")
    tr.add_argument("--no-cache", action="store_true", help="neither read nor write the result store")
    tr.set_defaults(func=cmd_train)
    return p


def main(argv=None) -> int:
    """Run a command; a ValueError is a one-line error (exit 2); a reader that closes the pipe early (``| head``)
    ends the command quietly with the shell's SIGPIPE status 141, as other command-line tools do."""
    args = parser().parse_args(argv)
    try:
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
