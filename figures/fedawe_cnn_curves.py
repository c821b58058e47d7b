"""FedAWE Table 2 setting (seed 000 §7, Table 2; digest 000 §6.2): the runs and their learning curves.

The setups (:data:`QUICK`, :data:`FULL_GPU`, :data:`FULL_CPU`, chosen by :func:`setup`), the algorithms
compared (:data:`ALGORITHMS`), :func:`compare` (every dynamics, algorithm and seed, from the store when
present) and :func:`draw_curves` (:func:`theorylab.figures.learning_curves.draw` per dynamics).  The claim
``fedawe.table2_cnn`` (:mod:`theorylab.validations.fedawe.table2`) and ``theorylab figure fedawe-cnn-curves`` use
them; the figure draws the full (FMNIST CNN) setup on a GPU, the quick setup otherwise.
"""

from __future__ import annotations

import dataclasses

import torch

from theorylab.figures.learning_curves import draw
from theorylab.testbeds.network import fedawe_participation
from theorylab.testbeds.training import choose_point, paper_lr0
from theorylab.config import RunConfig
from theorylab.registry import register

# each runs with Table 7's eta_0 (theorylab.testbeds.training.paper_lr0) and is read at its default point (choose_point)
ALGORITHMS = (
    {"label": "FedAWE", "spec": {"name": "fedawe"}},
    {"label": "FedAvg over active", "spec": {"name": "fedavg", "aggregation": "active"}},
    {"label": "FedAvg over all", "spec": {"name": "fedavg", "aggregation": "all"}},
)


@dataclasses.dataclass(frozen=True)
class Setup:
    problem: dict  # image testbed spec; its "seed" is set per run
    dynamics: tuple[str, ...]
    rounds: int
    every: int
    window: int  # final accuracy = mean over the last `window` evaluations
    local_steps: int
    seeds: tuple[int, ...]  # one partition and availability draw (phi) per seed
    replicas: int  # runs per seed sharing them; samples = seeds x replicas
    device: str
    deviations: tuple[str, ...]


COMMON_DEVIATIONS = (
    "Minibatches are drawn uniformly with replacement from a client's data (the official code cycles through "
    "shuffled epochs); no data augmentation; no gradient or update clipping.",
    "Every algorithm of a run (seed, replica) shares the partition, the availability draws, the minibatches and "
    "the initial model, so orderings are tested on paired per-run differences.",
)
QUICK = Setup(
    problem={"name": "digits", "model": "mlp", "clients": 50, "alpha": 0.1, "batch_size": 16, "eval_train": None},
    dynamics=("stationary", "sine", "interleaved_sine"), rounds=150, every=10, window=5, local_steps=10,
    seeds=(0,), replicas=3, device="cpu",
    deviations=("QUICK-MODE STAND-IN: scikit-learn digits (1,437 train / 360 test 8x8 images) with a one-hidden-layer "
                "MLP (64 units), 50 clients, batch 16, 150 rounds, evaluated on the full train and test splits; "
                "the paper uses SVHN / CIFAR-10 / CINIC-10 with CNNs, 100 clients, batch 128, 2000 rounds.",
                "Quick mode's 3 samples are 3 replicas on one partition and one availability draw phi (seed 0): "
                "their spread covers initialisation, availability draws and minibatches, not the partition "
                "(the paper re-draws everything per seed; full mode does).",
                *COMMON_DEVIATIONS),
)
FULL_GPU = Setup(
    problem={"name": "fmnist", "model": "cnn_cifar", "clients": 100, "alpha": 0.1, "batch_size": 128,
             "eval_train": 10000, "eval_test": None},
    dynamics=("stationary", "sine", "interleaved_sine"), rounds=500, every=10, window=5, local_steps=10,
    seeds=(0, 1, 2), replicas=1, device="cuda",
    deviations=("SUBSTITUTION: Fashion-MNIST (60k/10k, zero-padded to 32x32 and tiled to 3 channels) stands in for "
                "SVHN / CIFAR-10, which cannot be obtained here; model = the Table 6 CIFAR-10 CNN unchanged; "
                "500 rounds instead of 2000 (final accuracy = mean of the evaluations in the last 50 rounds); "
                "train accuracy on a fixed 10k-sample subset.",
                *COMMON_DEVIATIONS),
)
FULL_CPU = Setup(
    problem={"name": "fmnist", "model": "mlp", "clients": 100, "alpha": 0.1, "batch_size": 128,
             "eval_train": 10000, "eval_test": None},
    dynamics=("stationary", "sine", "interleaved_sine"), rounds=300, every=10, window=5, local_steps=10,
    seeds=(0, 1, 2), replicas=1, device="cpu",
    deviations=("CPU STAND-IN FOR THE FULL MODE (no GPU on this machine; the Table 6 CNN runs at about 2k images/s "
                "here, hours per run): Fashion-MNIST (60k/10k) with 100 clients, Dirichlet(0.1), batch 128, but a "
                "one-hidden-layer MLP (784-64-10) instead of the CNN and 300 rounds instead of 2000 (final accuracy "
                "= mean of the evaluations in the last 50 rounds); FMNIST substitutes for SVHN / CIFAR-10; train "
                "accuracy on a fixed 10k-sample subset.",
                *COMMON_DEVIATIONS),
)


