r"""MasFL's staleness threshold (seed 004 Thm 3.1, App. C; digest 004 §3.2, §5.2 check 11): MasFL and AdaMasFL at a
fixed :math:`T` under a fixed staleness :math:`\tau_{\max}` swept across the threshold that Theorem 3.1's condition
puts on it, against :math:`\tau_{\max}^2SK/T` with the threshold marked.

**The threshold.**  With :math:`\beta=\sqrt{SK/T}` Theorem 3.1 needs :math:`1-4a-\sqrt{SK/T}\ge0`,
:math:`a=\tau_{\max}^2SK/T+20e^2\eta^2K^2L^2` (App. C: :math:`a\le\frac14(1-\sqrt{SK/T})`).  Write
:math:`\eta=f\,\eta_{\max}(0)`, a share :math:`f\in[0,1]` of the printed cap at :math:`\tau_{\max}=0`,
:math:`\eta_{\max}(0)=\sqrt{T-\sqrt{SKT}}/(4\sqrt5\,eKL\sqrt T)`; then :math:`80e^2\eta^2K^2L^2=f^2(1-\sqrt{SK/T})`
and the condition reads

.. math::
    \frac{\tau_{\max}^2SK}{T}\le\frac{1-f^2}4\Big(1-\sqrt{\frac{SK}T}\Big)
    \iff \tau_{\max}\le\tau^\star(f)=\frac12\sqrt{\frac{(1-f^2)\,(T-\sqrt{SKT})}{SK}} .

:math:`\tau^\star(0)=\frac12\sqrt{(T-\sqrt{SKT})/(SK)}` is the supremum over :math:`\eta>0` (the digest's
:math:`\tau_{\max}^2SK/T=\frac14(1-\sqrt{SK/T})`): beyond it no :math:`\eta` meets the condition.  As
:math:`\tau^\star(0)^2=T(1-\sqrt{SK/T})/(4SK)\sim T/(4SK)`, covering a staleness :math:`\tau_{\max}` takes
:math:`T\ge\mathcal O(\tau_{\max}^2)`, as §3.2 says.

**Fixed staleness.**  Mode B (:mod:`theorylab.clocks.buffered`, R2) with :math:`M_c=N=mS` clients in :math:`m`
groups of :math:`S`; every job of group :math:`g` lasts :math:`1+g\epsilon` (a fixed duration per client),
:math:`\epsilon=1/(4mT)`.  Each group restarts when it is applied, so group :math:`g` completes at
:math:`k(1+g\epsilon)`, :math:`k=1,2,\dots`; the groups keep their order while :math:`k(m-1)\epsilon<1`, i.e. over
the whole run (:math:`k\le T/m+1`), and step :math:`t` applies group :math:`t\bmod m` with
:math:`\tau_i^t=\min(t,m-1)`: :math:`\tau_{\max}=m-1=M_c/S-1` exactly (the clock's recorded :math:`\tau_{\max}` is
checked against it).

**Problem.**  :math:`m` copies of one :math:`S`-client heterogeneous quadratic (the law of
:func:`theorylab.figures.masfl_curves.async_quadratic`, :math:`\sigma=0.5`), so :math:`f=\frac1N\sum_if_i`, its
:math:`\theta^\star`, :math:`f^\star`, :math:`L` and :math:`\Delta` are the same for every :math:`m`, and each server
step applies one copy, all :math:`S` distinct clients: only the staleness changes along the sweep.

**Steps.**  MasFL: Theorem 3.1's :math:`\beta`, :math:`\gamma=\beta/(4L)` and one :math:`\eta=\frac12\eta_{\max}(0)`
for every :math:`\tau_{\max}` (the convention of the other MasFL claims; the cap depends on :math:`\tau_{\max}` and
vanishes at :math:`\tau^\star(0)`, so one :math:`\eta` is the only way to run past it), covered up to
:math:`\tau^\star(\frac12)=\frac{\sqrt3}2\tau^\star(0)`.  AdaMasFL: Theorem 4.1's problem-free steps, which do not
depend on :math:`\tau_{\max}`.  Staleness grid: :math:`0`, :math:`\lfloor\tau^\star(\frac12)\rfloor` (the last
covered), then :math:`\lceil2^j\tau^\star(0)\rceil`, :math:`j=0..4` (the first beyond any :math:`\eta`, and on).

Metrics per run: the theories' time averages :math:`\frac1T\sum_{t<T}\|\nabla f(\theta^t)\|^2` (Thm 3.1) and
:math:`\frac1T\sum_{t<T}\|\nabla f(\theta^t)\|` (Thm 4.1, Table 1; :func:`theorylab.figures.fedawe_rate.time_average`),
and :math:`\|\nabla f\|` averaged over the last quarter of the run (the end of a learning curve).
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.bounds.masfl import staleness_limit as limit, staleness_threshold as threshold, steps_thm31, \
    steps_thm41
from theorylab.config import RunConfig
from theorylab.figures.fedawe_rate import recording_step, time_average
from theorylab.figures.masfl_curves import async_quadratic
from theorylab.plotting import pyplot, save
from theorylab.registry import build, register
from theorylab.threads import one_thread

S, K, SIGMA = 2, 2, 0.5
ROUNDS, REPLICAS = (128, 800), (16, 64)  # (quick, full)
ETA_SHARE = 0.5  # MasFL's eta as a share f of Theorem 3.1's cap at tau_max = 0
DOUBLINGS = 5  # grid points ceil(2^j tau*(0)), j < DOUBLINGS
METRICS = ("squared", "norm", "end")  # (1/T) sum ||grad f||^2, (1/T) sum ||grad f||, last-quarter mean ||grad f||


def staleness_grid(T: int) -> tuple[int, ...]:
    r"""0, the last covered :math:`\lfloor\tau^\star(f)\rfloor`, and :math:`\lceil2^j\tau^\star(0)\rceil`."""
    sup, covered = threshold(S, K, T), threshold(S, K, T, ETA_SHARE)
    return tuple(sorted({0, math.floor(covered), *(math.ceil(2 ** j * sup) for j in range(DOUBLINGS))}))


def base_problem():
    """The S-client quadratic that every grid point copies (async_quadratic's law, sigma = :data:`SIGMA`)."""
    return build("testbed", async_quadratic(S, S, S, sigma=SIGMA)["problem"])


def fixed_staleness(tau: int, T: int) -> dict:
    r"""Run-config fields of :math:`m=\tau+1` copies of :func:`base_problem` under the group schedule of the module
    docstring (:math:`\tau_i^t=\min(t,\tau)`)."""
    base, m = base_problem(), tau + 1
    epsilon = 1.0 / (4 * m * T)
    n = m * S
    return dict(problem={"name": "quadratic", "hessians": np.tile(base.A, (m, 1, 1)).tolist(),
                         "centers": np.tile(base.u, (m, 1)).tolist(), "sigma": SIGMA},
                participation={"name": "bernoulli", "p": [1.0] * n},
                clock={"name": "buffered", "n_clients": n, "concurrency": n, "buffer": S, "refill": "R2",
                       "delay": {"law": "fixed", "values": [1.0 + (i // S) * epsilon for i in range(n)]}})


def algorithms(T: int, L: float) -> dict[str, dict]:
    """MasFL with Theorem 3.1's steps at eta = f eta_max(0); AdaMasFL with Theorem 4.1's."""
    masfl = steps_thm31(S, K, T, L, 0.0, eta_fraction=ETA_SHARE)
    return {"MasFL": {"name": "masfl", **masfl._asdict(), "local_steps": K},
            "AdaMasFL": {"name": "adamasfl", **steps_thm41(S, K, T)._asdict(), "local_steps": K}}


def compute(ctx) -> dict:
    """Per algorithm and grid staleness, the per-replica :data:`METRICS` and the clock's recorded tau_max."""
    T, replicas = ctx.pick(*ROUNDS), ctx.pick(*REPLICAS)
    base = base_problem()
    grid = staleness_grid(T)
    runs = {label: {m: {} for m in METRICS} for label in ("MasFL", "AdaMasFL")}
    recorded = {}
    for label, spec in algorithms(T, base.L).items():
        for tau in grid:
            trace = ctx.run(RunConfig(algorithm=spec, rounds=T, replicas=replicas, seed=ctx.seed,
                                      every=recording_step(T), **fixed_staleness(tau, T)))
            grad2 = trace.metrics["server.gradnorm2"]
            runs[label]["squared"][tau] = time_average(trace.rounds, grad2)
            runs[label]["norm"][tau] = time_average(trace.rounds, np.sqrt(grad2))
            runs[label]["end"][tau] = np.sqrt(grad2[:, -(grad2.shape[1] // 4):]).mean(1)
            recorded[label, tau] = int(trace.metrics["clock.tau_max"][:, -1].max())
    return {"T": T, "replicas": replicas, "grid": grid, "runs": runs, "recorded": recorded, "L": base.L,
            "Delta": float(base.value(base.x_init) - base.f_star), "sigma2": base.sigma2}


def draw(data: dict, path):
    """Each metric over its synchronous value against tau_max^2 SK / T (log axis), the condition's bounds marked."""
    plt = pyplot()
    T, grid = data["T"], [tau for tau in data["grid"] if tau > 0]
    x = np.array(grid) ** 2 * S * K / T
    panels = (("norm", "(1/T) Σ‖∇f(θᵗ)‖ (Table 1's metric)"),
              ("squared", "(1/T) Σ‖∇f(θᵗ)‖² (Thm 3.1's metric)"),
              ("end", "‖∇f‖ over the last quarter of the run"))
    fig, axes = plt.subplots(1, len(panels), figsize=(13, 4), constrained_layout=True, sharey=True)
    for ax, (metric, title) in zip(axes, panels):
        for k, (label, runs) in enumerate(data["runs"].items()):
            if metric == "squared" and label != "MasFL":
                continue
            ratio = np.array([runs[metric][tau] / runs[metric][0] for tau in grid])  # (grid, replicas)
            spread = ratio.std(1, ddof=1) / math.sqrt(ratio.shape[1])
            ax.errorbar(x, ratio.mean(1), yerr=spread, marker="o", color=f"C{k}", label=label, capsize=2)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.axvline(limit(S, K, T), color="k", ls="--", lw=1, label="¼(1 − √(SK/T)): no η beyond")
        ax.axvline(limit(S, K, T, ETA_SHARE), color="C3", ls=":", lw=1, label=f"MasFL's η = {ETA_SHARE:g} η_max(0)")
        ax.set(xscale="log", yscale="log", title=title, xlabel="τ_max² SK / T")
    axes[0].set_ylabel("over its value at τ_max = 0 (mean ± s.e.)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Theorem 3.1's staleness threshold: S = {S}, K = {K}, T = {T}, σ = {SIGMA}, fixed staleness "
                 f"τ_max ∈ {list(data['grid'])} (τ*(0) = {threshold(S, K, T):.3g}), {data['replicas']} replicas")
    return save(fig, path)


@register("figure", "masfl-staleness-threshold")
@one_thread
def render(ctx):
    """MasFL / AdaMasFL against tau_max^2 SK / T under a fixed staleness, Theorem 3.1's threshold marked."""
    return draw(compute(ctx), ctx.figure_path("masfl-staleness-threshold"))
