r"""FedAWE's spectral quantity :math:`\rho(t) = \lambda_2(\mathbb E[W^{(t)}])` over rounds, for each availability dynamics.

Seed 000 eq. (4), Lemmas 1 and 4; digest 000 §2.2, §3.2.  Base probabilities from the paper's recipe
(:math:`m = 100`, :func:`theorylab.participation.dynamics.fedawe_recipe`), exact :math:`M^{(t)}` by quadrature
(:func:`theorylab.mixing.rho_schedule`).  The dashed lines mark Lemma 4's bound :math:`1-\delta^4(1-(1-\delta)^m)^2/8`
for each dynamics; its gap is so small that it is drawn on a :math:`1-\rho` log scale in the right panel.
Under the interleaved sine some :math:`p_i^t = 0`, so :math:`\rho(t) = 1` in those rounds (no contraction).
"""

from __future__ import annotations

import numpy as np

from theorylab.mixing import lemma4_gap, rho_schedule
from theorylab.participation.base import availability_bounds
from theorylab.participation.bernoulli import bernoulli
from theorylab.participation.dynamics import DYNAMICS, fedawe_recipe
from theorylab.plotting import pyplot, save
from theorylab.registry import register

M, ROUNDS = 100, 40


def compute(seed: int, m: int = M, rounds: int = ROUNDS) -> dict:
    """``{dynamics: (rho(t) for t < rounds, delta, delta_max, Lemma 4 gap)}`` for the paper recipe's base
    probabilities."""
    base = fedawe_recipe(m, seed=seed)
    out = {"base": base}
    for dynamics in DYNAMICS:
        process = bernoulli(base, dynamics=dynamics)
        delta, delta_max = availability_bounds(process, rounds)
        out[dynamics] = (rho_schedule(process, rounds), delta, delta_max, lemma4_gap(delta, m))
    return out


def draw(data: dict, path):
    plt = pyplot()
    fig, (ax, gap_ax) = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True)
    for i, dynamics in enumerate(DYNAMICS):
        rho, delta, delta_max, bound_gap = data[dynamics]
        t = np.arange(len(rho))
        label = (f"{dynamics.replace('_', ' ')} ($\\delta$={delta:.3f}, $\\delta_{{\\max}}$={delta_max:.3f}, "
                 f"max $\\rho$={rho.max():.4f})")
        ax.step(t, rho, where="post", color=f"C{i}", label=label)
        gap = np.where(1 - rho > 1e-12, 1 - rho, 1e-17)  # rho(t) = 1 up to rounding is drawn at the floor
        gap_ax.semilogy(t, gap, color=f"C{i}", drawstyle="steps-post", label=dynamics.replace("_", " "))
        if bound_gap > 0:
            gap_ax.axhline(bound_gap, color=f"C{i}", ls="--", lw=0.8)
    ax.set(xlabel="round $t$", ylabel=r"$\rho(t)=\lambda_2(M^{(t)})$", title="exact $\\rho(t)$ (quadrature)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    gap_ax.set(xlabel="round $t$", ylabel=r"spectral gap $1-\rho(t)$",
               title="gap vs Lemma 4's lower bound (dashed; 0 for interleaved sine)")
    gap_ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4)
    base = data["base"]
    fig.suptitle(f"FedAWE mixing: m={len(base)} clients, paper recipe p_i in [{base.min():.3f}, {base.max():.3f}]; "
                 "$1-\\rho(t)=10^{-17}$ marks $\\rho(t)=1$ (up to rounding)")
    return save(fig, path)


@register("figure", "fedawe-rho")
def render(ctx):
    """FedAWE rho(t) = lambda_2(M^(t)) over rounds for each dynamics, with Lemma 4's bound on the gap."""
    return draw(compute(ctx.seed), ctx.figure_path("fedawe-rho"))
