r"""FedAWE Corollary 1: the rate :math:`\frac1T\sum_{t<T}\mathbb E\|\nabla F(\bar x^t)\|^2` against :math:`T` (log-log).

Seed 000 Corollary 1, eq. (17); digest 000 §3.2, §8 item 10.  Steps :math:`\eta_l = 1/(sL\sqrt T)`,
:math:`\eta_g = \sqrt{s\delta m}` (the digest's reading, §9), uniform-:math:`k` participation
(:math:`\delta = \delta_{\max} = k/m`), quadratic clients with :math:`m = 10`, :math:`d = 5`, Gaussian noise
:math:`\sigma = 0.5`, :math:`L = 1` (an upper bound on every Hessian's spectrum).  Two problems:

* ``iid``: shared Hessian and identical optima (:math:`\beta = \zeta = 0`), start :math:`x^0 = \mathbf 1`;
* ``hetero``: per-client rotated Hessians and optima :math:`u_i\sim\mathcal N(0, I)` (:math:`\beta,\zeta>0`),
  start :math:`x^0 = 0`.

Runs record every round up to :math:`T = 1023` (so the quick suite's time averages are exact sums over
:math:`t<T`) and on a grid of :math:`\lfloor\sqrt T\rfloor/16` rounds beyond (:func:`recording_step`); the
consensus error :math:`\frac1m\sum_i\|x_i^t-\bar x^t\|^2` comes from the per-client points
(:func:`consensus_error`).  The figure overlays the fitted slope, the :math:`T^{-1/2}` reference and the
explicit bound (Corollary 2 at Corollary 1's steps, :func:`theorylab.bounds.fedawe.corollary1_rhs`).
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.testbeds.heterogeneity import a4_beta2_min, a4_zeta2
from theorylab.testbeds.quadratic import random_quadratic
from theorylab.bounds.fedawe import Constants, corollary1_rhs
from theorylab.config import RunConfig
from theorylab.fitting import slope_with_ci
from theorylab.mixing import uniform_k_rho
from theorylab.plotting import pyplot, save
from theorylab.regime import seconds_per_round
from theorylab.registry import register
from theorylab.threads import one_thread

M, DIM, SIGMA, L_BOUND = 10, 5, 0.5, 1.0
PROBLEMS = {
    "iid": {"name": "random_quadratic", "n_clients": M, "dim": DIM, "sigma": SIGMA, "seed": 3, "mu": 0.5, "L": 1.0,
            "spread": 0.0, "hessians": "shared", "x0": [1.0] * DIM},
    "hetero": {"name": "random_quadratic", "n_clients": M, "dim": DIM, "sigma": SIGMA, "seed": 3, "mu": 0.5,
               "L": 1.0, "spread": 1.0, "hessians": "hetero"},
}
LABELS = {"iid": r"$\zeta=0$ (identical clients)", "hetero": r"$\zeta>0$ (heterogeneous)"}
RATE_S, RATE_K = 2, 5


def cor1_config(problem: str, T: int, s: int, k: int, replicas: int, seed: int) -> RunConfig:
    """FedAWE at Corollary 1's steps on ``PROBLEMS[problem]`` under uniform-k participation, every round recorded."""
    algorithm = {"name": "fedawe", "local_steps": s, "lr": 1.0 / (s * L_BOUND * math.sqrt(T)),
                 "server_lr": math.sqrt(s * k), "client_points": True}
    return RunConfig(problem=PROBLEMS[problem], participation={"name": "uniform_k", "n_clients": M, "k": k},
                     algorithm=algorithm, rounds=T, replicas=replicas, seed=seed, every=recording_step(T))


