r"""FedAWE Figure 6 (App. J): availability dynamics :math:`p_i^t` and sampled availability for :math:`p_i\in\{0.1,0.5,0.9\}`.

Seed 000 §7 and App. J.3; digest 000 §5, §6.6.  Top row: :math:`p_i^t = \mathrm{clip}(p_if_i(t))` over rounds for
each dynamics (stationary, staircase, sine :math:`\gamma = 0.3`, interleaved sine with :math:`\delta_0 = 0.1`;
period :math:`P = 20`), from :class:`theorylab.participation.dynamics.Schedule`.  Bottom row: one sampled
availability trace per client (filled box = available), drawn by the registered ``bernoulli`` process.
Under the interleaved sine the client with :math:`p_i = 0.1` is cut to zero except at the sine's peaks, where
:math:`p_i^t = 0.1 = \delta_0` exactly (the code's rule zeroes values *below* :math:`\delta_0`); the paper's
Fig. 6 shows it never available, which a 60-round sample with three chances of 0.1 usually reproduces.
"""

from __future__ import annotations

import numpy as np

from theorylab.participation.bernoulli import bernoulli
from theorylab.participation.dynamics import DYNAMICS
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.rng import Streams

BASE = (0.1, 0.5, 0.9)
ROUNDS = 60


def compute(seed: int, rounds: int = ROUNDS) -> dict:
    """``{dynamics: (probabilities (rounds, 3), sampled masks (rounds, 3))}``."""
    out = {}
    for dynamics in DYNAMICS:
        process = bernoulli(list(BASE), dynamics=dynamics)
        streams = Streams(seed, 1)
        masks = np.stack([process.draw(None, t, streams)[1][0].numpy() for t in range(rounds)])
        out[dynamics] = (np.stack([process.probabilities(t) for t in range(rounds)]), masks)
    return out


def draw(data: dict, path):
    plt = pyplot()
    from matplotlib.colors import ListedColormap

    fig, axes = plt.subplots(2, len(DYNAMICS), figsize=(13, 4.6), constrained_layout=True,
                             gridspec_kw={"height_ratios": [2.2, 1]}, sharex=True)
    colors = ["C3", "C1", "C2"]
    for col, dynamics in enumerate(DYNAMICS):
        probs, masks = data[dynamics]
        t = np.arange(len(probs))
        top, bottom = axes[0, col], axes[1, col]
        for i, p in enumerate(BASE):
            top.step(t, probs[:, i], where="post", color=colors[i], label=f"$p_i$={p}")
        top.set(title=dynamics.replace("_", " "), ylim=(-0.03, 1.03), ylabel="$p_i^t$" if col == 0 else None)
        image = masks.T.astype(float) * (1 + np.arange(len(BASE)))[:, None]  # colour = client, 0 = unavailable
        bottom.imshow(image, aspect="auto", interpolation="nearest", cmap=ListedColormap(["white"] + colors),
                      vmin=0, vmax=len(BASE), extent=(-0.5, len(t) - 0.5, len(BASE) - 0.5, -0.5))
        bottom.set(yticks=range(len(BASE)), yticklabels=[f"{p}" for p in BASE], xlabel="round $t$",
                   ylabel="sampled ($p_i$)" if col == 0 else None)
        bottom.grid(False)
    axes[0, 0].legend(fontsize=7, loc="lower left")
    fig.suptitle("FedAWE Fig. 6: availability dynamics (P=20, $\\gamma$=0.3, staircase low=0.4, $\\delta_0$=0.1) "
                 "and one sampled trace (filled = available)")
    return save(fig, path)


@register("figure", "fedawe-availability")
def render(ctx):
    """FedAWE Fig. 6: p_i^t over rounds for each dynamics (p_i in {0.1, 0.5, 0.9}) and sampled availability."""
    return draw(compute(ctx.seed), ctx.figure_path("fedawe-availability"))
