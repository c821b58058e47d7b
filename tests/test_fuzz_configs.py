"""A fuzzed corpus of run configurations (issue 16): every bad input is answered with a clear error.

Every registered testbed, participation process, channel, clock, topology and algorithm has a valid *base* spec:
``{"name": ...}`` when its factory's parameters all have defaults, else the row of ``BASES`` below (a component
with neither fails ``test_every_component_has_a_running_base``, asking for its row, so new components join the
corpus by registering).  One field of one spec (or of the run, or one option of the command line) is mutated at
a time -- wrong type, NaN, +-inf, negative, zero, empty list, wrong length, an entry of a list, unknown key, huge
value -- and the run of 2 rounds x 2 replicas either

* finishes with finite metrics, or ``inf`` from a divergence the trace records (never a NaN), or
* raises ``ValueError`` / ``TypeError`` whose message names the mutated field (a refusal by the memory estimate,
  which names the run's sizes and the memory available, also counts for a huge value),

and never raises another exception type or runs past ``TIMEOUT_S``.  Hypothesis draws the cases: the ``fast``
profile (``make test``) a few per kind, ``--runslow`` many (``tests/conftest.py``).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import math
import re
import signal
import tempfile

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

from theorylab.app.cli import main
from theorylab.config import RunConfig
from theorylab.registry import build, entries
from theorylab.runner import run

M = 3  # clients of every base configuration
RUN = dict(rounds=2, replicas=2, seed=0, every=1)
TIMEOUT_S = 60  # a case running longer is a hang
HUGE = 10**12
CONTEXT = ("device", "dtype")  # run-level factory arguments, set by the config rather than by the spec
FIELDS = {"testbed": "problem", "participation": "participation", "algorithm": "algorithm", "channel": "channel",
          "clock": "clock"}  # registry kind -> RunConfig field
IMAGE = {"model": "logistic", "clients": M, "batch_size": 4, "train_size": 120, "eval_train": 30, "eval_test": 30}

BASES = {  # (kind, name) -> base spec, for factories with required arguments or defaults too large for a smoke run
    ("testbed", "quadratic"): {"hessians": [[[1.0, 0.0], [0.0, 2.0]]] * M,
                               "centers": [[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]]},
    ("testbed", "scalar_quadratic"): {"centers": [0.0, 1.0, 3.0]},
    ("testbed", "diagonal_quadratic"): {"curvatures": [[1.0, 2.0]] * M, "centers": [[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]]},
    ("testbed", "random_quadratic"): {"n_clients": M, "dim": 2},
    ("testbed", "gaussian_mean"): {"means": [1.0, 2.0, 3.0], "sensitivities": [0.1, 0.2, 0.3]},
    ("testbed", "gaussian_mean_paper"): {"n_clients": M},
    ("testbed", "nesterov_chain"): {"horizon": 3},
    ("testbed", "credit"): {"source": "synthetic", "n": 300, "n_clients": M},
    ("testbed", "synthetic_leaf"): {"n_clients": M, "batch": 4},
    **{("testbed", name): IMAGE for name in ("cifar10", "digits", "fmnist", "mnist10k", "svhn", "synthetic")},
    ("participation", "bernoulli"): {"p": [0.5, 0.8, 1.0]},
    ("participation", "cluster_uniform_k"): {"n_clients": M, "clusters": 1, "k": 2},
    ("participation", "clustered_markov"): {"clusters": [0, 1, 1], "pi": [0.5, 0.7], "lam": [0.2, -0.1]},
    ("participation", "cyclic"): {"n_clients": M, "groups": 3},
    ("participation", "markov"): {"pi": [0.5, 0.7, 0.9], "lam": [0.2, 0.0, -0.1]},
    ("participation", "uniform_k"): {"n_clients": M, "k": 2},
    ("channel", "bernoulli_loss"): {"downlink": [0.1, 0.2, 0.0], "uplink": [0.3, 0.0, 0.1]},
    ("channel", "gilbert_elliott"): {"uplink": {"to_bad": 0.1, "to_good": [0.3, 0.5, 0.9], "good": 0.0, "bad": 0.8},
                                     "n_clients": M},
    ("clock", "all_busy"): {"n_clients": M, "sample": 2},
    ("clock", "buffered"): {"n_clients": M, "concurrency": 2, "buffer": 1},
    ("topology", "block_diagonal"): {"sizes": [2, 1]},
    ("topology", "complete"): {"n": M},
    ("topology", "interpolated"): {"n": M, "lam": 0.5},
    ("topology", "erdos_renyi"): {"n": 4, "p": 0.8},
    ("topology", "random_doubly_stochastic"): {"n": M},
    ("topology", "ring"): {"n": M},
    ("topology", "subring"): {"members": [0, 1], "n": M},
    ("topology", "torus"): {"a": 2, "b": 2},
    ("algorithm", "cafed"): {"pi": [0.5, 0.7, 0.9], "lam": [0.2, 0.0, -0.1]},
    ("algorithm", "afga"): {"topology": {"name": "ring", "n": M}, "local_steps": 2},
    ("algorithm", "packet_loss"): {"loss": [0.1, 0.2, 0.0]},
    ("algorithm", "dadam"): {"topology": {"name": "ring", "n": M}, "local_steps": 2},
    ("algorithm", "dsgd"): {"topology": {"name": "ring", "n": M}, "local_steps": 2},
}
WITH = {  # (kind, name) -> the rest of the base configuration, where the defaults below do not fit
    ("algorithm", "cafed"): {"participation": {"name": "markov", "pi": [0.5, 0.7, 0.9], "lam": [0.2, 0.0, -0.1]}},
    ("algorithm", "pfedavg"): {"participation": {"name": "cyclic", "n_clients": M, "groups": 1}},
    ("algorithm", "packet_loss"): {"channel": {"name": "bernoulli_loss", "uplink": [0.1, 0.2, 0.0]}},
}
DEFAULT = {"problem": BASES["testbed", "random_quadratic"], "participation": BASES["participation", "bernoulli"],
           "algorithm": {"local_steps": 2}}
DEFAULT_NAMES = {"problem": "random_quadratic", "participation": "bernoulli", "algorithm": "fedavg"}


def components(kind: str) -> list[str]:
    return list(entries(kind))


def base_spec(kind: str, name: str) -> dict:
    """The component's base spec, or a failure asking for its row in ``BASES``."""
    if (kind, name) in BASES:
        return {"name": name, **BASES[kind, name]}
    required = [p for p, v in inspect.signature(entries(kind)[name].obj).parameters.items()
                if v.default is v.empty and v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD) and p not in CONTEXT]
    if required:
        pytest.fail(f"{kind} {name!r} needs {required}: add its base spec to BASES in tests/test_fuzz_configs.py")
    return {"name": name}


