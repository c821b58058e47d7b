r"""Thesis ch. 5 §5.4.2 (seed 001, Table 5.1 and its text) on the image path at small scale, and the analysis'
assumption :math:`\hat{\mathcal D}_e=\mathcal D` under confidence routing (digest 001_thesis_ch4-6 §3.3, §3.6,
§6 C10, C11).

Labelled substitution for ResNet-18 on CIFAR10/100: the early-exit MLP of :mod:`theorylab.testbeds.early_exit_net` (three
blocks of width 32, one linear exit head each) on scikit-learn's digits in quick mode and Fashion-MNIST in full
mode, 7 nodes (4/2/1) with the equal data partition, p = 0, the thesis' optimiser (momentum 0.9, weight decay
5e-4, cosine steps from 0.1; batch 32 instead of 128), :math:`K=5`, :math:`T=15` (quick) or 100 (full, as the thesis).
Accuracy is the CIS accuracy of :func:`theorylab.cis.routing.cis_accuracy`; the thesis does not name its confidence
measure, so every check is decided under both readings of :data:`theorylab.cis.routing.CONFIDENCE` (maximum softmax
probability, negative entropy) with :func:`theorylab.checks.across`.  Every strategy of a seed shares partition,
initial model, minibatches and draws (common random numbers), so orderings are paired differences over seeds.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from theorylab.testbeds.data import load
from theorylab.testbeds.early_exit import layer_sizes
from theorylab.testbeds.early_exit_net import exit_predictions, flat_standardised, layout, train_fedcis
from theorylab.checks import across, in_interval, paired_difference, printed
from theorylab.cis.aggregation import aggregation_weights
from theorylab.cis.rates import SEVEN_NODE, split_topology_rates
from theorylab.cis.routing import CONFIDENCE, cis_accuracy, route
from theorylab.cis.sampling import preset
from theorylab.cis.strategies import equal_weight, flops_prop, serving_rate
from theorylab.claims import Evidence, claim
from theorylab.rng import Streams
from theorylab.threads import one_thread

SOURCE = "seed 001 Ch. 5 §5.4.2 Table 5.1 and text; digest 001 ch4-6 §3.6, §6 C10"
HIDDEN, LOCAL_STEPS, BATCH = 32, 5, 32
DEVIATIONS = ["early-exit MLP (3 x 32 units) on digits (quick) / Fashion-MNIST (full) instead of ResNet-18 on CIFAR",
              "batch 32 and T = 15 rounds in quick mode (thesis: batch 128, T = 100); seeds 0..S-1, not 9/42/67",
              "FLOPS Prop weighs exits by the MLP's multiply-adds up to each exit (the thesis' FLOPs are unspecified)"]


@lru_cache(maxsize=2)
def image_runs(seed: int, quick: bool, extra_seeds: int = 0) -> dict:
    """Per strategy: per-seed exit predictions on the test set and final models, and the settings they came from
    (10 seeds, and ``extra_seeds`` more under ``validate --until-decided``)."""
    train, test = load("digits" if quick else "fmnist")
    (x, y), (xt, yt) = flat_standardised(train), flat_standardised(test)
    exits, seeds, rounds = SEVEN_NODE[1], 10 + extra_seeds, (15 if quick else 100)
    sizes, p = layer_sizes(exits, (1 / 3, 1 / 3, 1 / 3), len(y) - 10), preset(exits, 0.0)
    shapes = layout(x.shape[1], HIDDEN, train.classes, 3)
    macs = np.cumsum([x.shape[1] * HIDDEN] + [HIDDEN * HIDDEN] * 2) + HIDDEN * train.classes
    splits = ((80, 15, 5),) if quick else ((80, 15, 5), (60, 30, 10))
    weights = {"Equal Weight": equal_weight(3), "FLOPS Prop": flops_prop(macs)}
    weights |= {f"Serving Rate {s}": serving_rate(split_topology_rates(s).exit_rates) for s in splits}
    lr = lambda t: 0.05 * (1 + np.cos(np.pi * (t - 1) / rounds))  # noqa: E731  cosine from 0.1
    out = {"splits": splits, "labels": yt.numpy(), "seeds": seeds, "rounds": rounds, "predictions": {}, "models": {},
           "train": (x, y), "shapes": shapes}
    for name, w in weights.items():
        theta = train_fedcis(x, y, sizes, p, aggregation_weights(p, sizes, w), rounds, LOCAL_STEPS, BATCH, lr,
                             Streams(seed, seeds), shapes)
        out["predictions"][name], out["models"][name] = exit_predictions(theta, xt, shapes), theta
    return out


def accuracies(runs: dict, name: str, split, measure: str) -> np.ndarray:
    """Per-seed CIS accuracy of strategy ``name`` under ``split``, routed by the confidence ``measure``."""
    logits, predicted = runs["predictions"][name]
    correct = predicted == runs["labels"][None, None]
    confidence = CONFIDENCE[measure](logits)
    return np.array([cis_accuracy(correct[r], confidence[r], split) for r in range(len(correct))])


def by_measure(name: str, check) -> object:
    """``check(measure)`` decided under every reading of the confidence measure."""
    return across(name, {measure: check(measure) for measure in CONFIDENCE})


@claim("thesis.ch5.table_orderings", SOURCE,
       "For device-heavy splits (80-15-5, 60-30-10), Serving Rate >= Equal Weight >> FLOPS Prop in CIS accuracy "
       "(Table 5.1; the text: +4.3 and +22.1 p.p. on CIFAR10 at 80-15-5).", kind="reproduction",
       where="§5.4.3, Table 5.1 and its text",
       quote="Specifically, in the 80-15-5 setting, \"Serving Rate\" outperforms \"Equal Weight\" by 4.3 percentage "
             "points (p.p.) and \"FLOPS Prop\" by 22.1 p.p.",
       expect="inconclusive",
       because="quick mode (digits, 10 seeds, T = 15) finds Serving Rate about 2 p.p. BELOW Equal Weight at 80-15-5 "
               "under both confidence measures, but the interval still contains 0; Equal Weight >> FLOPS Prop holds",
       defence="The thesis would say a 3 x 32 MLP trained 15 rounds on 8x8 digits is not ResNet-18 on CIFAR after 100 "
               "rounds, and that its tables report three seeds of the real thing. Agreed: the verdict is only "
               "inconclusive, the printed text-vs-table differences all reproduce, and the stand-in decides only "
               "Equal Weight >> FLOPS Prop; the Serving Rate vs Equal Weight gap is undecided under both confidence "
               "measures", partial=("C10",))
@one_thread
def table_orderings(ctx) -> Evidence:
    runs = image_runs(ctx.seed, ctx.quick, ctx.extra_seeds)
    checks, notes = [], []
    for split in runs["splits"]:
        label, serving = "-".join(map(str, split)), f"Serving Rate {split}"
        acc = {m: {name: accuracies(runs, name, split, m) for name in ("Equal Weight", "FLOPS Prop", serving)}
               for m in CONFIDENCE}
        checks += [by_measure(f"{label}: acc(Serving Rate) - acc(Equal Weight)",
                              lambda m: paired_difference(m, acc[m][serving], acc[m]["Equal Weight"],
                                                          unit=" (accuracy)")),
                   by_measure(f"{label}: acc(Equal Weight) - acc(FLOPS Prop)",
                              lambda m: paired_difference(m, acc[m]["Equal Weight"], acc[m]["FLOPS Prop"],
                                                          unit=" (accuracy)"))]
        notes += [f"{label}, {m}: mean CIS accuracy " + ", ".join(f"{k}: {v.mean():.4f}" for k, v in a.items())
                  for m, a in acc.items()]
    checks += [printed("Table 5.1 CIFAR10 80-15-5: Serving Rate - Equal Weight (p.p.)", 54.2 - 49.9, "4.3",
                       note="the text's gain vs its own table"),
               printed("Table 5.1 CIFAR10 80-15-5: Serving Rate - FLOPS Prop (p.p.)", 54.2 - 32.1, "22.1"),
               printed("Table 5.1 CIFAR10 5-15-80: Balanced Adj - Equal Weight (p.p.)", 87.6 - 85.1, "2.5"),
               printed("Table 5.1 CIFAR10 5-15-80: Balanced Adj - FLOPS Prop (p.p.)", 87.6 - 86.3, "1.3"),
               printed("Table 5.1 CIFAR100 80-15-5: Serving Rate - FLOPS Prop (p.p.)", 45.0 - 30.4, "14.6"),
               printed("Table 5.1 CIFAR100 80-15-5: Balanced Adj - FLOPS Prop (p.p.)", 46.6 - 30.4, "16.2")]
    exit_acc = {name: (pred == runs["labels"][None, None]).mean((0, 2)) for name, (_, pred) in
                runs["predictions"].items()}
    notes.append("per-exit accuracy on the whole test set: " + "; ".join(
        f"{k}: {np.round(v, 3).tolist()}" for k, v in exit_acc.items()))
    return Evidence(checks, notes=notes + [f"{runs['seeds']} seeds, T = {runs['rounds']}"], deviations=DEVIATIONS)


@claim("thesis.ch5.routing", "seed 001 Ch. 5 §5.3.3 (D^_e = D), §5.4.2 (routing); digest 001 ch4-6 §3.3, §6 C11",
       "The analysis of §5.3.3 assumes that every exit serves the population (D^_e = D); the experiments that the "
       "thesis says validate it route requests by confidence. Within that routing, is exit 1 as accurate on the "
       "samples it serves as on all samples, as D^_1 = D implies?", kind="scope",
       where="§5.3.3 (first sentence); §5.4 (introduction); §5.4.2 'Serving Rates'",
       quote=r"Our analytical results assume that the serving distribution of every exit e is the same, i.e., "
             r"$\hat{D}_e = \mathcal{D}, \forall e$. … we present experimental results that validate our "
             r"theoretical analysis in Section 5.3.3 … each node i assesses the confidence score of the incoming "
             r"requests, serving the simplest ones",
       expect="violated", severity="scope",
       because="under confidence routing exit 1 serves the samples it is surest of: at 80-15-5 its accuracy on them "
               "exceeds its accuracy on the whole test set by about 6 points (10 seeds, Serving Rate weights), "
               "under both readings of the confidence measure, so D^_1 != D in the experiments the analysis is "
               "said to validate",
       defence="The thesis states the assumption D^_e = D openly, as the simplification of P2 (5.5) under which it "
               "analyses Fed-CIS, and never claims that confidence routing satisfies it. The verdict stands as a "
               "scope finding, not an error of the theorem: §5.4 presents the confidence-routed experiments as "
               "validating the analysis and explains Table 5.1 through its bias term, yet under that routing the "
               "loss each exit serves is not F_{D,Lambda}'s, so Theorem 5.3.1 does not bound what those experiments "
               "measure", checks=("C11",))
@one_thread
def routing(ctx) -> Evidence:
    runs = image_runs(ctx.seed, ctx.quick, ctx.extra_seeds)
    split, name = runs["splits"][0], f"Serving Rate {runs['splits'][0]}"
    logits, predicted = runs["predictions"][name]
    correct = predicted == runs["labels"][None, None]

    def served_gap(measure: str) -> np.ndarray:
        """Per seed: exit 1's accuracy on the samples it serves minus its accuracy on all samples."""
        confidence = CONFIDENCE[measure](logits)
        return np.array([correct[r, 0, route(confidence[r], split) == 0].mean() - correct[r, 0].mean()
                         for r in range(len(correct))])

    gaps = {m: served_gap(m) for m in CONFIDENCE}
    check = across("exit 1: accuracy on its served samples - on all samples (80-15-5)",
                   {m: in_interval(m, g, 0.0, note="per seed, Serving Rate weights; D^_1 = D predicts 0")
                    for m, g in gaps.items()})
    return Evidence([check], notes=[f"{m}: mean gap {g.mean():+.4f}, CIS accuracy "
                                    f"{accuracies(runs, name, split, m).mean():.4f}" for m, g in gaps.items()],
                    deviations=DEVIATIONS)
