r"""Thesis Fig. 2.5a (seed 001 §2.5.2, L885-899; digest 001 §3.3, §5.2, §8 V13): per-client x per-round pixel maps
of the availability :math:`a_i^{(t)}` and of CA-Fed's decisions :math:`a_i^{(t)}\mathbb 1\{q_i^{(t)}>0\}` in the
spatial-correlation setting with intra- and inter-cluster homogeneous data.

Setting (:func:`theorylab.participation.markov.thesis_spatial_setting`): 10 clusters of 10 clients sharing one
two-state chain per cluster, clusters 0-4 with :math:`\pi_c = 0.9, \lambda_c = 0`, clusters 5-9 with
:math:`\pi_c = 0.1, \lambda_c = c/10`; stationary start.  The thesis reports that CA-Fed excludes clusters 9, 8, 7, 6
in that order (the claim ``thesis.cafed.exclusion_order`` tests the order on a smaller population).  CA-Fed as in
:mod:`theorylab.figures.thesis_fig2_1` (oracle :math:`(\pi,\lambda)` and :math:`F_i^\star`, :math:`\beta = 1`, :math:`\tau = 0`,
bias factor 4, :math:`\bar\kappa^2 = 1`), :math:`T = 100` rounds (the thesis' value).

Deviations: identical quadratic clients :math:`F_i(x) = \|x\|^2/2` with gradient noise 0.3 from :math:`x^0 = (5, 5)`
stand in for MNIST (homogeneous data within and across clusters); :math:`K = 2` local steps, :math:`\eta_c = 0.05`.
Only panel (a) is drawn (panels (b)-(d) need cluster-heterogeneous MNIST).  The maps show replica 0; the bar
chart beside them is the fraction of rounds each cluster is active and excluded (active with :math:`q_i = 0`),
averaged over replicas.

:func:`record` drives a ``cafed`` config round by round (the runner records metrics only) and is shared with
:mod:`theorylab.figures.thesis_fig2_1d`.
"""

from __future__ import annotations

import numpy as np

from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Round
from theorylab.participation.markov import thesis_spatial_setting
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.runner import build_run

ROUNDS, CLIENTS_PER_CLUSTER = 100, 10
CAFED = {"name": "cafed", "kappa2": 1.0, "local_steps": 2, "lr": 0.05}


def record(config: RunConfig) -> dict[str, np.ndarray]:
    """Run a ``cafed`` config round by round.  Returns replica 0's ``active`` and ``included`` maps,
    ``(rounds, clients)`` bool, the fraction of rounds each client is active and excluded (``excluded``,
    ``(replicas, clients)``) and the cumulative weights :math:`\\frac1T\\sum_t q_i^{(t)}` (``q_mean``, from the
    kernel's ``cafed.q_sum``)."""
    problem, process, algorithm = build_run(config)
    streams = Streams(config.seed, config.replicas, config.device)
    state = algorithm.init(problem, problem.initial_point(config.replicas, streams))
    pstate, active_map, included_map = process.init(config.replicas, streams), [], []
    excluded = np.zeros((config.replicas, problem.n_clients))
    for t in range(config.rounds):
        pstate, active = process.draw(pstate, t, streams)
        state = algorithm.step(state, Round(t, active, process.probabilities(t), streams), problem)
        included = state["cafed.included"].cpu().numpy()
        mask = active.cpu().numpy()
        active_map.append(mask[0])
        included_map.append(included[0])
        excluded += mask & ~included
    return {"active": np.asarray(active_map), "included": np.asarray(included_map),
            "excluded": excluded / config.rounds, "q_mean": state["cafed.q_sum"].cpu().numpy() / config.rounds}


def spatial_config(seed: int, replicas: int, rounds: int = ROUNDS,
                   clients_per_cluster: int = CLIENTS_PER_CLUSTER) -> RunConfig:
    """CA-Fed on identical quadratic clients under the thesis' clustered chains (oracle per-client pi, lambda)."""
    setting = thesis_spatial_setting(clients_per_cluster)
    members = np.asarray(setting["clusters"])
    n = len(members)
    problem = {"name": "quadratic", "hessians": np.tile(np.eye(2), (n, 1, 1)).tolist(), "centers": [[0.0, 0.0]] * n,
               "sigma": 0.3, "x0": [5.0, 5.0]}
    pi, lam = np.asarray(setting["pi"])[members].tolist(), np.asarray(setting["lam"])[members].tolist()
    return RunConfig(problem=problem, participation={"name": "clustered_markov", **setting},
                     algorithm={**CAFED, "pi": pi, "lam": lam}, rounds=rounds, replicas=replicas, seed=seed,
                     every=rounds)


def compute(ctx, replicas: int | None = None, clients_per_cluster: int = CLIENTS_PER_CLUSTER) -> dict:
    replicas = replicas or ctx.pick(16, 64)
    out = record(spatial_config(ctx.seed, replicas, ROUNDS, clients_per_cluster))
    out["clusters"] = np.asarray(thesis_spatial_setting(clients_per_cluster)["clusters"])
    return out


def draw(data: dict, path, title: str):
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2), constrained_layout=True, width_ratios=(1, 1, 0.8))
    members = data["clusters"]
    edges = np.flatnonzero(np.diff(members)) + 0.5
    for ax, key, label in ((axes[0], "active", "available a_i^(t) (replica 0)"),
                           (axes[1], "included", "CA-Fed includes: a_i^(t) 1{q_i^(t) > 0} (replica 0)")):
        ax.imshow(data[key].T, aspect="auto", cmap="Greys", interpolation="nearest", vmin=0, vmax=1)
        ax.hlines(edges, -0.5, data[key].shape[0] - 0.5, colors="C3", lw=0.4)
        ax.set(title=label, xlabel="round t", ylabel="client (grouped by cluster 0-9)")
    clusters = np.unique(members)
    active = np.array([data["active"][:, members == c].mean() for c in clusters])
    excluded = np.array([data["excluded"][:, members == c].mean() for c in clusters])
    axes[2].bar(clusters - 0.2, excluded, 0.4, color="C3", label="active and excluded (mean over replicas)")
    axes[2].bar(clusters + 0.2, active, 0.4, color="0.6", label="active (replica 0)")
    axes[2].set(title=f"fraction of rounds per cluster (excluded, all: {data['excluded'].mean():.2g})",
                xlabel="cluster c (pi_c = 0.9 for c < 5, 0.1 with lambda_c = c/10 for c >= 5)", xticks=clusters)
    axes[2].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return save(fig, path)


@register("figure", "thesis-fig2-5")
def render(ctx):
    """Thesis Fig. 2.5a: availability and CA-Fed inclusion maps in the spatial-cluster setting."""
    data = compute(ctx)
    title = (f"Thesis Fig. 2.5a stand-in: 10 clusters x 10 identical quadratic clients, T = {ROUNDS}, "
             f"{data['excluded'].shape[0]} replicas{' (quick)' if ctx.quick else ''}; panels (b)-(d) not drawn")
    return draw(data, ctx.figure_path("thesis-fig2-5"), title)