def setup(quick: bool) -> Setup:
    """Quick: digits stand-in; full: the FMNIST CNN on a GPU, the FMNIST MLP stand-in on a CPU-only machine."""
    if quick:
        return QUICK
    return FULL_GPU if torch.cuda.is_available() else FULL_CPU


def run_config(s: Setup, algorithm: dict, dynamics: str, seed: int) -> RunConfig:
    problem = {**s.problem, "seed": seed}
    spec = {**algorithm["spec"], "local_steps": s.local_steps,
            "lr": {"name": "inverse_sqrt", "lr0": paper_lr0(algorithm["spec"]), "t0": 10}}
    return RunConfig(problem=problem, participation=fedawe_participation(problem, dynamics), algorithm=spec,
                     rounds=s.rounds, replicas=s.replicas, seed=seed, every=s.every, device=s.device,
                     dtype="float32")


def compare(ctx, s: Setup | None = None, algorithms=ALGORITHMS) -> dict:
    """Run (or read from the store) every (dynamics, algorithm, seed) of the setup."""
    s = ctx.with_seeds(s or setup(ctx.quick))
    traces = {(d, a["label"]): [ctx.run(run_config(s, a, d, seed)) for seed in s.seeds]
              for d in s.dynamics for a in algorithms}
    points = {a["label"]: choose_point(a["spec"], s.problem["clients"]) for a in algorithms}
    return {"setup": s, "traces": traces, "points": points}


def draw_curves(ctx, result: dict):
    s = result["setup"]
    panels = {d: {label: runs for (dd, label), runs in result["traces"].items() if dd == d} for d in s.dynamics}
    title = (f"FedAWE Table 2 setting on {s.problem['name']} ({s.problem['model']}, {s.problem['clients']} clients, "
             f"Dir({s.problem['alpha']})): mean ± sample std over {len(s.seeds) * s.replicas} runs")
    return draw(panels, ctx.figure_path("fedawe-cnn-curves" + ("-quick" if ctx.quick else "")), result["points"], title)


@register("figure", "fedawe-cnn-curves")
def render(ctx):
    """Learning curves of FedAWE's Table 2 comparison (mean ± sample std): the FMNIST CNN on a GPU, else quick."""
    if not ctx.quick and not torch.cuda.is_available():  # the CPU full setup takes tens of minutes; keep figures cheap
        ctx = dataclasses.replace(ctx, quick=True)
    return draw_curves(ctx, compare(ctx))
