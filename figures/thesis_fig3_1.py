r"""Thesis Fig. 3.1 (seed 001 §3.3.1; digest 001 §5.4, §8 V22): FedAvg, FedVARP and FedStale on a 2-client, 2-D
quadratic with heterogeneous participation :math:`p_1/p_2 = 100`.

The thesis gives neither the quadratics nor the step sizes; the digest's toy stands in:
:math:`F_i(w) = \frac12(w-c_i)^\top A_i(w-c_i)`, :math:`A_1 = {\rm diag}(1, 0.1)`, :math:`A_2 = {\rm diag}(0.1, 1)`,
:math:`c_1 = (5, 0)`, :math:`c_2 = (0, 5)`, :math:`p = (1, 0.01)`, Gaussian gradient noise of standard deviation 0.5 per
coordinate, :math:`K = 5`, :math:`T = 4000`, :math:`w^{(1)} = (-10, -10)`, :math:`\eta_c = 0.05`, :math:`\eta_s = 0.02`
(the digest's own run).  Panels: (a) the clients' contours, local optima and :math:`w^\star`; (b) one run of FedAvg
(:math:`\beta = 0`) and FedVARP (:math:`\beta = 1`) with the same participation; (c) FedStale (:math:`\beta = 0.8`) on
that run; (d) :math:`F(w^t) - F^\star` averaged over replicas.  The claim ``thesis.fedstale.motivating_example``
checks the same runs against exact moments.
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Round
from theorylab.plotting import pyplot, save
from theorylab.registry import build, register
from theorylab.rng import Streams
from theorylab.runner import build_run

TOY = {"name": "quadratic", "hessians": [[[1.0, 0.0], [0.0, 0.1]], [[0.1, 0.0], [0.0, 1.0]]],
       "centers": [[5.0, 0.0], [0.0, 5.0]], "sigma": 0.5 * math.sqrt(2), "x0": [-10.0, -10.0]}
TOY_P = (1.0, 0.01)
LOCAL_STEPS, ROUNDS, EVERY = 5, 4000, 10
STEPS = (0.05, 0.02)  # eta_c, eta_s
SHOWN = {0.0: "FedAvg (beta = 0)", 1.0: "FedVARP (beta = 1)", 0.8: "FedStale (beta = 0.8)"}
COLORS = {0.0: "C0", 1.0: "C1", 0.8: "C2"}


def toy_config(ctx, beta: float, lr: float, server_lr: float, rounds: int, replicas: int, every: int) -> RunConfig:
    """The ``fedstale`` kernel (unbiased weights, zero memory) on the toy, Bernoulli(1, 0.01) participation."""
    return RunConfig(problem=TOY, participation={"name": "bernoulli", "p": list(TOY_P)},
                     algorithm={"name": "fedstale", "beta": beta, "local_steps": LOCAL_STEPS, "lr": lr,
                                "server": {"name": "sgd", "lr": server_lr}},
                     rounds=rounds, replicas=replicas, seed=ctx.seed, every=every)


def trajectory(config: RunConfig) -> np.ndarray:
    """The server model at every round of replica 0 (the runner records metrics only), ``(rounds + 1, d)``; replica
    0 draws the same numbers as in any larger run of the same seed."""
    problem, process, algorithm = build_run(config)
    streams = Streams(config.seed, 1)
    state = algorithm.init(problem, problem.initial_point(1, streams))
    pstate, path = process.init(1, streams), [algorithm.points(state)["server"][0].numpy().copy()]
    for t in range(config.rounds):
        pstate, active = process.draw(pstate, t, streams)
        state = algorithm.step(state, Round(t, active, process.probabilities(t), streams), problem)
        path.append(algorithm.points(state)["server"][0].numpy().copy())
    return np.asarray(path)


def compute(ctx, replicas: int, traces: dict | None = None) -> dict:
    """Trajectories of replica 0 and the mean loss curves over ``replicas`` for the three betas of the figure
    (``traces``: beta -> the runs of :func:`toy_config` at :data:`STEPS`, when the caller has them already)."""
    out = {"paths": {}, "curves": {}}
    for beta in SHOWN:
        config = toy_config(ctx, beta, *STEPS, ROUNDS, replicas, EVERY)
        trace = traces[beta] if traces else ctx.run(config)
        out["paths"][beta] = trajectory(config.replace(replicas=1))
        out["curves"][beta] = (trace.rounds, trace.metrics["server.gap"].mean(0))
    return out


def draw(data: dict, path):
    plt = pyplot()
    problem = build("testbed", TOY)
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.6), constrained_layout=True)
    grid = np.linspace(-12, 12, 121)
    X, Y = np.meshgrid(grid, grid)
    values = problem.client_values(np.stack([X, Y], -1))
    for ax in axes[:3]:
        for i, style in enumerate(("-", "--")):
            ax.contour(X, Y, values[..., i], levels=8, linestyles=style, colors=f"C{i + 4}", linewidths=0.6)
        ax.plot(*problem.u.T, "k^", ms=6, label="local optima")
        ax.plot(*problem.x_star, "r*", ms=10, label="w*")
    axes[0].set_title("(a) client objectives (F1 solid, F2 dashed)")
    axes[0].legend(loc="lower right")
    for ax, betas, title in ((axes[1], (0.0, 1.0), "(b) FedAvg and FedVARP, one run"),
                             (axes[2], (0.8,), "(c) FedStale, beta = 0.8, same run")):
        for beta in betas:
            ax.plot(*data["paths"][beta].T, lw=0.8, color=COLORS[beta], label=SHOWN[beta])
        ax.set_title(title)
        ax.legend(loc="lower right")
    for beta, (rounds, gap) in data["curves"].items():
        axes[3].semilogy(rounds, gap, color=COLORS[beta], label=SHOWN[beta])
    axes[3].set(title="(d) F(w^t) - F*, mean over replicas", xlabel="round t")
    axes[3].legend()
    return save(fig, path)


@register("figure", "thesis-fig3-1")
def render(ctx):
    """Thesis Fig. 3.1: FedAvg / FedVARP / FedStale(0.8) trajectories and loss curves on the 2-client toy."""
    return draw(compute(ctx, ctx.pick(24, 100)), ctx.figure_path("thesis-fig3-1"))
