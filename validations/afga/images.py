r"""Seed 002's image-side orderings at small scale (seed 002 §6.1-6.2 Tables 1-4, Fig. 2, App. B Fig. 6; digest 002
§3, §5 CNN-side checks), through the image path (:mod:`theorylab.testbeds.network`).

* Tables 1-3 (CIFAR-10 and CIFAR-100 with ConvMixer-256-8, Shakespeare with an LSTM; Setting 1: N = 100 at 5%,
  Setting 2: N = 50 at 10%): in all six cells CAFGA > AFGA > FedAMSGrad (the baselines SCAFFOLD, FedProx, FedDyn,
  FedAvg, FedAdam are not compared here: the paper tunes each on a grid and reports no chosen values);
* Table 4 (CIFAR-10, ConvMixer-256-8, Setting 2): accuracy +Gossip (77.39) < FedAMSGrad (79.59) < AFGA (80.02) <
  CAFGA (82.10);
* Fig. 2: AFGA and CAFGA converge faster and reach higher accuracy on more balanced data: i.i.d. > Dirichlet 0.6 >
  Dirichlet 0.3;
* Fig. 6: CAFGA with more local iterations at a fixed number of rounds reaches higher accuracy
  (:math:`\mathcal I = 48 > 24 > 12`; quick mode 10 > 5 > 2).

Every ordering is a paired difference of final test accuracy over runs that share the partition, the reporting and
re-sampling draws, the minibatches and the initial model (common random numbers), decided by
:func:`theorylab.checks.paired_difference`.  The step sizes are the digest's reading of the ε-free regime
(:math:`\eta_l = 0.05`, FedAMSGrad :math:`\eta = 0.003`, :math:`\epsilon = 10^{-8}`, :math:`\beta = (0.9, 0.99)`), not
a per-method grid search as in the paper (App. B.2, chosen values unreported).  The methods' orderings (Tables 1-4)
are decided under two step-size choices (:data:`STEP_CHOICES`, :func:`theorylab.checks.across`): one :math:`\eta_l`
for all, and the gossip variants' :math:`\eta_l` scaled by :math:`N/M`, so that their average model moves as far per
step as FedAMSGrad's (digest §0.5: equal step sizes favour FedAMSGrad by :math:`N/M`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theorylab.figures.afga_images import FEWER, FULL, PAPER_PARTITION, QUICK, STEP_CHOICES, Setup, runs, \
    tables_1_3_settings, variants
from theorylab.testbeds.training import final_accuracy
from theorylab.checks import Check, across, paired_difference
from theorylab.claims import Evidence, claim
from theorylab.threads import one_thread
from theorylab.validations.afga.ablations import TABLE4_QUOTE


def orderings(ctx, s: Setup, pairs, printed) -> tuple[list[Check], list[str]]:
    """One check per ``(lower, higher)`` pair: higher > lower in final test accuracy, paired over runs, decided under
    every step-size choice of :data:`STEP_CHOICES`; ``printed(hi, lo)`` is the paper's numbers for the name."""
    methods = sorted({m for pair in pairs for m in pair})
    acc = {choice: {m: accuracy(ctx, s, PAPER_PARTITION, *variants(s, scaled)[m]) for m in methods}
           for choice, scaled in STEP_CHOICES.items()}
    checks = [across(f"{hi} > {lo} ({printed(hi, lo)})", {
        choice: paired_difference(f"{hi} > {lo}", acc[choice][hi], acc[choice][lo],
                                  note="final test accuracy, paired runs", unit=" (accuracy points)")
        for choice in STEP_CHOICES}, what="choice") for lo, hi in pairs]
    return checks, [f"{choice}: {_summary(values)}" for choice, values in acc.items()]


def accuracy(ctx, s: Setup, partition: dict, switches: dict, participation: dict) -> np.ndarray:
    """Final test accuracy (%) of the server model over every (seed, replica) run."""
    return np.concatenate([final_accuracy(t, "server", s.window) for t in runs(ctx, s, partition, switches,
                                                                               participation)])


def _summary(acc: dict) -> str:
    return "; ".join(f"{k} {v.mean():.2f} ± {v.std(ddof=1):.2f}" for k, v in acc.items())


TABLE4 = {"+Gossip": "77.39", "FedAMSGrad": "79.59", "AFGA": "80.02", "CAFGA": "82.10"}