def recording_step(T: int) -> int:
    """Record every ``max(1, floor(sqrt T) // 16)`` rounds: every round up to T = 1023; beyond, at least ~10 records
    per time constant of the transient, which lasts about :math:`L\\sqrt T/(\\sqrt{sk}\\mu) \\ge 0.3\\sqrt T` rounds."""
    return max(1, math.isqrt(T) // 16)


def consensus_error(trace) -> np.ndarray:
    """:math:`\\frac1m\\sum_i\\|x_i^t-\\bar x^t\\|^2 = \\frac1m\\sum_i\\|x_i^t-x^\\star\\|^2-\\|\\bar x^t-x^\\star\\|^2`, ``(R, n_eval)``."""
    clients = [v for name, v in trace.metrics.items() if name.startswith("client") and name.endswith(".dist2")]
    return np.maximum(np.mean(clients, axis=0) - trace.metrics["mean.dist2"], 0.0)


def time_average(rounds: np.ndarray, values: np.ndarray) -> np.ndarray:
    """:math:`\\frac1T\\sum_{t=0}^{T-1}f(t)` per replica from ``values`` ``(R, n)`` recorded at ``rounds`` (0 to T):
    the trapezoid rule plus the Euler-Maclaurin end correction :math:`(f(0)-f(T))/2`, exact when every round is
    recorded and accurate to :math:`O(\\text{spacing}^2)` of the curve's curvature otherwise."""
    trapezoid = (0.5 * (values[:, 1:] + values[:, :-1]) * np.diff(rounds)).sum(1)
    total = trapezoid + 0.5 * (values[:, 0] - values[:, -1])
    return total / rounds[-1]


def time_averages(trace) -> dict[str, np.ndarray]:
    """Per-replica :math:`\\frac1T\\sum_{t<T}` of :math:`\\|\\nabla F(\\bar x^t)\\|^2` and of the consensus error."""
    return {"grad": time_average(trace.rounds, trace.metrics["mean.gradnorm2"]),
            "consensus": time_average(trace.rounds, consensus_error(trace))}


def cor1_constants(problem: str, s: int, k: int) -> tuple[Constants, float]:
    """FedAWE's constants for ``problem`` under uniform-k (delta = k/m, rho = 1-(k-1)/(m-1)) and F(x^0) - F*."""
    spec = {key: v for key, v in PROBLEMS[problem].items() if key != "name"}
    q = random_quadratic(**spec)
    beta2 = 2.0 * a4_beta2_min(q)  # any beta^2 above the minimum is admissible; zeta^2 is then tight
    c = Constants(L=L_BOUND, sigma2=q.sigma2, beta2=beta2, zeta2=a4_zeta2(q, beta2), delta=k / M, delta_max=k / M,
                  rho=uniform_k_rho(M, k), m=M, s=s)
    return c, float(q.value(q.x_init) - q.f_star)


def cor1_bound(problem: str, T: int, s: int, k: int) -> float:
    """The explicit Corollary 1 bound (Corollary 2 at Corollary 1's steps) for ``problem``; inf when rho = 1 (k = 1)."""
    if k == 1:
        return float("inf")
    c, delta0 = cor1_constants(problem, s, k)
    return corollary1_rhs(c, T, delta0)


def rate_horizons(ctx) -> list[int]:
    return [2 ** j for j in ctx.pick(range(7, 11), range(7, 15))]


def rate_data(ctx) -> dict:
    """Per problem: horizons, per-replica time averages ``(R, len(T))``, the explicit bound per horizon, and the
    measured seconds per replica-round of its runs (``"cost"``, :func:`theorylab.regime.seconds_per_round`)."""
    horizons, replicas = rate_horizons(ctx), ctx.pick(16, 32)
    out = {"T": np.asarray(horizons), "replicas": replicas}
    for problem in PROBLEMS:
        traces = [ctx.run(cor1_config(problem, T, RATE_S, RATE_K, replicas, ctx.seed)) for T in horizons]
        values = [time_averages(trace) for trace in traces]
        out[problem] = {name: np.stack([v[name] for v in values], 1) for name in ("grad", "consensus")}
        out[problem]["bound"] = np.array([cor1_bound(problem, T, RATE_S, RATE_K) for T in horizons])
        out[problem]["cost"] = seconds_per_round(traces)
    return out


def loglog_panel(ax, x, curves: dict, xlabel: str, reference: float = -0.5, bounds: dict | None = None):
    """Replica means of each ``curves[label]`` ``(R, len(x))`` with fitted slopes (95% bootstrap CI), a reference
    slope anchored at the first curve, and explicit bounds ``{label: values}`` dotted in the curves' colours."""
    anchor = None
    for i, (label, samples) in enumerate(curves.items()):
        fit, mean = slope_with_ci(x, samples), samples.mean(0)
        ax.loglog(x, mean, "o-", color=f"C{i}", label=f"{label}: slope {fit.slope:.2f} [{fit.ci[0]:.2f}, {fit.ci[1]:.2f}]")
        anchor = mean[0] if anchor is None else anchor
    ax.loglog(x, anchor * (np.asarray(x) / x[0]) ** reference, "k--", lw=0.8, label=f"reference slope {reference:g}")
    for i, (label, values) in enumerate((bounds or {}).items()):
        ax.loglog(x, values, ":", color=f"C{i}", lw=1.2, label=label)
    ax.set(xlabel=xlabel)
    ax.set_xticks(list(x), [f"{v:g}" for v in x])
    ax.xaxis.set_minor_formatter("")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16))


def draw_rate(data: dict, path):
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.0), constrained_layout=True)
    T = data["T"]
    titles = {"grad": r"$\frac{1}{T}\sum_t\mathbb{E}\|\nabla F(\bar x^t)\|^2$",
              "consensus": r"$\frac{1}{T}\sum_t\frac{1}{m}\sum_i\mathbb{E}\|x_i^t-\bar x^t\|^2$"}
    for ax, name in zip(axes, ("grad", "consensus")):
        bounds = {f"explicit bound, {LABELS[p]}": data[p]["bound"] for p in PROBLEMS} if name == "grad" else None
        loglog_panel(ax, T, {LABELS[p]: data[p][name] for p in PROBLEMS}, "rounds $T$", bounds=bounds)
        ax.set_title(titles[name])
    fig.suptitle(f"FedAWE Corollary 1: $\\eta_l=1/(sL\\sqrt{{T}})$, $\\eta_g=\\sqrt{{s\\delta m}}$, "
                 f"s={RATE_S}, uniform k={RATE_K} of m={M}, quadratic d={DIM}, $\\sigma$={SIGMA}")
    return save(fig, path)


@register("figure", "fedawe-rate")
@one_thread
def render(ctx):
    """FedAWE Cor. 1: log-log rate vs T with fitted slopes, the T^-1/2 reference and the explicit bound."""
    return draw_rate(rate_data(ctx), ctx.figure_path("fedawe-rate"))
