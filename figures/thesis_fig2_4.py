r"""Thesis Fig. 2.4a (seed 001 §2.4.2 L846-851, §2.5.2 L883; digest 001 §2.6, §5.2, §8 V5): mean estimation errors
:math:`\frac1N\sum_i|\hat\pi_i-\pi_i|` and :math:`\frac1N\sum_i|\hat\lambda_i-\lambda_i|` against the number
:math:`t'\in\{10^1, 10^{1.5}, \dots, 10^4\}` of observed rounds.

Estimators: :mod:`theorylab.participation.estimators` (Beta-Bayesian :math:`\hat\pi_i = (c_i+1)/(t'+2)`,
:math:`\hat\lambda_i = \hat P_{00}+\hat P_{11}-1` from conditional transition counts, uniform Beta(1, 1) priors),
fed with the masks of the Ch. 2 class mix (:func:`theorylab.figures.thesis_fig2_1.availability` with :math:`N = 100`:
:math:`\pi\in\{0.9, 0.1\}`, :math:`\lambda\in\{0.9, \mathcal N(0, 0.01^2)\}`, 25 clients per class), each chain from
its stationary start.  The dotted lines are :math:`t'^{-1/2}` through the last point (the central limit rate); the
vertical line is the slowest chain's hitting time :math:`\max_i 1/((1-\lambda_i)\pi_i) = 100`.  The claim
``thesis.estimators.rate`` tests the same curves.

Panel (b) of the thesis (CA-Fed's accuracy after :math:`T = 50` rounds with estimators pre-fed by :math:`t'`
observations) is the recipe ``thesis-fig2-4b`` (:mod:`theorylab.figures.thesis_fig2_4b`).
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.figures.thesis_fig2_1 import availability
from theorylab.participation import estimators as est
from theorylab.participation.markov import markov
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.threads import one_thread

CHECKPOINTS = tuple(int(v) for v in np.round(10 ** np.arange(1.0, 4.01, 0.5)))  # 10, 32, 100, ..., 10000
CLIENTS = 100


def compute(ctx, replicas: int | None = None, checkpoints=CHECKPOINTS, n_clients: int = CLIENTS) -> dict:
    """``{"t": checkpoints, "pi": (replicas, len(t)), "lam": (replicas, len(t))}``: per replica the mean absolute
    error over clients of :math:`\\hat\\pi` and :math:`\\hat\\lambda` after ``t`` observed rounds."""
    checkpoints = tuple(int(t) for t in checkpoints)
    if not checkpoints or min(checkpoints) < 2 or list(checkpoints) != sorted(set(checkpoints)):
        raise ValueError(f"checkpoints must be increasing integers >= 2; got {checkpoints}")
    replicas = replicas or ctx.pick(20, 100)
    pi, lam = availability(n_clients)
    truth_pi, truth_lam = torch.as_tensor(pi), torch.as_tensor(lam)
    counts, rows = est.init_counts(replicas, n_clients), {"pi": [], "lam": []}
    for t, mask in est.observe(markov(pi, lam), checkpoints[-1], Streams(ctx.seed, replicas)):
        counts = est.update_counts(counts, mask)
        if t + 1 in checkpoints:
            rows["pi"].append((est.pi_hat(counts) - truth_pi).abs().mean(1))
            rows["lam"].append((est.lambda_hat(counts) - truth_lam).abs().mean(1))
    return {"t": np.asarray(checkpoints), **{k: torch.stack(v, 1).numpy() for k, v in rows.items()}}


def draw(data: dict, path, title: str):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4), constrained_layout=True)
    t = data["t"]
    for key, label, color in (("pi", "(1/N) sum |pi_hat - pi|", "C0"),
                              ("lam", "(1/N) sum |lambda_hat - lambda|", "C3")):
        mean, std = data[key].mean(0), data[key].std(0, ddof=1)
        ax.errorbar(t, mean, yerr=std, color=color, marker="o", ms=3, capsize=2, label=label)
        ax.plot(t, mean[-1] * np.sqrt(t[-1] / t), ":", color=color, lw=0.8)
    ax.axvline(100, color="0.5", lw=0.6, ls="--", label="max_i 1/((1-lambda_i) pi_i) = 100")
    ax.set(xscale="log", yscale="log", xlabel="observed rounds t'", ylabel="mean error (± sample std over replicas)")
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=8)
    return save(fig, path)


@register("figure", "thesis-fig2-4")
@one_thread
def render(ctx):
    """Thesis Fig. 2.4a: estimation errors of pi_hat and lambda_hat vs the observed rounds t'."""
    data = compute(ctx)
    title = (f"Thesis Fig. 2.4a, Ch. 2 class mix, N = {CLIENTS}, {data['pi'].shape[0]} replicas"
             f"{' (quick)' if ctx.quick else ''}; panel (b): thesis-fig2-4b")
    return draw(data, ctx.figure_path("thesis-fig2-4"), title)
