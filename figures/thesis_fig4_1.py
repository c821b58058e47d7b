r"""Thesis Fig. 4.1 (seed 001 §4.4, Synthetic LEAF; digest 001 §2.7): training loss and test accuracy vs round of
lossless FedAvg, DMA-PL, UDMA-PL and UPGA-PL under asymmetric packet losses.

Setting (the thesis leaves :math:`T`, :math:`K`, the batch, the group sizes and the chosen step unstated, digest §7
item 1): :math:`N = 10` clients of ``synthetic_leaf`` (:math:`\gamma = \delta = 1`, ridge :math:`5\times10^{-4}`,
:math:`\alpha_i = |D_i|/|D|`), the first five with total loss :math:`q = 0.1`, the last five with :math:`q = 0.9`
(uplink losses of the ``bernoulli_loss`` channel), every client selected, :math:`K = 5`, batch 32, one constant step
:math:`10^{-1.5}` from the thesis' grid for every method (no per-method tuning), the true :math:`q` known to UDMA-PL and
UPGA-PL; lossless FedAvg is the ``dma`` aggregator, which ignores the channel.  Quick: :math:`T = 60`, 4 replicas;
full: :math:`T = 150`, 10 replicas (the thesis' 10 seeds).  Curves are means over replicas with a one-sample-std
band.  This module also holds the curve recipe shared with Fig. 4.2 (:func:`curves`, :func:`draw`).
"""

from __future__ import annotations

import numpy as np

from theorylab.config import RunConfig
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

METHODS = {"FedAvg (lossless)": "dma", "DMA-PL": "dma_pl", "UDMA-PL": "udma_pl", "UPGA-PL": "upga_pl"}
LOSSES = [0.1] * 5 + [0.9] * 5
LEAF = {"name": "synthetic_leaf", "n_clients": 10, "gamma": 1.0, "delta": 1.0, "ridge": 5e-4, "batch": 32}


def curves(ctx, problem: dict, lr: float | dict, rounds: int, replicas: int, seed: int, dtype: str = "float64",
           device: str = "cpu", losses: list[float] = LOSSES) -> dict:
    """The traces of the four methods (same seed: common channel draws and minibatches) on ``problem``, with total
    loss probabilities ``losses`` on the uplinks; ``lr`` is one step for all, or one per method label."""
    out = {}
    for label, aggregator in METHODS.items():
        config = RunConfig(problem=problem, participation={"name": "bernoulli", "p": [1.0] * len(losses)},
                           algorithm={"name": "packet_loss", "aggregator": aggregator, "loss": losses,
                                      "local_steps": 5, "lr": lr[label] if isinstance(lr, dict) else lr},
                           channel={"name": "bernoulli_loss", "uplink": losses}, rounds=rounds, replicas=replicas,
                           seed=seed, every=max(1, rounds // 15), dtype=dtype, device=device)
        out[label] = ctx.run(config)
    return out


def draw(runs: dict, panels: tuple[tuple[str, str], ...], title: str, path):
    """One panel per ``(metric, label)``: per method (``{method: [traces]}``), the mean over all replicas of its
    traces with a one-sample-std band."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.6), constrained_layout=True)
    for ax, (metric, label) in zip(axes, panels):
        for name, traces in runs.items():
            values = np.concatenate([t.metrics[f"server.{metric}"] for t in traces])
            mean, std = values.mean(0), values.std(0, ddof=1) if len(values) > 1 else np.zeros(values.shape[1])
            line, = ax.plot(traces[0].rounds, mean, label=name)
            ax.fill_between(traces[0].rounds, mean - std, mean + std, color=line.get_color(), alpha=0.2, lw=0)
        ax.set(xlabel="communication round", ylabel=label)
    axes[0].legend(title=f"q = 0.1 / 0.9, mean ± std over {len(values)}", fontsize=8)
    fig.suptitle(title)
    return save(fig, path)


@register("figure", "thesis-fig4-1")
@one_thread
def render(ctx):
    """Thesis Fig. 4.1: loss and test accuracy of FedAvg (lossless), DMA-PL, UDMA-PL, UPGA-PL on Synthetic LEAF."""
    rounds, replicas = ctx.pick(60, 150), ctx.pick(4, 10)
    runs = {label: [trace] for label, trace in curves(ctx, LEAF, 10 ** -1.5, rounds, replicas, ctx.seed).items()}
    title = (f"{'QUICK, ' if ctx.quick else ''}Synthetic LEAF(1, 1), N = 10, q = 0.1 / 0.9, K = 5, eta = 10^-1.5, "
             f"T = {rounds}")
    return draw(runs, (("loss", "training loss F(w)"), ("test_acc", "test accuracy")), title,
                ctx.figure_path("thesis-fig4-1"))
