r"""Thesis Fig. 2.4b stand-in (seed 001 §2.5.2 L883, caption L894; digest 001 L162, L360, L396, §8 V5): final test
accuracy after :math:`T = 50` rounds against the number :math:`t'\in\{10^1, 10^{1.5}, \dots, 10^4\}` of historical
observations of each client's availability chain fed to CA-Fed's estimators before training, beside Fig. 2.1's
baselines.

The thesis (L883): "Figure 2.4b compares the final test accuracy obtained by CA-Fed and the baselines for varying
numbers of historical observations :math:`t'` [...] when training for :math:`T = 50` rounds on the MNIST dataset.
In this setting, CA-Fed outperforms the baselines for :math:`t' \ge 100`", about the slowest chain's expected
hitting time :math:`\max_i 1/((1-\lambda_i)\pi_i) = 100` (:func:`hitting_time`; the dashed vertical line).

Runs: Fig. 2.1a's configurations (:func:`~theorylab.figures.thesis_fig2_1.leaf_config`: the four availability
blocks of :func:`~theorylab.figures.thesis_fig2_1.availability`, :math:`\pi = 0.9 / 0.1`, :math:`\lambda_2 = 0.9`
or :math:`\sim\mathcal N(0, 0.01^2)`, stationary start; the specs of
:func:`~theorylab.figures.thesis_fig2_1.method_specs` with one common step setting, :math:`K = 5`,
:math:`\eta_c = 0.05`, :math:`\eta_s = 1`) with the testbed swapped as in Fig. 2.1c
(:func:`~theorylab.figures.thesis_fig2_1c.swap`) and :math:`T = 50`:

* **CA-Fed** (:math:`\bar\kappa^2 = 1`, :math:`\beta = 1`, :math:`\tau = 0`, bias factor 4), one run per
  :math:`t'`, with ``availability="estimated"``: :math:`\hat\pi_i = (c_i+1)/(t+2)` and
  :math:`\hat\lambda_i = \hat P_{00,i}+\hat P_{11,i}-1` from Beta(1, 1)-smoothed conditional transition counts (the
  estimators of Fig. 2.4a, :mod:`theorylab.figures.thesis_fig2_4`), fed with ``history`` :math:`= t'` rounds of each
  client's chain before round 0 (the stationary past of the run's own chains, :mod:`theorylab.kernels.cafed`), then
  with the training rounds;
* **references**, flat in :math:`t'`: CA-Fed with the oracle :math:`(\pi_i, \lambda_i)` (its
  :math:`t'\to\infty` limit) and AdaFed, Unbiased, More available and F3AST as in Fig. 2.1, with
  :math:`q = \alpha/\pi` of the true :math:`\pi`.  READING: the thesis does not say whether its baselines read the
  estimates; here they do not, so the figure shows the price CA-Fed pays for learning :math:`(\pi, \lambda)`.

Every run of a replica shares the partition, the availability masks, the minibatches and the initial model (the
history has its own random stream), so the points differ by :math:`t'` and the method only, and the histories are
nested: a longer one extends a shorter one further into the past.

Stand-in (labelled in the title): SUBSTITUTION for MNIST (60k, 20% held out for validation; digest 001 §5.1):
quick, scikit-learn's digits (no download; 1,437 / 360 8x8 images), :math:`N = 20` clients, 3 replicas; full, the
10k MNIST digits of ``mnist10k`` (``make data``), :math:`N = 100`, 10 replicas.  Both with the thesis' MNIST model,
multinomial logistic (without its unstated :math:`10^{-2}` ridge), Dirichlet(0.5) labels, batch 32,
:math:`\alpha_i = |D_i|/|D|`, CA-Fed's :math:`\hat F_i^\star` the running minimum of one-minibatch losses (Fig. 2.1c),
Fig. 2.1a's step sizes (not Table A.2's MNIST row), and the server model's test accuracy at :math:`T` (the thesis:
the :math:`\alpha`-weighted mean of the clients' test accuracies).
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.figures.thesis_fig2_1 import (COLORS, accuracy_curves, availability, clients, method_specs,
                                             replicas)
from theorylab.figures.thesis_fig2_1c import METHODS, StandIn, swap
from theorylab.figures.thesis_fig2_4 import CHECKPOINTS
from theorylab.plotting import pyplot, save
from theorylab.registry import build, register
from theorylab.threads import one_thread

ROUNDS = 50  # the thesis' T for Fig. 2.4b (digest 001 L360)
ORACLE = "CA-Fed, oracle (pi, lambda)"


def hitting_time(n_clients: int) -> float:
    """:math:`\\max_i 1/((1-\\lambda_i)\\pi_i)` over the availability blocks (100 for the thesis' classes)."""
    pi, lam = map(np.asarray, availability(n_clients))
    return float((1.0 / ((1.0 - lam) * pi)).max())


def stand_in(ctx) -> StandIn:
    """Quick: scikit-learn digits on the CPU; full: the 10k MNIST digits, on CUDA when present."""
    base = {"name": "mnist10k", "model": "logistic", "clients": clients(ctx), "partition": "dirichlet", "alpha": 0.5,
            "batch_size": 32, "weights": "size", "seed": 0}
    if ctx.quick:
        return StandIn({**base, "name": "digits", "eval_train": None, "eval_test": None}, 3, "cpu",
                       "QUICK STAND-IN: scikit-learn digits (8x8) for MNIST")
    return StandIn({**base, "eval_train": 2000, "eval_test": None}, replicas(ctx),
                   "cuda" if torch.cuda.is_available() else "cpu", "SUBSTITUTION: the 10k MNIST digits (mnist10k)")


def specs(alpha, checkpoints=CHECKPOINTS) -> dict:
    """Run specs by label: CA-Fed with estimated availability and ``history`` :math:`= t'` (label ``t' = ...``) for
    each ``checkpoints``, then the references: CA-Fed with oracle :math:`(\\pi, \\lambda)` and Fig. 2.1's baselines."""
    table = method_specs(alpha, ROUNDS, {"f_star": "running_min"}, others=METHODS[1:])
    cafed = table.pop("CA-Fed")
    estimated = {f"t' = {t}": {**cafed, "availability": "estimated", "history": int(t)} for t in checkpoints}
    return {**estimated, ORACLE: cafed, **table}


def compute(ctx, run=None, checkpoints=CHECKPOINTS) -> dict:
    """``{"t": t' values, "CA-Fed": (replicas, len(t)), reference label: (replicas,)}``: final test accuracy (%) at
    :math:`T`; ``run`` (default ``ctx.run``) maps a config to a trace."""
    s, run = stand_in(ctx), run or ctx.run
    alpha = build("testbed", s.problem).weights.double().cpu().numpy()
    curves = accuracy_curves(ctx, ROUNDS, specs(alpha, checkpoints), lambda config: run(swap(config, s)))
    final = {label: acc[:, -1] for label, acc in curves.items() if label != "rounds"}
    return {"t": np.asarray(checkpoints), "CA-Fed": np.stack([final.pop(f"t' = {t}") for t in checkpoints], 1),
            **final}


def draw(data: dict, path, title: str, hitting: float):
    """CA-Fed's final accuracy against :math:`t'` (mean ± sample std over replicas) and the flat references."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.2), constrained_layout=True)
    t, acc = data["t"], data["CA-Fed"]
    ax.errorbar(t, acc.mean(0), yerr=acc.std(0, ddof=1), color=COLORS["CA-Fed"], marker="o", ms=4, capsize=2,
                label="CA-Fed, estimated (pi, lambda) after t' observations")
    for label, values in ((k, v) for k, v in data.items() if k not in ("t", "CA-Fed")):
        color = COLORS.get(label, COLORS["CA-Fed"])
        ax.axhline(values.mean(), color=color, ls="--" if label == ORACLE else "-", lw=1.0,
                   label=f"{label} ({values.mean():.1f} ± {values.std(ddof=1):.1f}%)")
    ax.axvline(hitting, color="0.5", lw=0.6, ls=":", label=f"max_i 1/((1-lambda_i) pi_i) = {hitting:g}")
    ax.set(xscale="log", xlabel="historical observations t' before training",
           ylabel=f"test accuracy (%) of the server model at T = {ROUNDS}")
    ax.legend(fontsize=6.5, title="mean ± sample std over replicas;\nreferences use the true pi (flat in t')",
              title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(title, fontsize=8)
    return save(fig, path)


@register("figure", "thesis-fig2-4b")
@one_thread
def render(ctx):
    """Thesis Fig. 2.4b stand-in: final accuracy at T = 50 of CA-Fed with estimators pre-fed by t' observations,
    beside Fig. 2.1's baselines, on digits / the 10k MNIST digits for MNIST."""
    s = stand_in(ctx)
    title = (f"Thesis Fig. 2.4b (MNIST, T = {ROUNDS}) on a stand-in:\n{s.label}, multinomial logistic,\nN = "
             f"{clients(ctx)}, {s.replicas} replicas, Dir(0.5) labels, Fig. 2.1a's steps (K = 5, eta = 0.05)")
    return draw(compute(ctx), ctx.figure_path("thesis-fig2-4b"), title, hitting_time(clients(ctx)))
