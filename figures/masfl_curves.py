r"""Seed 004 Figs. 1 and 4 analogue on the closed-form quadratic, plus the plot against simulated wall-clock time that
the paper lacks (digest 004 §4, §5.1 item 6): optimality gap of MasFL, AdaMasFL, FedBuff, CA²FL and FADAS under the
FedBuff delay mechanism (Mode B, R2, :math:`\mathcal U(0,20)` per job), against server step and against the
simulated time of each step (the clock's ``time`` metric, averaged over replicas).

Also holds the run-config fields of the asynchronous heterogeneous quadratic shared with ``validations/masfl``.
"""

from __future__ import annotations

import numpy as np

from theorylab.config import RunConfig
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

ALGORITHMS = {"MasFL": {"name": "masfl", "beta": 0.5, "gamma": 0.1, "eta": 0.02},
              "AdaMasFL": {"name": "adamasfl", "beta": 0.5, "gamma": 0.05, "eta": 0.01},
              "FedBuff": {"name": "fedbuff", "lr": 0.05}, "CA2FL": {"name": "ca2fl", "lr": 0.05},
              "FADAS": {"name": "fadas", "lr": 0.05, "server_lr": 0.01}}


def mode_b(n_clients: int, concurrency: int, buffer: int, refill: str = "R2", t_max: float = 20.0) -> dict:
    """The paper's Mode B clock spec (FedBuff delays :math:`\\mathcal U(0, T_{\\max})` per job)."""
    return {"name": "buffered", "n_clients": n_clients, "concurrency": concurrency, "buffer": buffer,
            "refill": refill, "delay": {"law": "uniform", "t_max": t_max}}


def async_quadratic(n_clients: int, buffer: int, concurrency: int, *, sigma: float = 0.0, spread: float = 3.0,
                    dim: int = 4, seed: int = 3, refill: str = "R2") -> dict:
    """Run-config fields of a strongly heterogeneous quadratic (rotated Hessians, spectra in [0.5, 2], centres
    N(0, spread^2 I)) whose clients are always available, under the Mode B clock."""
    return dict(problem={"name": "random_quadratic", "n_clients": n_clients, "dim": dim, "seed": seed,
                         "spread": spread, "mu": 0.5, "L": 2.0, "sigma": sigma},
                participation={"name": "bernoulli", "p": [1.0] * n_clients},
                clock=mode_b(n_clients, concurrency, buffer, refill))


def compute(ctx) -> dict:
    rounds = ctx.pick(200, 600)
    fields = async_quadratic(20, 5, 10, sigma=0.5)
    out = {}
    for label, spec in ALGORITHMS.items():
        trace = ctx.run(RunConfig(algorithm={**spec, "local_steps": 5}, rounds=rounds, replicas=ctx.pick(4, 16),
                                  seed=ctx.seed, every=rounds // 25, **fields))
        out[label] = {"round": trace.rounds, "time": trace.metrics["clock.time"].mean(0),
                      "gap": trace.metrics["server.gap"].mean(0)}
    return out


def draw(data: dict, path):
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True, sharey=True)
    for label, d in data.items():
        axes[0].semilogy(d["round"], np.maximum(d["gap"], 1e-32), label=label)
        axes[1].semilogy(d["time"], np.maximum(d["gap"], 1e-32), label=label)
    axes[0].set(xlabel="server step t", ylabel="f(θ) − f*  (mean over replicas)")
    axes[1].set(xlabel="simulated time (s, U(0, 20) jobs)")
    axes[0].legend()
    fig.suptitle("Mode B (N = 20, S = 5, M_c = 10, R2), heterogeneous quadratic, σ = 0.5, K = 5")
    return save(fig, path)


@register("figure", "masfl-curves")
@one_thread
def render(ctx):
    """MasFL Figs. 1/4 analogue: optimality gap vs server step and vs simulated wall-clock time, five methods."""
    return draw(compute(ctx), ctx.figure_path("masfl-curves"))
