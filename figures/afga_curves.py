r"""Seed 002 Figs. 3-5 stand-in: the test-accuracy curves behind Tables 1-3 (seed 002 §6.1 and App. B; digest 002
§3.3: "test-accuracy curves of all methods on CIFAR-10, CIFAR-100 and Shakespeare, Settings 1 and 2").

The runs are exactly those of the claim ``afga.cnn_tables1_3``, built from the same definitions
(:mod:`theorylab.figures.afga_images`), so a store that holds the claim's runs re-draws the figure without computing,
and quick and full mode draw the claim's quick and full runs.  One panel per (setting, step-size choice) — the
setting's stand-in keeps :math:`M` and doubles :math:`N` for Setting 1, the paper's smaller share — with the
per-round test accuracy, mean :math:`\pm` one sample standard deviation (``ddof=1``,
:func:`theorylab.figures.learning_curves.mean_and_std`) over every (seed, replica) run.  The caption lists every
deviation from the paper, the stand-in's dataset, model and rounds read from the runs themselves.
"""

from __future__ import annotations

import textwrap

from theorylab.figures.afga_images import FULL, PAPER_PARTITION, QUICK, STEP_CHOICES, runs, tables_1_3_settings, \
    variants
from theorylab.figures.learning_curves import mean_and_std, seeds_by_round
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.threads import one_thread

METHODS = ("FedAMSGrad", "AFGA", "CAFGA")
PAPER = ("the paper: CIFAR-10 (Fig. 3) and CIFAR-100 (Fig. 4) with ConvMixer-256-8, Shakespeare (Fig. 5) with a "
         "2-layer LSTM; Setting 1 N = 100 at 5%, Setting 2 N = 50 at 10%; I = 24 (CIFAR) / 100 (Shakespeare), "
         "batch 50, R = 500 (600 for CIFAR-100), 3 seeds, every method tuned on a grid")
DEVIATIONS = ("one image dataset stands in for CIFAR-10, CIFAR-100 and Shakespeare (Figs. 3, 4 and 5 alike)",
              "CAFGA, AFGA and FedAMSGrad only: FedAvg, FedAdam, SCAFFOLD, FedProx and FedDyn are not drawn (the "
              "paper tunes each on a grid and reports no chosen values)",
              "two step-size choices (rows) instead of the paper's per-method grid search")


def curves(ctx) -> dict:
    """``{(setting, step-size choice): {method: [Trace per seed]}}``: the runs of ``afga.cnn_tables1_3`` in ``ctx``'s
    mode, built from the same definitions (:mod:`theorylab.figures.afga_images`), so a store that holds the claim's
    runs re-draws the figure without computing."""
    out = {}
    for setting, s in tables_1_3_settings(ctx.with_seeds(ctx.pick(QUICK, FULL))).items():
        for choice, scaled in STEP_CHOICES.items():
            rows = variants(s, scaled)
            out[setting, choice] = {m: runs(ctx, s, PAPER_PARTITION, *rows[m]) for m in METHODS}
    return out


def caption(traces: list) -> str:
    """The stand-in as its runs say it, then the paper's setting and the other deviations."""
    c = traces[0].config
    p, a = c["problem"], c["algorithm"]
    split = p.get("partition", "?") + (f" {p['alpha']}" if "alpha" in p else "")
    runs = f"{len({t.config['seed'] for t in traces})} seed(s) x {c['replicas']} replicas per curve"
    found = (f"STAND-IN: {p['name']} with the {p.get('model', '?')} model, {split} partition, I = {a['local_steps']}, "
             f"batch {p.get('batch_size', '?')}, R = {c['rounds']} rounds, {runs}; {PAPER}")
    return "\n".join(textwrap.fill(f"- {line}", 150) for line in (found, *DEVIATIONS))


def draw(grouped: dict, path):
    """One panel per (setting, step-size choice) of ``grouped`` (:func:`curves`): settings in columns, choices in
    rows."""
    plt = pyplot()
    settings, choices = list(dict.fromkeys(k[0] for k in grouped)), list(dict.fromkeys(k[1] for k in grouped))
    fig, axes = plt.subplots(len(choices), len(settings), figsize=(5.2 * len(settings), 7.2), squeeze=False,
                             sharey=True, constrained_layout=True)
    for (setting, choice), methods in grouped.items():
        row, col = choices.index(choice), settings.index(setting)
        ax = axes[row, col]
        for name, traces in methods.items():
            rounds, values = seeds_by_round(traces, "server.test_acc")
            mean, std = (100.0 * v for v in mean_and_std(values))
            line, = ax.plot(rounds, mean, lw=1.2, label=f"{name} (n={len(values)})")
            ax.fill_between(rounds, mean - std, mean + std, color=line.get_color(), alpha=0.2, lw=0)
        config = methods["AFGA"][0].config
        n, m = config["problem"]["clients"], config["participation"]["k"]
        ax.set(xlabel="round", ylabel="test accuracy (%)" if col == 0 else None,
               title=f"{setting} stand-in: N = {n}, M = {m} ({100 * m / n:g}%)\n{choice.split(' (')[0]}")
        ax.legend(fontsize=7, title="mean ± sample std (ddof=1)", title_fontsize=7)
    fig.suptitle("AFGA Figs. 3-5 stand-in: test accuracy of the runs behind Tables 1-3")
    traces = [t for methods in grouped.values() for runs_ in methods.values() for t in runs_]
    fig.text(0.0, -0.01, caption(traces), ha="left", va="top", fontsize=6.5)
    return save(fig, path)


@register("figure", "afga-figs3-5")
@one_thread
def render(ctx):
    """AFGA Figs. 3-5 stand-in: test-accuracy curves of CAFGA, AFGA, FedAMSGrad from the Tables 1-3 claim's runs."""
    return draw(curves(ctx), ctx.figure_path("afga-figs3-5"))
