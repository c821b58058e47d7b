"""Command line: ``theorylab list | validate | figure | train``.

``theorylab validate [IDS...] [--quick]`` runs claims (all, or those whose id
equals or starts with an argument), prints a table / JSON / Markdown, and writes
``report.md``, ``claims.json`` and figures under ``--out``.  It exits non-zero when
a claim's code errors, not when a paper's claim is violated.

``theorylab train --testbed fmnist --algorithm fedavg --participation sine --rounds R`` trains a
network testbed for each ``--seeds`` value (results in the store), shows round, accuracy and
throughput while it runs, and draws the learning curves (mean ± sample std over seeds).  By default
each algorithm runs with FedAWE Table 7's step size and is read at the point its theory evaluates
(FedAWE: the all-client mean); ``--lr`` and ``--point`` override them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from theorylab import report
from theorylab.claims import Context, evaluate, select
from theorylab.progress import progress
from theorylab.registry import KINDS, entries, lookup
from theorylab.store import Store


DEFAULT_LR0 = 0.05  # train's eta_0 for algorithms that FedAWE's Table 7 does not list
HEADINGS = {"testbed": "testbeds", "participation": "participation processes", "algorithm": "algorithms",
            "claim": "claims", "figure": "figures"}


def _store(args) -> Store | None:
    if args.no_cache:
        return None
    return Store(args.store or Path(args.out) / "store.sqlite")


def cmd_list(args) -> int:
    kinds = [args.kind] if args.kind else list(KINDS)
    for kind in kinds:
        print(f"{HEADINGS[kind]}:")
        for name, entry in entries(kind).items():
            print(f"  {name:34s} {entry.summary}")
        print()
    return 0


def cmd_validate(args) -> int:
    claims = select(args.ids)
    out = Path(args.out)
    ctx = Context(quick=args.quick, seed=args.seed, store=_store(args), figure_dir=out / "figures", progress=False)
    results = []
    bar = progress(claims, None, desc="claims", unit="claim")
    for c in bar:
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(c.id)
        results.append(evaluate(c, ctx))
    mode = "quick" if args.quick else "full"
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(report.markdown(results, mode, args.seed, out))
    (out / "claims.json").write_text(report.as_json(results))
    rendered = {"table": report.table, "json": report.as_json}.get(args.format)
    print(rendered(results) if rendered else report.markdown(results, mode, args.seed, out))
    if args.format == "table":
        print(f"\nreport: {out / 'report.md'}  json: {out / 'claims.json'}  figures: {out / 'figures'}")
    for r in results:
        if r.error:
            print(f"\n{r.claim.id} raised:\n{r.error}", file=sys.stderr)
    return 1 if any(r.error for r in results) else 0


def cmd_figure(args) -> int:
    names = list(entries("figure")) if args.all else args.names
    if not names:
        print("name a figure or pass --all; see `theorylab list figure`", file=sys.stderr)
        return 2
    ctx = Context(quick=args.quick, seed=args.seed, store=_store(args), figure_dir=Path(args.out))
    for name in progress(names, None, desc="figures"):
        print(lookup("figure", name).obj(ctx))
    return 0


def cmd_train(args) -> int:
    import json

    import numpy as np

    from figures.learning_curves import draw
    from testbeds.network import fedawe_participation, torch_device
    from testbeds.training import TrainProgress, choose_point, final_accuracy, paper_lr0
    from theorylab.config import RunConfig
    from theorylab.registry import build
    from theorylab.runner import run

    torch_device(args.device)  # fail before loading data when the device is missing
    problem = {"name": args.testbed, "model": args.model, "clients": args.clients, "partition": args.partition,
               "alpha": args.alpha, "batch_size": args.batch_size, **json.loads(args.testbed_options or "{}")}
    algorithm = json.loads(args.algorithm) if args.algorithm.lstrip().startswith("{") else {"name": args.algorithm}
    if args.aggregation:
        algorithm["aggregation"] = args.aggregation
    lr0 = args.lr if args.lr is not None else paper_lr0(algorithm) or DEFAULT_LR0
    algorithm = {"local_steps": args.local_steps, "lr": {"name": "inverse_sqrt", "lr0": lr0, "t0": 10}
                 if args.schedule == "inverse_sqrt" else lr0, **algorithm}
    label = build("algorithm", algorithm).name
    point = choose_point(algorithm, problem["clients"], args.point)
    store, traces = _store(args), []
    try:
        for seed in args.seeds:
            spec = {**problem, "seed": seed}
            if args.participation.lstrip().startswith("{"):
                participation = json.loads(args.participation)
            else:
                participation = fedawe_participation(spec, args.participation)
            config = RunConfig(spec, participation, algorithm, args.rounds, args.replicas, seed, args.every,
                               args.device, args.dtype)
            bar = TrainProgress(args.rounds, args.local_steps * args.batch_size, point, f"{label} seed {seed}")
            traces.append(run(config, store, progress_bar=False, on_record=bar))
    except FileNotFoundError as err:
        print(f"theorylab: error: {err}", file=sys.stderr)
        return 2
    accuracy = np.concatenate([final_accuracy(t, point, args.window) for t in traces])
    dynamics = "custom" if args.participation.lstrip().startswith("{") else args.participation
    name = f"train-{args.testbed}-{label.replace('[', '-').rstrip(']')}-{dynamics}"
    figure = draw({f"{args.testbed}, {dynamics} participation": {label: traces}},
                  Path(args.out) / "figures" / f"{name}.png", {label: point},
                  f"{label} on {args.testbed} ({args.model}, {args.clients} clients): mean ± sample std over runs")
    spread = f" ± {accuracy.std(ddof=1):.2f}" if len(accuracy) > 1 else ""
    print(f"{label} ({_step_size(algorithm['lr'])}): final test accuracy of the {point} model (mean of the last {args.window} "
          f"evaluations) {accuracy.mean():.2f}{spread} % over {len(accuracy)} run(s); "
          f"{sum(t.seconds for t in traces):.1f} s simulated\nfigure: {figure}")
    return 0


def _step_size(lr) -> str:
    """The local step size of a run as the summary line shows it: a schedule's eta_0, or the spec as given."""
    import json

    return f"eta_0 = {lr['lr0']:g}" if isinstance(lr, dict) and "lr0" in lr else f"lr = {json.dumps(lr)}"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="theorylab", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    ls = sub.add_parser("list", help="list claims, algorithms, testbeds, participation processes, figures")
    ls.add_argument("kind", nargs="?", choices=KINDS)
    ls.set_defaults(func=cmd_list)

    def common(sp, out_default):
        sp.add_argument("--seed", type=int, default=0, help="base seed of every random stream (default 0)")
        sp.add_argument("--out", default=out_default, help=f"output folder (default {out_default})")
        sp.add_argument("--quick", action="store_true", help="small budget: fewer replicas and rounds")
        sp.add_argument("--store", help="result-store file (default OUT/store.sqlite)")
        sp.add_argument("--no-cache", action="store_true", help="neither read nor write the result store")

    va = sub.add_parser("validate", help="run claims and report their verdicts")
    va.add_argument("ids", nargs="*", help="claim ids or prefixes (e.g. fedawe, fedawe.prop1); default all")
    va.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    common(va, "results")
    va.set_defaults(func=cmd_validate)

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
    tr.add_argument("--clients", type=int, default=100)
    tr.add_argument("--partition", default="dirichlet", help="dirichlet | dirichlet_per_class | classes | iid")
    tr.add_argument("--alpha", type=float, default=0.1, help="Dirichlet concentration (default 0.1)")
    tr.add_argument("--batch-size", type=int, default=128)
    tr.add_argument("--algorithm", default="fedavg", help="registered algorithm name or a JSON spec")
    tr.add_argument("--aggregation", help="FedAvg aggregation: active | all | known_p")
    tr.add_argument("--local-steps", type=int, default=10)
    tr.add_argument("--lr", type=float, help="local step size eta_0 (default: FedAWE Table 7's value for the "
                    "algorithm, 0.1 for fedawe and fedavg known_p, 0.05 for fedavg active/all, fedau, f3ast, mifa, fedvarp; "
                    f"{DEFAULT_LR0} for any other)")
    tr.add_argument("--schedule", choices=("inverse_sqrt", "constant"), default="inverse_sqrt",
                    help="eta_0 / sqrt(t/10 + 1) as FedAWE's code (default), or constant")
    tr.add_argument("--participation", default="sine", help="FedAWE dynamics on the recipe p_i = <nu_i, phi> "
                    "(stationary | staircase | sine | interleaved_sine) or a JSON participation spec")
    tr.add_argument("--rounds", type=int, default=100)
    tr.add_argument("--every", type=int, default=10, help="evaluate every this many rounds (default 10)")
    tr.add_argument("--window", type=int, default=5, help="final accuracy = mean of the last WINDOW evaluations")
    tr.add_argument("--seeds", type=int, nargs="+", default=[0], help="one run per seed (partition, phi, streams)")
    tr.add_argument("--replicas", type=int, default=1, help="replicas per seed (same partition)")
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
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as err:
        print(f"theorylab: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
