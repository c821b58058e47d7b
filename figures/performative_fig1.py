r"""Performative FL Figure 1: distance to :math:`\theta^{PS}` for full participation, Scheme I and Scheme II.

Seed 003 §4.1, Fig. 1; digest 003 §6 Table A.  Gaussian-mean testbed from the authors' generator
(Var(ε)=0.1, Var(m)=0.6, :math:`\sigma_d=10^{-3}`), :math:`E=5`, :math:`K=20`, :math:`\eta_t=100/(t+10^4)`,
random :math:`p` for full/Scheme I and uniform for Scheme II [R].  Left: :math:`|\bar\theta^t-\theta^{PS}|` against
local iterations (the authors' axis), Monte Carlo mean :math:`\pm` std/:math:`\sqrt R` over ``R`` runs (cached,
``ctx.run``) and the exact :math:`\sqrt{\mathbb E(\bar\theta^t-\theta^{PS})^2}` (exact engine).  Right: the exact
:math:`\mathbb E(\bar\theta^t-\theta^{PS})^2` against :math:`t+\gamma` on log-log axes with a :math:`1/t` guide (the
theorems' axis) and the fitted slope over the last decade.
"""

from __future__ import annotations

import numpy as np

from theorylab.fitting import loglog_slope
from theorylab.performative.experiments import (THETA_PS, algorithm_spec, default_weights, expected_dist2, gaussian_spec,
                                                run_config)
from theorylab.plotting import pyplot, save
from theorylab.registry import register

SCHEMES = {"full": "full participation", "I": "Scheme I (K=20)", "II": "Scheme II (K=20)"}
HORIZON = 200_000
GAMMA = 1e4


def compute(ctx) -> dict:
    t = np.unique(np.r_[np.linspace(0, HORIZON, 401), np.logspace(3, np.log10(HORIZON), 200)].astype(int) // 5 * 5)
    mc_horizon, reps = ctx.pick(10_000, HORIZON), ctx.pick(5, 20)
    out = {"t": t, "exact": {}, "mc": {}, "slope": {}, "mc_horizon": mc_horizon, "reps": reps}
    tail = t[t >= HORIZON // 10]
    for scheme in SCHEMES:
        problem, algorithm = gaussian_spec(weights=default_weights(scheme)), algorithm_spec(scheme, 20)
        out["exact"][scheme] = expected_dist2(problem, algorithm, t)
        out["slope"][scheme] = loglog_slope(tail + GAMMA, expected_dist2(problem, algorithm, tail))[0]
        trace = ctx.run(run_config(problem, algorithm, mc_horizon, reps, seed=ctx.seed, points=200))
        out["mc"][scheme] = (trace.rounds * algorithm["local_steps"], np.abs(trace.metrics["server.theta"] - THETA_PS))
    return out


def draw(data: dict, path):
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9.6, 3.5), constrained_layout=True)
    for (scheme, label), colour in zip(SCHEMES.items(), ("C0", "C1", "C2")):
        steps, dist = data["mc"][scheme]
        mean, err = dist.mean(0), dist.std(0, ddof=1) / np.sqrt(dist.shape[0])
        ax.plot(steps, mean, color=colour, lw=1.0, label=f"{label}: MC mean of {dist.shape[0]} runs")
        ax.fill_between(steps, np.maximum(mean - err, 1e-6), mean + err, color=colour, alpha=0.25, lw=0)
        ax.plot(data["t"], np.sqrt(data["exact"][scheme]), color=colour, ls="--", lw=0.9)
        bx.loglog(data["t"][1:] + GAMMA, data["exact"][scheme][1:], color=colour,
                  label=f"{label} (slope {data['slope'][scheme]:.2f})")
    ax.plot([], [], "k--", lw=0.9, label=r"exact $\sqrt{\mathbb{E}(\bar\theta^t-\theta^{PS})^2}$")
    ax.set(yscale="log", xlim=(0, data["mc_horizon"]), xlabel="local iterations $t$",
           ylabel=r"$|\bar\theta^t-\theta^{PS}|$", title="(a) distance to PS (authors' axis)")
    ax.legend(fontsize=7)
    guide = data["t"][1:] + GAMMA
    bx.loglog(guide, 3e6 / guide, "k:", lw=0.8, label="slope $-1$ guide")
    bx.set(xlabel=r"$t+\gamma$ ($\gamma=10^4$)", ylabel=r"$\mathbb{E}(\bar\theta^t-\theta^{PS})^2$ (exact)",
           title="(b) squared distance (theorems' axis)")
    bx.legend(fontsize=7)
    fig.suptitle(r"Fig. 1: P-FedAvg on the Gaussian-mean testbed, $E=5$, $\eta_t=100/(t+10^4)$, "
                 r"$\theta^{PS}=100$; full participation is fastest, then Scheme II, then Scheme I")
    return save(fig, path)


@register("figure", "performative-fig1")
def render(ctx):
    """Performative FL Fig. 1: distance to PS vs iterations for full participation, Scheme I, Scheme II."""
    return draw(compute(ctx), ctx.figure_path("performative-fig1"))