@claim("afga.cnn_table4", "seed 002 §6.2 Table 4; digest 002 §1.5, §3.2, §5 (CNN-side checks)",
       "Table 4's ordering of final test accuracy: +Gossip < FedAMSGrad < AFGA < CAFGA.", kind="reproduction",
       expect="inconclusive", where="§6.2, Table 4", quote=TABLE4_QUOTE,
       because="on the quick stand-in (digits, logistic, 20 rounds, 32 paired runs) CAFGA > AFGA holds under both "
               "step-size choices (about +2 points); FedAMSGrad > +Gossip holds with one eta_l for all (+1.3) but is "
               "undecided with the gossip variants' eta_l scaled by N/M (+0.05); AFGA > FedAMSGrad is undecided under "
               "both (+0.5 and +1.6 points, intervals containing 0)",
       defence="The authors could say a 20-round logistic stand-in with untuned step sizes cannot show a 0.43-point "
               "gap. That is why the verdict is inconclusive and not 'not reproduced': the undecided pair, AFGA vs "
               "FedAMSGrad, is one the paper's own spread does not separate either (80.02 ± 2.00 vs 79.59 ± 0.76 over "
               "3 seeds), and each ordering is decided under both step-size choices", partial=("CNN-T4",))
@one_thread
def cnn_table4(ctx) -> Evidence:
    s = ctx.with_seeds(ctx.pick(QUICK, FULL))
    order = list(TABLE4)
    checks, summary = orderings(ctx, s, list(zip(order, order[1:])),
                                lambda hi, lo: f"Table 4: {TABLE4[hi]} > {TABLE4[lo]} %")
    return Evidence(checks, notes=[
        f"test accuracy % over {len(s.seeds) * s.replicas} runs (mean ± sample std, mean of the last {s.window} "
        f"evaluations every {s.every} of {s.rounds} rounds); " + "; ".join(summary),
        "+Gossip: gossip over all N clients on the ring without re-sampling (the paper leaves the scope open); CAFGA: "
        "a ring per cluster, clusters contiguous in client index (the paper's clustering rule is unstated)"],
        deviations=[s.deviation, "two step-size choices instead of the paper's per-method grid search"])


TABLES_1_3 = {"Setting 1": {"CAFGA": (79.18, 53.08, 53.20), "AFGA": (78.45, 52.08, 53.08),
                             "FedAMSGrad": (77.53, 50.58, 52.09)},
              "Setting 2": {"CAFGA": (82.10, 54.41, 53.57), "AFGA": (80.02, 53.87, 53.13),
                             "FedAMSGrad": (79.59, 52.15, 51.96)}}  # CIFAR-10, CIFAR-100, Shakespeare (digest §3.2)


@claim("afga.cnn_tables1_3", "seed 002 §6.1 Tables 1-3; digest 002 §3.1-3.2, §5 (CNN-side checks)",
       "In both participation settings (Setting 1: 5% of the clients, Setting 2: 10%), final test accuracy orders as "
       "CAFGA > AFGA > FedAMSGrad (every cell of Tables 1-3).", kind="reproduction", expect="inconclusive",
       where="§6.1 (Results on CIFAR-10 and CIFAR-100), Tables 1-3",
       quote="We observe that AFGA shows improvement upon other baselines, and the proposed CAFGA achieves better "
             "performance than AFGA.",
       because="on the quick stand-in CAFGA > AFGA holds in Setting 2 under both step-size choices and in Setting 1 "
               "with one eta_l for all (undecided when scaled); AFGA vs FedAMSGrad is undecided in both settings under "
               "both choices (Setting 1: -4.3 and -1.8 points, Setting 2: +0.5 and +1.6; every interval contains 0)",
       defence="The authors could say the stand-in (digits, logistic, 20 rounds) is far from ConvMixer on CIFAR and "
               "that they tuned every method. That is why the verdict is inconclusive and not 'not reproduced': each "
               "ordering is decided under two step-size choices, and the paper's own AFGA - FedAMSGrad gaps are "
               "within its spread in several cells (CIFAR-10 Setting 2: 80.02 ± 2.00 vs 79.59 ± 0.76)",
       partial=("CNN-T1-3",))
