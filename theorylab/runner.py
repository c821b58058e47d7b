"""The runner: T rounds x R replicas of (participation draw, kernel step), metrics every k rounds.

``run(config, store)`` builds the testbed, participation process and algorithm
from their specs, runs them with per-replica random streams, and returns a
:class:`~theorylab.trace.Trace` of per-replica metrics against ground truth.  With
a store, a run whose key is already stored is read back instead of recomputed.

Metrics are computed every ``config.every`` rounds (plus rounds 0 and T) and are
the only host-device synchronisation points.  A replica *diverges* when an
evaluation point stops being finite or its squared norm exceeds
``DIVERGENCE_FACTOR * (1 + |x^0|^2)``, or one of its metrics is not finite; from then on its metrics read ``inf`` and
``diverged_at`` records the round.  A run whose replicas have all diverged stops.

A configured ``channel`` adds its :class:`~theorylab.kernels.algorithm.Links` to every round; a configured ``clock``
turns rounds into asynchronous server steps: the round's ``active`` set is the clock's arrivals (drawn given the
participation mask) and its :class:`~theorylab.kernels.algorithm.Arrivals` ride along.  Their ``metrics(state)``, when
they have one, are recorded as ``channel.*`` / ``clock.*`` beside the model's metrics.
"""

from __future__ import annotations

import numbers
import time
from typing import Callable

import numpy as np
import torch

from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Round
from theorylab.memory import check_run
from theorylab.progress import progress
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.store import Store
from theorylab.threads import threads_for
from theorylab.trace import Trace
from theorylab.validation import device

DIVERGENCE_FACTOR = 1e12
MAX_FINAL_ENTRIES = 1_000_000


def build_run(config: RunConfig):
    """Instantiate the (problem, participation, algorithm) triple of a config."""
    device(config.device)  # a named error, before a testbed moves its first tensor there
    dtype = getattr(torch, config.dtype)
    problem = build("testbed", config.problem, device=config.device, dtype=dtype)
    process = build("participation", config.participation)
    if process.n_clients != problem.n_clients:
        raise client_mismatch("participation", config.participation, process.n_clients, problem.n_clients)
    algorithm = build("algorithm", config.algorithm)
    return problem, process, algorithm


def autograd_off(problem):
    """``torch.inference_mode`` for a problem that declares ``autograd = False`` (none of its members records an
    autograd graph: the closed-form testbeds, and a network under the ``dense`` strategy); a context that leaves
    autograd on otherwise, the default for a testbed that does not say (a plugin's).  Inference mode skips autograd's
    and view tracking's dispatcher steps, so every torch call costs less and computes the same floats: a run of small
    tensors, whose time is mostly that fixed cost, took 10-25% less (issue 23)."""
    return torch.inference_mode(getattr(problem, "autograd", True) is False)


def client_mismatch(kind: str, spec: dict, count: int, n_clients: int) -> ValueError:
    """The error of a component whose client count differs from the testbed's, naming the spec's fields that set it
    (a count equal to it, or a per-client list of its length)."""
    def sets_count(v) -> bool:  # a count, a per-client list, or a scalar broadcast to one client
        if isinstance(v, (list, tuple)):
            return len(v) == count
        return isinstance(v, numbers.Real) and not isinstance(v, bool) and (v == count or count == 1)

    sized = [k for k, v in spec.items() if k != "name" and sets_count(v)]
    fields = f"; its {' and '.join(sized)} must match" if sized else ""
    return ValueError(f"{kind} has {count} clients but the testbed has {n_clients}{fields}")


def build_world(config: RunConfig, n_clients: int) -> dict:
    """The configured world models beyond participation: ``{"channel": ..., "clock": ...}`` (absent ones left out)."""
    world = {}
    for kind in ("channel", "clock"):
        spec = getattr(config, kind)
        if spec is None:
            continue
        model = world[kind] = build(kind, spec)
        if model.n_clients != n_clients:
            raise client_mismatch(kind, spec, model.n_clients, n_clients)
    return world


