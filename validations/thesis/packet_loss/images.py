r"""Thesis ch. 4 image experiment at small scale (seed 001 §4.4 Fig. 4.2; digest 001 §2.7, §6 U10, §7 items 1-2).

The thesis reports, on label-skewed MNIST with :math:`q = 0.1 / 0.9`: UPGA-PL beats the best baseline by about 6
points of test accuracy and nearly matches lossless FedAvg after about 150 rounds; DMA-PL's training loss plateaus
near 0.3; UDMA-PL oscillates around 50-70%.  The runs are Fig. 4.2's (:mod:`theorylab.figures.thesis_fig4_2`); the
orderings are tested as paired per-run differences of final test accuracy (every method of a run shares the
channel draws, minibatches and initial model), with :func:`theorylab.checks.paired_difference`.

Which clients form the lossy group is a free choice the thesis leaves open (its two groups are unnamed, digest §2.7):
each ordering is decided under both choices of :mod:`theorylab.figures.thesis_fig4_2` (:data:`~theorylab.figures.thesis_fig4_2.LOSSY`,
which hides four labels behind lossy links, and :data:`~theorylab.figures.thesis_fig4_2.SPREAD`, which leaves every label a
reliable copy), with :func:`theorylab.checks.across`.  The printed gains come from figures whose :math:`T`,
:math:`K`, batch and step are unstated, so they are reported beside ours, not tested.  Fig. 4.1's Synthetic-LEAF
counterpart is rendered by ``theorylab figure thesis-fig4-1``.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.thesis_fig4_2 import LOSSY, RULE, SPREAD, compute, final
from theorylab.checks import across, paired_difference
from theorylab.claims import Evidence, claim
from theorylab.threads import one_thread
from theorylab.validations.thesis.packet_loss.setting import SOURCE

CHOICES = {f"clients {', '.join(map(str, c))} lossy": c for c in (LOSSY, SPREAD)}


def _spread(values: np.ndarray, digits: int) -> str:
    """Mean ± sample std of the finite runs, and how many diverged (the runner marks them inf)."""
    ok = values[np.isfinite(values)]
    std = ok.std(ddof=1) if len(ok) > 1 else 0.0
    text = f"{ok.mean():.{digits}f} ± {std:.{digits}f}" if len(ok) else "all runs diverged"
    return text + (f" ({len(values) - len(ok)} of {len(values)} runs diverged)" if len(ok) < len(values) else "")


def summary(runs: dict) -> str:
    """Final accuracy, training loss and UDMA-PL's swing of one choice's runs, for the notes (diverged runs
    counted, not averaged)."""
    acc = {k: 100.0 * v for k, v in final(runs).items()}
    loss = final(runs, "train_loss")
    swing = np.concatenate([t.metrics["server.test_acc"][:, 1:] for t in runs["UDMA-PL"]]) * 100.0
    swing = swing[np.isfinite(swing)]
    gap = acc["UPGA-PL"] - acc["FedAvg (lossless)"]
    return ("test accuracy % (mean ± sample std): " + "; ".join(f"{k} {_spread(v, 1)}" for k, v in acc.items())
            + "; final training loss: " + "; ".join(f"{k} {_spread(v, 3)}" for k, v in loss.items())
            + (f"; UDMA-PL accuracy over the evaluated rounds {swing.min():.0f}-{swing.max():.0f}%" if len(swing)
               else "")
            + f"; UPGA-PL minus lossless FedAvg {_spread(gap, 2)} points")


@claim("thesis.ch4.images", SOURCE + " U10; Fig. 4.2",
       "On label-skewed MNIST with losses q = 0.1 / 0.9, UPGA-PL is more accurate than DMA-PL and UDMA-PL (about +6 "
       "points over the best), nearly matching lossless FedAvg; UDMA-PL oscillates around 50-70%.",
       kind="reproduction", expect="inconclusive", where="§4.4.2 and Fig. 4.2b",
       quote="UPGA-PL improves the state-of-the-art … by 6 percentage points on the MNIST dataset (Fig. 4.2b)",
       because="quick mode has 4 paired runs of one seed on the digits stand-in after 30 rounds, per choice of the "
               "lossy group. With clients 0, 1, 2, 5, 6 lossy (four labels only behind lossy links) UPGA-PL leads "
               "DMA-PL in all four runs by 16-23 points; with clients 5-9 lossy (every label keeps a reliable copy) "
               "DMA-PL leads UPGA-PL in all four by 4-9 points. With 3 degrees of freedom at the split family level "
               "no interval excludes 0, so every ordering is undecided, and its sign depends on the choice",
       defence="The thesis would say its experiment has a definite group assignment, 10 seeds and a CNN, none of "
               "which our 4 runs on digits reproduce (the steps are tuned on its grid, by a rule of ours), so an "
               "undecided quick run says nothing about "
               "Fig. 4.2. That is why the verdict is only inconclusive; but the sign of UPGA-PL - DMA-PL follows "
               "the group assignment the thesis does not state, so the 6-point gain cannot be attributed to the "
               "aggregator alone until the lossy clients are named.", partial=("U10",))
@one_thread
def images(ctx) -> Evidence:
    runs = {label: compute(ctx, lossy) for label, lossy in CHOICES.items()}
    acc = {label: {k: 100.0 * v for k, v in final(r).items()} for label, (r, _) in runs.items()}
    checks = [across(f"UPGA-PL > {other} (final test accuracy, mean of the last 3 evaluations)",
                     {label: paired_difference(f"UPGA-PL > {other}, {label}", a["UPGA-PL"], a[other],
                                               "Fig. 4.2b: UPGA-PL +6 points over the best baseline",
                                               unit=" (accuracy points)") for label, a in acc.items()},
                     what="choice") for other in ("DMA-PL", "UDMA-PL")]
    s = next(iter(runs.values()))[1]
    steps = [f"{label}: tuned steps " + ", ".join(f"{m} {step:.3g}" for m, step in setup["steps"].items())
             for label, (_, setup) in runs.items()]
    return Evidence(checks, notes=[f"{label}: {summary(r)}" for label, (r, _) in runs.items()] + steps + [
        "thesis: DMA-PL's training loss plateaus near 0.3 while UPGA-PL and FedAvg reach about 0; UDMA-PL oscillates "
        "around 50-70%; UPGA-PL nearly equals lossless FedAvg after about 150 rounds"],
        deviations=[s["label"] + f", T = {s['rounds']}, {len(s['seeds'])} seed(s) x {s['replicas']} replica(s)",
                    "each method's step from the thesis' grid {1e-3, 10^-2.5, ..., 1e-1} by our rule (the thesis' is "
                    f"unstated): {RULE}; K = 5, batch 32 (unstated in the thesis)",
                    "5/5 groups; the classes partition gives clients i and i+5 the same two labels"],
        errata=["the contributions list says gains of 5-10 points; the results text 12 (Synthetic) and 6 (MNIST) "
                "(digest §7 item 2)"])
