"""Command line: ``theorylab list | validate | figure | train``.

``theorylab validate [IDS...] [--quick]`` runs claims (all, or those whose id
equals or starts with an argument), prints a table / JSON / Markdown, and writes
``report.md``, ``claims.json`` and figures under ``--out``.  It exits non-zero when
a claim's code errors, not when a paper's claim is violated.

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
import sys
from pathlib import Path

from theorylab import report
from theorylab.claims import Context, evaluate, select
from theorylab.progress import progress
from theorylab.registry import KINDS, entries, lookup
from theorylab.store import Store


DEFAULT_LR0 = 0.05  # train's eta_0 for algorithms that FedAWE's Table 7 does not list
HEADINGS = {"testbed": "testbeds", "participation": "participation processes", "channel": "lossy channels",
            "clock": "asynchronous clocks", "topology": "gossip topologies", "algorithm": "algorithms",
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
    import numpy as np

    from figures.learning_curves import draw
    from testbeds.network import torch_device
    from testbeds.training import TrainProgress, choose_point, final_accuracy, paper_lr0
    from theorylab.config import RunConfig
    from theorylab.registry import build
    from theorylab.runner import run

    torch_device(args.device)  # fail before loading data when the device is missing
    problem = {"name": args.testbed, "model": args.model, "clients": args.clients, "partition": args.partition,
               "alpha": args.alpha, "batch_size": args.batch_size, **json.loads(args.testbed_options or "{}")}
    if args.label_swap is not None:
        problem["label_swap"] = {"fraction": args.label_swap}
    algorithm = json.loads(args.algorithm) if args.algorithm.lstrip().startswith("{") else {"name": args.algorithm}
    if args.aggregation:
        algorithm["aggregation"] = args.aggregation
    dynamics = _check_train_combination(args, algorithm)
    if args.beta is not None:
        algorithm["beta"] = args.beta
    traces = []
    try:
        runs = [(seed, {**problem, "seed": seed}) for seed in args.seeds]
        runs = [(seed, spec, *_train_participation(args, spec, algorithm, dynamics)) for seed, spec in runs]
        lr0 = args.lr if args.lr is not None else paper_lr0(runs[0][3]) or DEFAULT_LR0
        lr = {"name": "inverse_sqrt", "lr0": lr0, "t0": 10} if args.schedule == "inverse_sqrt" else lr0
        runs = [(seed, spec, part, {"local_steps": args.local_steps, "lr": lr, **kernel})
                for seed, spec, part, kernel in runs]
        label = build("algorithm", runs[0][3]).name
        point = choose_point(runs[0][3], problem["clients"], args.point)
        store = _store(args)  # only once every usage error has had its chance
        for seed, spec, participation, kernel in runs:
            config = RunConfig(spec, participation, kernel, args.rounds, args.replicas, seed, args.every,
                               args.device, args.dtype)
            bar = TrainProgress(args.rounds, args.local_steps * args.batch_size, point, f"{label} seed {seed}")
            traces.append(run(config, store, progress_bar=False, on_record=bar))
    except FileNotFoundError as err:
        print(f"theorylab: error: {err}", file=sys.stderr)
        return 2
    accuracy = np.concatenate([final_accuracy(t, point, args.window) for t in traces])
    name = f"train-{args.testbed}-{label.replace('[', '-').rstrip(']')}-{dynamics}"
    figure = draw({f"{args.testbed}, {dynamics} participation": {label: traces}},
                  Path(args.out) / "figures" / f"{name}.png", {label: point},
                  f"{label} on {args.testbed} ({args.model}, {args.clients} clients): mean ± sample std over runs")
    spread = f" ± {accuracy.std(ddof=1):.2f}" if len(accuracy) > 1 else ""
    print(f"{label} ({_step_size(runs[0][3]['lr'])}): final test accuracy of the {point} model (mean of the last "
          f"{args.window} evaluations) {accuracy.mean():.2f}{spread} % over {len(accuracy)} run(s); "
          f"{sum(t.seconds for t in traces):.1f} s simulated\nfigure: {figure}")
    return 0


def _check_train_combination(args, algorithm: dict) -> str:
    """The participation's name (``custom`` for a JSON spec), after refusing combinations that cannot run: CA-Fed
    needs the oracle (pi, lambda) of ``markov`` availability; ``--beta`` is FedStale's; ``--p-min`` sets
    ``two_groups``.  Defaults: ``markov`` for cafed, ``two_groups`` for fedstale, FedAWE's ``sine`` otherwise."""
    name = algorithm.get("name")
    default = {"cafed": "markov", "fedstale": "two_groups"}.get(name, "sine")
    dynamics = args.participation or default
    custom = dynamics.lstrip().startswith("{")
    if args.beta is not None and name != "fedstale":
        raise ValueError(f"--beta is FedStale's staleness weight; it needs --algorithm fedstale, not {name!r}")
    if args.p_min is not None and dynamics != "two_groups":
        raise ValueError(f"--p-min sets the rare group of --participation two_groups, not {dynamics!r}")
    if name == "cafed" and dynamics != "markov" and not (custom and json.loads(dynamics).get("name") == "markov"):
        raise ValueError(f"--algorithm cafed needs Markov availability (--participation markov or a JSON 'markov' "
                         f"spec) for its oracle (pi, lambda); got {dynamics!r}")
    return "custom" if custom else dynamics


def _train_participation(args, spec: dict, algorithm: dict, dynamics: str) -> tuple[dict, dict]:
    """The participation spec of one seed's run and the algorithm spec completed for it (CA-Fed: the chains'
    oracle pi and lambda, and the running-minimum F_i* since a network has no known minima)."""
    from testbeds.network import fedawe_participation
    from testbeds.thesis_recipes import thesis_markov_participation, two_group_participation

    if dynamics == "custom":
        participation = json.loads(args.participation)
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


def _step_size(lr) -> str:
    """The local step size of a run as the summary line shows it: a schedule's eta_0, or the spec as given."""
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
    tr.add_argument("--participation", help="FedAWE dynamics on the recipe p_i = <nu_i, phi> (stationary | "
                    "staircase | sine | interleaved_sine), markov (CA-Fed's four availability classes, thesis "
                    "§2.5.1), two_groups (FedStale's p = 1 / p_min halves, thesis §3.5.1) or a JSON participation "
                    "spec; default markov for cafed, two_groups for fedstale, sine otherwise")
    tr.add_argument("--beta", type=float, help="FedStale's weight of stale updates in [0, 1] (fedstale only)")
    tr.add_argument("--p-min", type=float, help="participation probability of the rare group of two_groups "
                    "(default 0.1)")
    tr.add_argument("--label-swap", type=float, help="FedStale's data heterogeneity sigma_g^2: the fraction of the "
                    "rare group's labels 0 and 1 that are swapped (thesis §3.5.1)")
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
