r"""Table 5: the communication-adapted "(a)" variants of AFGA and CAFGA against the originals (seed 002 §5
"Communication-adapted: reduce the communication frequency" and footnote 4, §6.3 Table 5; digest 002 §1.6, §3.2
Table 5, §5 CNN-side checks).

**The variants.**  (a) gossips "only on selected clients in each round": in round :math:`r` the reporting clients
:math:`\mathcal S_r` of each cluster form a new ring (footnote 4; self-weight 1/3 as the originals' rings), the others
stay offline (``gossip_scope="reporting"`` of :func:`theorylab.kernels.afga.afga`).  Who computes at local step
:math:`t` is undefined (digest §1.6 [UNCLEAR]); both readings run (:data:`READINGS`):

* ``resample_pool="reporting"``: :math:`\mathcal S_{r,t}\subseteq\mathcal S_r` with :math:`|\mathcal S_{r,t}| = m`,
  hence :math:`\mathcal S_{r,t} = \mathcal S_r` (re-sampling disappears);
* ``resample_pool="all"``: :math:`\mathcal S_{r,t}` drawn from the whole cluster, as in the original; the drawn
  clients outside :math:`\mathcal S_r` compute but neither mix nor report.

**The statement** (§6.3): "both communication-adapted methods achieve similar test accuracy compared with their
original version".  The paper gives no tolerance; the largest gap its Table 5 calls similar is AFGA's Setting 1,
:math:`78.80 - 76.59 = 2.21` points (:data:`SIMILAR`).  So per method and setting, with :math:`D` the per-run paired
difference of final test accuracy (original minus (a); common random numbers: partition, reporting sets, minibatches,
initial model), the claim tests :math:`-2.21\le\mathbb E[D]\le 2.21` as two one-sided checks on the Student-t
interval of the mean (:func:`theorylab.checks.at_most`, :func:`~theorylab.checks.at_least`).

**Free choices** (decided together with the readings by :func:`theorylab.checks.across`: "not reproduced" only when
every reading and choice violates, "holds" only when all hold):

* (a)'s local step size, unreported (the paper tunes every method on a grid, App. B.2): the original's
  :math:`\eta_l`, or :math:`\eta_l M/N` under the "reporting" reading, where all :math:`M` reporting clients compute
  at every step, so their average moves :math:`\eta_l` per step against the original's all-client average
  :math:`\eta_l M/N` (digest §1.3 (a)); under "all" the reporting average already moves :math:`\eta_l M/N` per step in
  expectation, so only :math:`\eta_l` runs (:func:`step_scales`);
* the horizon: the stand-in's :math:`R` is not the paper's 500 CIFAR-10 rounds, so the final accuracy (mean of the
  last ``window`` evaluations, as the paper's last-5-round average) is taken at :math:`R/2` and at :math:`R`.

Quick mode: LEAF Synthetic(1, 1) with the ridge multinomial-logistic model
(:mod:`theorylab.testbeds.synthetic_leaf`), one setting per method at 20% participation.  Not the closed-form
testbed: with one Hessian :math:`A` the mean over :math:`\mathcal S_r` of :math:`A(x_i-b_i)` + noise depends on the
clients' models through their mean only, which mixing among :math:`\mathcal S_r` keeps, so there (a) under the
"reporting" reading *is* FedAMSGrad for every :math:`\mathcal I` (tests/test_afga_table5.py); only curvature that
differs between clients, or a non-linear model, lets its gossip act.  Full mode: Table 5's own
four settings (AFGA: Settings 1-2, :math:`M = 5`; CAFGA: Settings 3-4, :math:`M = 10`, :math:`K = 5`, :math:`m = 2`)
on the Fashion-MNIST stand-in of :mod:`theorylab.figures.afga_images`.  Step sizes are that module's
(:data:`~theorylab.figures.afga_images.STEP_SIZES`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theorylab.checks import across, at_least, at_most
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.threads import one_thread
from theorylab.figures import afga_images as images

TABLE5 = {"AFGA": {"Setting 1": (78.80, 76.59), "Setting 2": (82.61, 81.51)},
          "CAFGA": {"Setting 3": (81.56, 81.15), "Setting 4": (83.15, 82.99)}}  # (original, (a)), digest §3.2
SIMILAR = round(max(o - a for cells in TABLE5.values() for o, a in cells.values()), 2)  # 2.21, AFGA Setting 1
READINGS = {"S_r,t = S_r (re-sampling disappears)": "reporting",
            "S_r,t drawn from the whole cluster (outsiders compute, do not mix)": "all"}
QUOTE = ("We can observe that both communication-adapted methods achieve similar test accuracy compared with their "
         "original version.")


@dataclasses.dataclass(frozen=True)
class Setup:
    problem: dict  # testbed spec without its client count and seed
    size: str  # the spec's key for the number of clients
    settings: dict  # method -> {Table 5 setting: (N, M, K)}
    local_steps: int
    rounds: int
    every: int
    window: int
    seeds: tuple[int, ...]
    replicas: int
    device: str
    dtype: str
    deviation: str


QUICK = Setup({"name": "synthetic_leaf", "gamma": 1.0, "delta": 1.0}, "n_clients",
              {"AFGA": {"Setting 2": (20, 4, 1)}, "CAFGA": {"Setting 4": (20, 4, 2)}}, local_steps=4, rounds=60,
              every=5, window=2, seeds=(0,), replicas=16, device="cpu", dtype="float64",
              deviation="QUICK-MODE STAND-IN: LEAF Synthetic(1, 1) with the ridge multinomial-logistic model "
                        "(60 -> 10) for CIFAR-10 with ConvMixer-256-8; N = 20 clients at 20% (M = 4; CAFGA: K = 2 "
                        "clusters of 10, m = 2) for Setting 2 (AFGA, N = 50 at 10%) and Setting 4 (CAFGA, N = 50 "
                        "at 20%, K = 5, m = 2); I = 4, batch 32, R = 60 of 500 rounds, 16 replicas of one data draw")
FULL = Setup({**images.FULL.problem, **images.PAPER_PARTITION}, "clients",
             {"AFGA": {"Setting 1": (100, 5, 1), "Setting 2": (50, 5, 1)},
              "CAFGA": {"Setting 3": (100, 10, 5), "Setting 4": (50, 10, 5)}},
             local_steps=images.FULL.local_steps, rounds=images.FULL.rounds, every=images.FULL.every,
             window=images.FULL.window, seeds=images.FULL.seeds, replicas=images.FULL.replicas,
             device=images.FULL.device, dtype="float32",
             deviation="SUBSTITUTION: Fashion-MNIST with FedAWE's CIFAR CNN on CUDA (an MLP on a CPU-only machine) "
                       "for CIFAR-10 with ConvMixer-256-8; Table 5's Settings 1-4 (N, M, K) as printed, I = 24, "
                       "batch 50, but R = 200 of 500")


def variant(n: int, m: int, k: int, pool: str | None = None) -> tuple[dict, dict]:
    """``(afga switches, participation)`` of the original (``pool=None``: a ring per cluster, :math:`K = 1` is
    AFGA's ring) or of its (a) variant under re-sampling reading ``pool``; :math:`m/K` reporting clients per
    cluster."""
    participation = {"name": "cluster_uniform_k", "n_clients": n, "clusters": k, "k": m // k}
    if pool is None:
        return {"topology": {"name": "block_diagonal", "sizes": [n // k] * k}, "clusters": k}, participation
    return {"gossip_scope": "reporting", "resample_pool": pool, "clusters": k}, participation


def step_scales(pool: str, n: int, m: int) -> dict[str, float]:
    """The free choice of (a)'s local step size: factors of the original's :math:`\\eta_l` (module docstring)."""
    same = {"eta_l as the original": 1.0}
    return same if pool == "all" else {**same, f"eta_l x M/N = {m}/{n} (averages move alike)": m / n}


def runs(ctx, s: Setup, n: int, m: int, k: int, switches: dict, participation: dict, scale: float = 1.0) -> list:
    """The traces of one variant, one per seed (from the store when present)."""
    algorithm = {"name": "afga", "local_steps": s.local_steps, **images.STEP_SIZES, **switches}
    algorithm["lr"] *= scale
    return [ctx.run(RunConfig(problem={**s.problem, s.size: n, "seed": seed}, participation=participation,
                              algorithm=algorithm, rounds=s.rounds, replicas=s.replicas, seed=seed, every=s.every,
                              device=s.device, dtype=s.dtype)) for seed in s.seeds]


def accuracy(traces: list, horizon: int, window: int) -> np.ndarray:
    """Per-run test accuracy (%): the mean of the last ``window`` evaluations up to round ``horizon``."""
    out = []
    for trace in traces:
        upto = int(np.searchsorted(trace.rounds, horizon, side="right"))
        out.append(100.0 * trace.metrics["server.test_acc"][:, upto - window:upto].mean(1))
    return np.concatenate(out)


def similar(name: str, gaps: dict[str, dict[str, np.ndarray]]) -> list:
    """:math:`\\mathbb E[D]\\le` :data:`SIMILAR` and :math:`\\ge -` :data:`SIMILAR`, each across the readings and
    choices of ``gaps`` (reading -> choice -> paired differences original - (a))."""
    out = []
    for rel, test, bound in (("<=", at_most, SIMILAR), (">=", at_least, -SIMILAR)):
        readings = {reading: across(reading, {choice: test(f"{reading}; {choice}", float(d.mean()), bound,
                                                           basis="monte_carlo", samples=d, note="accuracy points")
                                              for choice, d in by_choice.items()}, what="choice")
                    for reading, by_choice in gaps.items()}
        out.append(across(f"{name}: original - (a) {rel} {bound:+.2f} points (paired runs)", readings, what="reading"))
    return out


@claim("afga.table5_adapted", "seed 002 §5 (Communication-adapted), footnote 4, §6.3 Table 5; digest 002 §1.6, "
       "§3.2, §5 (CNN-side checks)",
       "The communication-adapted AFGA (a) and CAFGA (a), gossiping only among the round's reporting clients, reach "
       f"a final test accuracy within {SIMILAR} points (Table 5's largest gap called similar) of the originals.",
       kind="reproduction", where="§6.3 (Communication-Adapted AFGA and CAFGA), Table 5", quote=QUOTE,
       expect="inconclusive",
       because="on the quick stand-in every (a) run trails its original (mean gaps 1.0 to 13.7 points) but only some "
               "cells are decided: at R/2 = 30 rounds the gap exceeds 2.21 significantly under the whole-cluster "
               "reading (AFGA 13.7, CAFGA 11.6) and for CAFGA (a) with the original eta_l (7.7); at R = 60 every "
               "interval contains 2.21 (gaps 1.0 to 5.7); (a) never beats an original by 2.21 (that side holds)",
       defence="The authors could say their (a) runs were tuned and trained for 500 rounds, and Table 5's own R# "
               "column shows (a) slower (302 -> 419, 69 -> 136 rounds) while the final accuracy is close. That is "
               "why the verdict is inconclusive and not 'not reproduced': a violation must hold at every horizon, "
               "step-size choice and reading of the re-sampling, and at the later horizon no gap is decided",
       partial=("CNN-T5",))
@one_thread
def table5_adapted(ctx) -> Evidence:
    s = ctx.with_seeds(ctx.pick(QUICK, FULL))
    horizons = {f"final at R = {s.rounds}": s.rounds, f"final at R/2 = {s.rounds // 2}": s.rounds // 2}
    checks, notes = [], []
    for method, cells in s.settings.items():
        for setting, (n, m, k) in cells.items():
            original = runs(ctx, s, n, m, k, *variant(n, m, k))
            gaps, finals = {}, {"original": accuracy(original, s.rounds, s.window)}
            for reading, pool in READINGS.items():
                gaps[reading] = {}
                for choice, scale in step_scales(pool, n, m).items():
                    adapted = runs(ctx, s, n, m, k, *variant(n, m, k, pool), scale)
                    finals[f"(a) {pool}, {choice}"] = accuracy(adapted, s.rounds, s.window)
                    gaps[reading].update({f"{choice}; {label}": accuracy(original, h, s.window)
                                          - accuracy(adapted, h, s.window) for label, h in horizons.items()})
            name = f"{method} {setting} (N = {n}, M = {m}, K = {k})"
            checks += similar(name, gaps)
            printed = TABLE5[method].get(setting)
            notes.append(f"{name}, test accuracy % at R (mean ± sample std over {len(finals['original'])} runs): "
                         + "; ".join(f"{label} {v.mean():.2f} ± {v.std(ddof=1):.2f}" for label, v in finals.items())
                         + (f" — Table 5: {method} {printed[0]:.2f}, (a) {printed[1]:.2f}" if printed else ""))
    return Evidence(checks, notes=notes + [
        f"tolerance {SIMILAR} points = Table 5's largest original - (a) gap (AFGA Setting 1: 78.80 - 76.59), the "
        "paper's own 'similar'; its other gaps are 1.10, 0.41 and 0.16",
        "(a): a ring over each cluster's reporting clients per round, self-weight 1/3 (footnote 4 gives no weights); "
        "the digest's resample_size reading (fewer than m re-sampled inside S_r) names no size and is not run"],
        deviations=[s.deviation, "one set of step sizes for the originals (the paper tunes each method on a grid)",
                    "final accuracy at two horizons of a shorter run instead of the last 5 of 500 rounds"])
