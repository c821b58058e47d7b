r"""Seed 004 Fig. 6 analogue (digest 004 §4 item 6, §5.1 item 6): ablations of MasFL and AdaMasFL on the
heterogeneous quadratic under the FedBuff delay mechanism (Mode B, R2, :math:`\mathcal U(0,20)` per job).

The caption ("Test accuracy versus communication round for ablation studies on non-i.i.d. CIFAR-10/FMNIST dataset")
does not say what is ablated; the digest's candidates are run, each a switch of :mod:`theorylab.kernels.masfl`:
:math:`\beta = 1` (no momentum), ``control_variates=False`` (no :math:`c`-correction) and, for AdaMasFL,
``normalise=False`` (unnormalised local steps with the :math:`\Delta` server).  Step sizes are those of
:mod:`theorylab.figures.masfl_curves`; the non-i.i.d. data are the quadratic's heterogeneous centres and Hessians.  The
optimality gap (mean over replicas) stands for test accuracy.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.masfl_curves import ALGORITHMS, async_quadratic
from theorylab.config import RunConfig
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

ABLATIONS = {"full": {}, "β = 1": {"beta": 1.0}, "no control variates": {"control_variates": False}}
VARIANTS = {"MasFL": ABLATIONS, "AdaMasFL": {**ABLATIONS, "no normalisation": {"normalise": False}}}
SETTING = dict(n=20, S=5, concurrency=10, sigma=0.5, K=5)


def specs() -> dict[str, dict[str, dict]]:
    """Per method, per ablation, the algorithm spec (the base steps of :data:`theorylab.figures.masfl_curves.ALGORITHMS`)."""
    return {method: {label: {**ALGORITHMS[method], "local_steps": SETTING["K"], **switch}
                     for label, switch in switches.items()} for method, switches in VARIANTS.items()}


def compute(ctx) -> dict:
    rounds = ctx.pick(200, 600)
    fields = async_quadratic(SETTING["n"], SETTING["S"], SETTING["concurrency"], sigma=SETTING["sigma"])
    out = {}
    for method, variants in specs().items():
        for label, spec in variants.items():
            trace = ctx.run(RunConfig(algorithm=spec, rounds=rounds, replicas=ctx.pick(4, 16), seed=ctx.seed,
                                      every=rounds // 25, **fields))
            gap = np.nan_to_num(trace.metrics["server.gap"], nan=np.inf)
            out.setdefault(method, {})[label] = {"round": trace.rounds, "gap": gap.mean(0)}
    return out


def draw(data: dict, path):
    plt = pyplot()
    fig, axes = plt.subplots(1, len(data), figsize=(5 * len(data), 4), constrained_layout=True, sharey=True)
    for ax, (method, curves) in zip(np.atleast_1d(axes), data.items()):
        for label, d in curves.items():
            ax.semilogy(d["round"], np.clip(d["gap"], 1e-32, 1e32), label=label)
        ax.set(title=method, xlabel="server step t")
        ax.legend()
    np.atleast_1d(axes)[0].set(ylabel="f(θ) − f*  (mean over replicas)")
    s = SETTING
    fig.suptitle(f"Ablations, Mode B (N = {s['n']}, S = {s['S']}, M_c = {s['concurrency']}, R2), heterogeneous "
                 f"quadratic, σ = {s['sigma']}, K = {s['K']}")
    return save(fig, path)


@register("figure", "masfl-fig6")
@one_thread
def render(ctx):
    """MasFL Fig. 6 analogue: optimality gap vs server step with beta = 1, control variates off, normalisation off."""
    return draw(compute(ctx), ctx.figure_path("masfl-fig6"))