def run(config: RunConfig, store: Store | None = None, progress_bar: bool | None = None,
        on_record: Callable[[int, dict[str, np.ndarray], int], None] | None = None) -> Trace:
    """Run ``config`` (or read it from ``store``) and return its trace.

    ``on_record(t, metrics, participations)``, if given, is called after every evaluation of a
    simulated run with the round, the per-replica metrics of that round and the number of
    (replica, client) participations so far (for throughput displays)."""
    key = config.key()
    if store is not None:
        cached = store.get(key)
        if cached is not None:
            return cached
    trace = _simulate(config, progress_bar, on_record)
    if store is not None:
        store.put(key, trace)
    return trace


def _simulate(config: RunConfig, progress_bar: bool | None, on_record=None) -> Trace:
    started = time.perf_counter()
    problem, process, algorithm = build_run(config)
    world = build_world(config, problem.n_clients)
    check_run(config, problem, algorithm, world)  # refuse an oversized run before it allocates
    R = config.replicas
    streams = Streams(config.seed, R, config.device)
    x0 = problem.initial_point(R, streams)
    state = algorithm.init(problem, x0)
    pstate = process.init(R, streams)
    wstate = {kind: model.init(R, streams) for kind, model in world.items()}
    limit = DIVERGENCE_FACTOR * (1.0 + (x0 * x0).sum(-1))

    eval_rounds = sorted({0, config.rounds, *range(config.every, config.rounds, config.every)})
    records: list[dict[str, np.ndarray]] = []
    diverged_at = np.full(R, -1)
    participations = torch.zeros((), dtype=torch.int64, device=x0.device)

    def record(t: int) -> None:
        values, bad = {}, torch.zeros(R, dtype=torch.bool, device=x0.device)
        for point, x in algorithm.points(state).items():
            bad |= ~(torch.linalg.vecdot(x, x) <= limit)  # also true where x has a NaN or an infinity
            values.update({f"{point}.{metric}": v for metric, v in problem.metrics(x).items()})
        judged = len(values)  # the model's metrics: one that overflows (x finite, F(x) not) diverged too
        for kind, model in world.items():
            if hasattr(model, "metrics"):
                values.update({f"{kind}.{metric}": v for metric, v in model.metrics(wstate[kind]).items()})
        table = torch.stack([v.detach().to("cpu", torch.float64) for v in values.values()]).numpy()  # one copy
        host = dict(zip(values, table))  # (R,) rows of this record's own array
        newly = (bad.cpu().numpy() | ~np.isfinite(table[:judged]).all(0)) & (diverged_at < 0)
        diverged_at[newly] = t
        for v in host.values():
            v[diverged_at >= 0] = np.inf
        records.append(host)
        if on_record is not None:
            on_record(t, host, int(participations))

    record(0)
    # threads from the work and the free cores (issue 23); inference mode: the same floats, less cost per torch call
    with threads_for(R * problem.n_clients * problem.dim), autograd_off(problem):
        for t in progress(range(config.rounds), progress_bar, desc="rounds", total=config.rounds):
            pstate, active = process.draw(pstate, t, streams)
            rnd = Round(t, active, process.probabilities(t), streams)
            if "channel" in world:
                wstate["channel"], links = world["channel"].draw(wstate["channel"], t, streams)
                rnd = rnd._replace(links=links)
            if "clock" in world:
                wstate["clock"], arrivals = world["clock"].draw(wstate["clock"], t, streams, active)
                rnd = rnd._replace(active=arrivals.arrived, arrivals=arrivals)
            participations += rnd.active.sum()
            state = algorithm.step(state, rnd, problem)
            if t + 1 == eval_rounds[len(records)]:  # the next round due for evaluation
                record(t + 1)
                if (diverged_at >= 0).all():
                    break
    while len(records) < len(eval_rounds):  # stopped early: everything diverged
        records.append({k: np.full(R, np.inf) for k in records[0]})

    metrics = {k: np.stack([r[k] for r in records], axis=1) for k in records[0]}
    final = {}
    if R * problem.dim <= MAX_FINAL_ENTRIES:
        final = {k: v.detach().to("cpu", torch.float64).numpy() for k, v in algorithm.points(state).items()}
    return Trace(config.as_dict(), np.asarray(eval_rounds), metrics, diverged_at, final,
                 time.perf_counter() - started)
