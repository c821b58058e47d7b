"""``theorylab train``: a federated algorithm on an image testbed, one run per seed, with its learning curves.

Like :mod:`theorylab.app.cli`, this module assembles the layers (it imports the network testbeds and the learning-curve
figure), which no other engine module may do (``tests/test_layout.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from theorylab.app.options import add_plugin, int_at_least, number_in, store_of
from theorylab.participation.dynamics import DYNAMICS

DEFAULT_LR0 = 0.05  # train's eta_0 for algorithms that FedAWE's Table 7 does not list


def cmd_train(args) -> int:
    import numpy as np

    from theorylab.figures.learning_curves import draw
    from theorylab.testbeds.network import torch_device
    from theorylab.testbeds.training import TrainProgress, choose_point, final_accuracy, paper_lr0
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
    if algorithm.get("name") == "fedcis" and args.participation is None:  # Alg. 6: every node, each draws its exit
        args.participation = json.dumps({"name": "cyclic", "n_clients": args.clients, "groups": 1})
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
        store = store_of(args)  # only once every usage error has had its chance
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
    exits = _exit_accuracies(traces, window)
    if exits:
        print(f"per exit (test accuracy of the exit's prefix model, mean over runs): {exits}")
    if args.asynchrony:
        final = {k: np.mean([t.metrics[f"clock.{k}"][:, -1] for t in traces]) for k in ("tau_avg", "tau_max", "time")}
        print(f"asynchrony: mean staleness {final['tau_avg']:.3f}, largest {final['tau_max']:.0f}, simulated clock "
              f"{final['time']:.1f} s at the last server step (mean over runs; per-round values in the trace's clock.*)")
    return 0


def _exit_accuracies(traces, window: int) -> str:
    """Fed-CIS's own metric: the final test accuracy of every exit point (``exit1`` ... ``exitE``) a run records,
    "" for algorithms without exits."""
    import numpy as np

    from theorylab.testbeds.training import final_accuracy

    names = sorted({k.split(".")[0] for k in traces[0].metrics if k.startswith("exit") and k.endswith(".test_acc")},
                   key=lambda name: int(name[4:]))
    return ", ".join(f"{name} {np.mean([final_accuracy(t, name, window) for t in traces]):.2f} %" for name in names)


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
    from theorylab.testbeds.network import fedawe_participation
    from theorylab.testbeds.thesis_recipes import thesis_markov_participation, two_group_participation

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


def add_train_parser(sub) -> None:
    """The ``train`` subcommand and its options."""
    tr = sub.add_parser("train", help="train a network testbed with a federated algorithm; learning-curve figure")
    tr.add_argument("--testbed", default="fmnist", help="image testbed (fmnist, mnist10k, digits, cifar10, svhn, "
                    "synthetic; default fmnist)")
    tr.add_argument("--testbed-options", help='JSON of further testbed parameters, e.g. \'{"train_size": 5000}\'')
    tr.add_argument("--model", default="cnn_cifar", help="cnn_svhn | cnn_cifar | cnn_cinic | mlp | logistic")
    tr.add_argument("--clients", type=int_at_least(1), default=100)
    tr.add_argument("--partition", default="dirichlet", help="dirichlet | dirichlet_per_class | classes | iid")
    tr.add_argument("--alpha", type=number_in(0.0, open_low=True), default=0.1,
                    help="Dirichlet concentration (default 0.1)")
    tr.add_argument("--batch-size", type=int_at_least(1), default=128)
    tr.add_argument("--algorithm", default="fedavg", help="registered algorithm name or a JSON spec, e.g. "
                    "'{\"name\": \"fedcis\", \"cuts\": [0.5, 1.0], \"p\": 0.2}' (Fed-CIS, seed 001 Alg. 6)")
    tr.add_argument("--aggregation", help="FedAvg aggregation: active | all | known_p")
    tr.add_argument("--topology", help="gossip graph of --algorithm afga: a topology name over --clients clients "
                    "(ring, complete, ...; theorylab list topology) or a JSON topology spec; afga's participation "
                    "defaults to uniform_k with 10%% of the clients")
    tr.add_argument("--local-steps", type=int_at_least(1), default=10)
    tr.add_argument("--lr", type=number_in(0.0, open_low=True), help="local step size eta_0 (default: FedAWE Table 7's "
                    "value for the algorithm, 0.1 for fedawe and fedavg known_p, 0.05 for fedavg active/all, fedau, f3ast, mifa, fedvarp; "
                    f"{DEFAULT_LR0} for any other)")
    tr.add_argument("--schedule", choices=("inverse_sqrt", "constant"), default="inverse_sqrt",
                    help="eta_0 / sqrt(t/10 + 1) as FedAWE's code (default), or constant")
    tr.add_argument("--participation", help="FedAWE dynamics on the recipe p_i = <nu_i, phi> (stationary | "
                    "staircase | sine | interleaved_sine), markov (CA-Fed's four availability classes, thesis "
                    "§2.5.1), two_groups (FedStale's p = 1 / p_min halves, thesis §3.5.1) or a JSON participation "
                    "spec; default markov for cafed, two_groups for fedstale, every node every round for fedcis, sine "
                    "otherwise")
    tr.add_argument("--beta", type=float,  # its range is checked by fedstale, after --algorithm
                    help="FedStale's weight of stale updates in [0, 1] (fedstale only)")
    tr.add_argument("--p-min", type=number_in(0.0, 1.0, open_low=True),
                    help="participation probability of the rare group of two_groups (default 0.1)")
    tr.add_argument("--label-swap", type=number_in(0.0, 1.0), help="FedStale's data heterogeneity sigma_g^2: the "
                    "fraction of the rare group's labels 0 and 1 that are swapped (thesis §3.5.1)")
    tr.add_argument("--asynchrony", "--clock", dest="asynchrony", help="JSON clock spec that runs the algorithm "
                    "asynchronously on a virtual clock, e.g. '{\"name\": \"buffered\", \"concurrency\": 20, "
                    "\"buffer\": 10}' (FedBuff, seed 004) or '{\"name\": \"all_busy\", \"sample\": 10}'; "
                    "n_clients defaults to --clients; a round is then a server step")
    tr.add_argument("--rounds", type=int_at_least(1), default=100)
    tr.add_argument("--every", type=int_at_least(1), default=10, help="evaluate every this many rounds (default 10)")
    tr.add_argument("--window", type=int_at_least(1), default=5, help="final accuracy = mean of the last WINDOW evaluations")
    tr.add_argument("--seeds", type=int_at_least(0), nargs="+", default=[0], help="one run per seed (partition, phi, streams)")
    tr.add_argument("--replicas", type=int_at_least(1), default=1, help="replicas per seed (same partition)")
    tr.add_argument("--point", help="model to report (default: the point the algorithm's theory evaluates, the "
                    "all-client mean for fedawe, the server model for the others; fedcis also exposes exit1 ... "
                    "exitE); an unknown point is an error")
    tr.add_argument("--device", default="cpu", help="cpu or cuda (an error when CUDA is not available)")
    tr.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    tr.add_argument("--out", default="results", help="output folder (default results)")
    tr.add_argument("--store", help="result-store file (default OUT/store.sqlite)")
    tr.add_argument("--no-cache", action="store_true", help="neither read nor write the result store")
    add_plugin(tr)
    tr.set_defaults(func=cmd_train)