def base_config(kind: str, name: str) -> dict:
    fields = {f: {"name": DEFAULT_NAMES[f], **spec} for f, spec in DEFAULT.items()}
    if kind in FIELDS:
        fields[FIELDS[kind]] = base_spec(kind, name)
    return {**fields, **WITH.get((kind, name), {}), **RUN}


def mutants(value) -> list[tuple[str, object]]:
    """The one-field mutations of a value: ``(label, new value)``."""
    out = [("wrong type", 7 if isinstance(value, str) else "text"), ("wrong type", {"bogus": 1}), ("NaN", math.nan),
           ("+inf", math.inf), ("-inf", -math.inf), ("zero", 0), ("empty list", []), ("huge", HUGE),
           ("huge float", 1e300), ("none", None), ("negative", -1)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        out.append(("negated", -value))
    if isinstance(value, list) and value:
        out += [("wrong length", value + value[-1:]), ("wrong length", value[:-1])]
        out += [(f"entry {label}", [v] + value[1:]) for label, v in
                (("NaN", math.nan), ("negative", -1), ("huge", HUGE), ("wrong type", "text"), ("inf", math.inf))]
    if isinstance(value, dict):
        out.append(("unknown key", {**value, "bogus_key": 1}))
    return out


def factory_fields(kind: str, spec: dict) -> dict:
    """Every parameter of the component: its spec value, else its factory default."""
    params = inspect.signature(entries(kind)[spec["name"]].obj).parameters
    defaults = {p: v.default for p, v in params.items()
                if p not in CONTEXT and v.kind in (v.POSITIONAL_OR_KEYWORD, v.KEYWORD_ONLY)}
    return {**{p: d for p, d in defaults.items() if d is not inspect.Parameter.empty}, **spec}


def cases(kind: str) -> list[tuple[str, str, str, object]]:
    """All ``(component, field, label, value)`` mutations of ``kind`` (``field`` "" mutates the spec as a whole)."""
    out = []
    for name in components(kind):
        spec = base_spec(kind, name)
        out.append((name, "bogus_key", "unknown key", 1))
        for field, value in factory_fields(kind, spec).items():
            if field != "name":
                out += [(name, field, label, new) for label, new in mutants(value)]
    return out


@contextlib.contextmanager
def deadline(seconds: int):
    def hang(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: a hang")
    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def names(message: str, field: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(field)}(?![A-Za-z0-9])", message) is not None


def assert_clear(run_it, field: str, label: str, case) -> None:
    """Run ``run_it()``: a clean trace, or a ValueError / TypeError naming ``field``."""
    try:
        with deadline(TIMEOUT_S):
            result = run_it()
    except (ValueError, TypeError) as err:
        refused_for_size = label.startswith("huge") and "available" in str(err)
        assert names(str(err), field) or refused_for_size, \
            f"{case}: {type(err).__name__} does not name {field!r}: {err}"
        return
    except FileNotFoundError:  # a dataset that is not downloaded: its loader's message says how to get it
        return
    except Exception as err:  # noqa: BLE001 -- the point of the corpus
        raise AssertionError(f"{case}: {type(err).__name__}: {err}") from err
    if result is not None:
        assert_finite(result, case)


def assert_finite(trace, case) -> None:
    """No NaN anywhere; every metric finite until the replica's recorded divergence (``inf`` after it)."""
    bounded = trace.diverged_at < 0
    for metric, values in trace.metrics.items():
        assert not np.isnan(values).any(), f"{case}: silent NaN in {metric}"
        assert np.isfinite(values[bounded]).all(), f"{case}: {metric} infinite without a recorded divergence"


def run_case(kind: str, name: str, change: dict) -> object:
    """Build (topology) or run (every other kind) the base configuration with ``change`` applied to ``name``'s spec."""
    config = base_config(kind, name)
    if kind == "topology":
        topology = build("topology", {**base_spec(kind, name), **change})
        assert np.isfinite(np.asarray(topology.W)).all(), f"{name}: non-finite mixing matrix"
        return None
    spec = {**config[FIELDS[kind]], **change}
    config[FIELDS[kind]] = spec
    if kind == "testbed":  # the participation follows the mutated testbed's clients
        m = build("testbed", spec).n_clients
        config["participation"] = {"name": "bernoulli", "p": [0.5] * m}
    return run(RunConfig(**config))


@pytest.mark.parametrize("kind", ["testbed", "participation", "channel", "clock", "topology", "algorithm"])
def test_every_component_has_a_running_base(kind):
    failures = []
    for name in components(kind):
        try:
            trace = run_case(kind, name, {})
        except FileNotFoundError:
            continue  # an image dataset that is not downloaded
        except Exception as err:  # noqa: BLE001 -- collected, so that one run names every missing row
            failures.append(f"{name}: {type(err).__name__}: {err}")
            continue
        if trace is not None:
            assert_finite(trace, f"base of {kind} {name}")
    assert not failures, f"base specs of {kind} that do not run (fix their rows in BASES / WITH): {failures}"


def _corpus_test(kind: str, *regressions):
    """The corpus of ``kind``, with the defects it found in the pre-existing components as explicit examples."""
    @given(st.deferred(lambda: st.sampled_from(cases(kind)) if components(kind) else st.nothing()))
    def test(case):
        name, field, label, value = case
        assert_clear(lambda: run_case(kind, name, {field: value}), field, label, (kind, *case))
    for case in regressions:
        test = example(case)(test)
    return test


test_fuzz_testbed = _corpus_test(  # each example: the exception (or silent value) it gave before issue 16
    "testbed",
    ("random_quadratic", "dim", "zero", 0),  # ran and reported distance 0
    ("random_quadratic", "dim", "huge", HUGE),  # numpy MemoryError
    ("quadratic", "centers", "wrong type", "text"),  # "could not convert string to float", no field
    ("scalar_quadratic", "x0", "huge float", 1e300),  # inf metrics without a recorded divergence
    ("nesterov_chain", "L", "+inf", math.inf),  # a silent NaN in gradnorm2
    ("nesterov_chain", "horizon", "huge", HUGE),  # numpy "array is too big"
    ("gaussian_mean", "sigma", "huge float", 1e300),  # OverflowError
    ("gaussian_mean_paper", "n_clients", "huge", HUGE),  # MemoryError
    ("gaussian_mean_paper", "seed", "huge", HUGE),  # "Seed must be between 0 and 2**32 - 1", no field
    ("credit", "n_clients", "zero", 0),  # ZeroDivisionError
    ("credit", "eps_high", "huge", HUGE),  # ran for minutes
    ("credit", "strategic", "wrong type", "text"),  # unnamed int() error
    ("synthetic_leaf", "delta", "huge", HUGE),  # LinAlgError
    ("synthetic_leaf", "batch", "huge", HUGE),  # torch allocator RuntimeError
    ("digits", "batch_size", "huge", HUGE),  # torch allocator RuntimeError
    ("digits", "input_shape", "empty list", []),  # IndexError
    ("digits", "eval_train", "zero", 0),  # "an evaluation subset size ...", no field
    ("digits", "label_swap", "unknown key", {"bogus": 1}),  # TypeError from swap_labels
)
test_fuzz_participation = _corpus_test(
    "participation",
    ("bernoulli", "gamma", "wrong type", "text"),  # TypeError "'<=' not supported"
    ("bernoulli", "p", "wrong type", "text"),  # "could not convert string to float", no field
    ("markov", "lam", "wrong type", "text"),
    ("cyclic", "n_clients", "huge", HUGE),  # MemoryError
    ("clustered_markov", "clusters", "wrong length", [0, 1, 1, 1]),  # the mismatch named no field
)
test_fuzz_algorithm = _corpus_test(
    "algorithm",
    ("fedavg", "local_steps", "huge", HUGE),  # MemoryError drawing the noise of 10^12 steps
    ("fedavg", "local_steps", "NaN", math.nan),  # "cannot convert float NaN to integer", no field
    ("fedavg", "lr", "wrong type", "text"),  # a step-size message without "lr"
    ("fedavg", "server", "wrong type", "text"),  # "dictionary update sequence element"
    ("fedavg", "q", "wrong type", "text"),
    ("fedau", "cutoff", "huge float", 1e300),  # OverflowError
    ("cafed", "prior", "wrong type", "text"),
    ("fedawe", "server_lr", "wrong type", "text"),  # TypeError "'>' not supported"
)
test_fuzz_topology = _corpus_test("topology")
test_fuzz_channel = _corpus_test("channel")
test_fuzz_clock = _corpus_test("clock")


RUN_FIELDS = {"rounds": 2, "replicas": 2, "every": 1, "seed": 0, "device": "cpu", "dtype": "float64"}


@given(st.sampled_from([(f, label, new) for f, v in RUN_FIELDS.items() for label, new in mutants(v)]))
@example(("replicas", "huge", 10**9))  # issue 16: allocated for a minute before anything happened
@example(("rounds", "huge", HUGE))
@example(("seed", "NaN", math.nan))  # int(nan) raised an unnamed ValueError
@example(("every", "+inf", math.inf))  # int(inf) raised OverflowError
def test_fuzz_run_fields(case):
    field, label, value = case
    config = {**base_config("algorithm", "fedavg"), field: value}
    assert_clear(lambda: run(RunConfig(**config)), field, label, case)


CHEAP = {"validate": ["thesis.thm2_3_4"], "figure": ["performative-ps-vs-po"]}  # quick to run when nothing is refused
TRAIN = ["--testbed", "digits", "--model", "logistic", "--clients", "3", "--rounds", "1", "--every", "1", "--window",
         "1", "--local-steps", "1", "--batch-size", "4", "--testbed-options",
         '{"train_size": 120, "eval_train": 30, "eval_test": 30}']
OPTION_VALUES = ["0", "-1", "2.5", "nan", "inf", "-inf", "1e12", "1000000000000", "text", "", "{", "[]", '{"bogus": 1}']


def cli_cases() -> list[tuple[str, str, str]]:
    """``(command, option, value)`` for every option of ``validate``, ``figure`` and ``train`` that takes a value
    (read from the parser, so new options join), and for their positional arguments."""
    from theorylab.app.cli import parser

    commands = next(a for a in parser()._actions if a.dest == "command").choices
    out = []
    for command in ("validate", "figure", "train"):
        for action in commands[command]._actions:
            if action.nargs == 0 or action.dest == "help":
                continue
            option = action.option_strings[0] if action.option_strings else action.dest
            out += [(command, option, value) for value in OPTION_VALUES]
    return out


def cli_argv(command: str, option: str, value: str, out: str) -> list[str]:
    base = {"validate": CHEAP["validate"] + ["--quick"], "figure": CHEAP["figure"] + ["--quick"], "train": TRAIN}
    argv = [command, *base[command], "--out", out, "--no-cache"]
    if option.startswith("-"):
        if option in argv:  # replace the base's value
            argv[argv.index(option) + 1] = value
            return argv
        return argv + [option, value]
    return [command, value, *argv[1 + len(CHEAP.get(command, [])):]]  # a positional argument


@given(st.deferred(lambda: st.sampled_from(cli_cases())))
@example(("train", "--clients", "0"))  # issue 16: ZeroDivisionError traceback
@example(("train", "--testbed-options", "{"))  # a bare JSONDecodeError that named no option
@example(("train", "--algorithm", '{"bogus": 1}'))  # KeyError: 'name'
@example(("train", "--participation", "text"))  # "dynamics must be one of ...", no option
def test_fuzz_command_line(case):
    command, option, value = case
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp), \
            contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
        argv = cli_argv(command, option, value, tmp)
        try:
            with deadline(TIMEOUT_S):
                code = main(argv)
        except SystemExit as stop:  # argparse's usage error
            code = stop.code
        except Exception as exc:  # noqa: BLE001 -- the point of the corpus
            raise AssertionError(f"{argv}: {type(exc).__name__}: {exc}") from exc
    message = err.getvalue()
    assert code in (0, 2), f"{argv}: exit {code}: {message}"
    assert "Traceback" not in message, f"{argv}: {message}"
    if code == 2:  # an option is named as such; a positional argument by the value refused
        words = {value} if not option.startswith("-") else \
            {option, option.lstrip("-"), option.lstrip("-").replace("-", "_")}
        words |= {"bogus"} & {value.strip('{}":1 ')}  # a JSON option's unknown key is named as such
        assert any(w in message for w in words) or ("available" in message and value.startswith("1")), \
            f"{argv}: the error does not name {option}: {message}"