@one_thread
def cnn_tables1_3(ctx) -> Evidence:
    base = ctx.with_seeds(ctx.pick(QUICK, FULL))
    settings = tables_1_3_settings(base)
    checks, notes = [], []
    for name, s in settings.items():
        printed = TABLES_1_3[name]
        found, summary = orderings(ctx, s, [("FedAMSGrad", "AFGA"), ("AFGA", "CAFGA")], lambda hi, lo: (
            f"{name}, N = {s.clients}, M = {s.reporting}; Tables 1-3: "
            + ", ".join(f"{a:.2f} > {b:.2f}" for a, b in zip(printed[hi], printed[lo]))))
        checks += found
        notes.append(f"{name}, N = {s.clients}, M = {s.reporting}: " + "; ".join(summary))
    return Evidence(checks, notes=notes + [
        "the paper's Setting 1 / 2 are N = 100 at 5% / N = 50 at 10%; the stand-in keeps M and doubles N for Setting 1",
        "SCAFFOLD, FedProx, FedDyn, FedAvg and FedAdam rows are not compared here: the paper tunes every method on a "
        "grid and does not report the chosen values (digest §6 item 3); the figure afga-baselines tunes all seven "
        "methods by the paper's protocol (§6 and App. B.2 readings) on the Setting 2 stand-in"],
        deviations=[base.deviation, "two step-size choices instead of the paper's per-method grid search",
                    "one image dataset stands in for CIFAR-10, CIFAR-100 and Shakespeare"])


@claim("afga.cnn_fig2_heterogeneity", "seed 002 §6.2 Fig. 2; digest 002 §3.3, §5 (CNN-side checks)",
       "AFGA and CAFGA reach higher accuracy on more balanced data: i.i.d. > Dirichlet 0.6 > Dirichlet 0.3.",
       kind="reproduction", where="§6.2 (Ablation on data heterogeneity), Fig. 2",
       quote="as a more balanced data distribution attains faster convergence and higher accuracy", partial=("CNN-F2",))
@one_thread
def cnn_fig2_heterogeneity(ctx) -> Evidence:
    s = ctx.with_seeds(ctx.pick(FEWER, FULL))
    partitions = {"Dirichlet 0.3": {"partition": "dirichlet_per_class", "alpha": 0.3},
                  "Dirichlet 0.6": {"partition": "dirichlet_per_class", "alpha": 0.6}, "i.i.d.": {"partition": "iid"}}
    rows = variants(s)
    checks, notes = [], []
    for method in ctx.pick(("AFGA",), ("AFGA", "CAFGA")):
        acc = {label: accuracy(ctx, s, part, *rows[method]) for label, part in partitions.items()}
        labels = list(partitions)
        checks += [paired_difference(f"{method}: {hi} > {lo}", acc[hi], acc[lo], note="final test accuracy",
                                     unit=" (accuracy points)") for lo, hi in zip(labels, labels[1:])]
        notes.append(f"{method}: {_summary(acc)}")
    return Evidence(checks, notes=notes + [
        "the three partitions are different draws, so the pairing is over the streams of a run, not over the data; "
        "the paper shows learning curves, we compare final accuracies; quick mode checks AFGA only (CAFGA in full "
        "mode)"],
        deviations=[s.deviation, "one set of step sizes for all methods (the paper tunes each on a grid)"])


@claim("afga.cnn_fig6_local_steps", "seed 002 App. B Fig. 6; digest 002 §3.3, §5 (CNN-side checks)",
       "CAFGA reaches higher accuracy with more local iterations at a fixed number of rounds: I = 48 > 24 > 12.",
       kind="reproduction", where="App. B (Ablation of local iteration), Fig. 6",
       quote=r"We observe that larger  $\mathcal{I}$  indeed helps accelerate convergence on training loss and helps "
             r"to obtain a higher test accuracy.", partial=("CNN-F6",))
@one_thread
def cnn_fig6_local_steps(ctx) -> Evidence:
    s = ctx.with_seeds(ctx.pick(FEWER, FULL))
    grid = ctx.pick((2, 5, 10), (12, 24, 48))
    acc = {}
    for steps in grid:
        run = dataclasses.replace(s, local_steps=steps)
        acc[f"I = {steps}"] = accuracy(ctx, run, PAPER_PARTITION, *variants(run)["CAFGA"])
    labels = list(acc)
    checks = [paired_difference(f"CAFGA: {hi} > {lo}", acc[hi], acc[lo], note="final test accuracy",
                                unit=" (accuracy points)") for lo, hi in zip(labels, labels[1:])]
    return Evidence(checks, notes=[f"CAFGA, Dirichlet 0.6: {_summary(acc)}",
                                   "the paper shows training-loss and accuracy curves; we compare final accuracies"],
                    deviations=[s.deviation, f"I in {grid} (the paper: 12, 24, 48 on CIFAR-10)"])
