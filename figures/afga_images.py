r"""The runs of AFGA's image-side stand-in (seed 002 §6, App. B; digest 002 §3): the setups, the methods of
Tables 1-4 as ``afga`` switches, the step-size choices and the runs themselves, shared by the claims of
:mod:`theorylab.validations.afga.images` and by the Figs. 3-5 curves (:mod:`theorylab.figures.afga_curves`), so the
figure draws exactly the claims' runs (and re-draws them from the store).

The step sizes are the digest's reading of the epsilon-free regime (:math:`\eta_l = 0.05`, FedAMSGrad
:math:`\eta = 0.003`, :math:`\epsilon = 10^{-8}`), not the paper's per-method grid search (App. B.2, chosen values
unreported); :data:`STEP_CHOICES` are the two choices every ordering is decided under.
"""

from __future__ import annotations

import dataclasses

import torch

from theorylab.config import RunConfig
from theorylab.figures.afga_sweeps import fedamsgrad


@dataclasses.dataclass(frozen=True)
class Setup:
    problem: dict  # image testbed spec without partition; its "seed" is set per run
    clients: int
    reporting: int  # M
    clusters: int  # K, with M / K reporting clients per cluster
    local_steps: int
    rounds: int
    every: int
    window: int
    seeds: tuple[int, ...]
    replicas: int
    device: str
    deviation: str


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


QUICK = Setup({"name": "digits", "model": "logistic", "batch_size": 16, "eval_train": None}, clients=20, reporting=4,
              clusters=4, local_steps=5, rounds=20, every=5, window=2, seeds=(0,), replicas=32, device="cpu",
              deviation="QUICK-MODE STAND-IN: scikit-learn digits (8x8) with the multinomial-logistic model, N = 20 "
                        "clients, M = 4 (20%), K = 4 clusters (m = 1), I = 5, batch 16, R = 20 rounds, 32 replicas (24 for Figs. 2 and 6) of "
                        "one partition; the paper: CIFAR-10 with ConvMixer-256-8, N = 50, M = 5, K = 5, I = 24, "
                        "batch 50, R = 500, 3 seeds")
FULL = Setup({"name": "fmnist", "model": "cnn_cifar" if _device() == "cuda" else "mlp", "batch_size": 50,
              "eval_train": 2000}, clients=50, reporting=5, clusters=5, local_steps=24, rounds=200, every=10,
             window=5, seeds=(0, 1, 2), replicas=4, device=_device(),
             deviation="SUBSTITUTION: Fashion-MNIST with FedAWE's CIFAR CNN on CUDA (an MLP on a CPU-only machine) for "
                       "CIFAR-10 with ConvMixer-256-8; Setting 2's N = 50, M = 5, K = 5, I = 24, batch 50, but "
                       "R = 200 of 500")
FEWER = dataclasses.replace(QUICK, replicas=24)  # Figs. 2 and 6's effects are larger than Table 4's: 24 runs resolve them
STEP_SIZES = {"lr": 0.05, "server": fedamsgrad(0.003, 1e-8)}


STEP_CHOICES = {  # the free choice of step sizes: the paper tunes every method on a grid and reports no chosen values
    "one eta_l = 0.05 for every method": False,
    "eta_l x N/M for the gossip variants (their average model then moves as far per step as FedAMSGrad's)": True,
}


def variants(s: Setup, scaled: bool = False) -> dict[str, tuple[dict, dict]]:
    r"""Table 4's rows: (algorithm switches, participation) per label.  With ``scaled`` the gossip variants take
    :math:`\eta_l N/M`: only :math:`M` of :math:`N` clients compute per step and gossip keeps the average, so their
    average model moves :math:`\eta_l M/N` per step against FedAMSGrad's :math:`\eta_l` (digest §0.5; the clusters of
    CAFGA sample the same fraction)."""
    n = s.clients
    flat = {"name": "uniform_k", "n_clients": n, "k": s.reporting}
    clustered = {"name": "cluster_uniform_k", "n_clients": n, "clusters": s.clusters, "k": s.reporting // s.clusters}
    ring = {"name": "ring", "n": n}
    lr = {"lr": STEP_SIZES["lr"] * n / s.reporting} if scaled else {}
    return {"+Gossip": ({"resample": False, "topology": ring, **lr}, flat),
            "FedAMSGrad": ({"resample": False, "gossip": False}, flat),
            "AFGA": ({"topology": ring, **lr}, flat),
            "CAFGA": ({"topology": {"name": "block_diagonal", "sizes": [n // s.clusters] * s.clusters},
                       "clusters": s.clusters, **lr}, clustered)}


PAPER_PARTITION = {"partition": "dirichlet_per_class", "alpha": 0.6}  # §6: Dirichlet 0.6, per class (digest §3.1)


def tables_1_3_settings(base: Setup) -> dict[str, Setup]:
    """Tables 1-3's two participation settings on a stand-in that keeps :math:`M`: Setting 1 (the smaller share,
    the paper's 5%) doubles :math:`N`."""
    return {"Setting 1": dataclasses.replace(base, clients=2 * base.clients), "Setting 2": base}


def runs(ctx, s: Setup, partition: dict, switches: dict, participation: dict, algorithm: dict | None = None) -> list:
    """The traces of one method (``switches``, ``participation``) on ``s``, one per seed (``ctx.run``: cached);
    ``algorithm`` replaces the ``afga`` spec (Table 8's decentralised baselines)."""
    spec = algorithm or {"name": "afga", "local_steps": s.local_steps, **STEP_SIZES, **switches}
    out = []
    for seed in s.seeds:
        config = RunConfig(problem={**s.problem, "clients": s.clients, "seed": seed, **partition},
                           participation=participation, rounds=s.rounds, replicas=s.replicas, seed=seed,
                           every=s.every, device=s.device, dtype="float32", algorithm=spec)
        out.append(ctx.run(config))
    return out
