r"""Seed 002 §6 / Fig. 1's topologies (digest 002 §1.8, §2.6): :math:`\rho = \|W-J\|_2` of every library topology
against the number of clients :math:`n`, beside Theorem 4.6's threshold :math:`\frac M{M+n}` (:math:`M = 5`, the
paper's Settings 1–2), Theorem D.3's :math:`\frac m{m+n}` (:math:`m = 1` per cluster) and the paper's printed values;
and the ring's spectrum.

Panel (a): ring (self-weight 1/3, closed form), square torus, Erdős–Rényi :math:`G(n, 0.5)` with Metropolis–Hastings
weights and Sinkhorn-balanced uniform matrices (mean ± sd over seeds; the digest's stand-ins for the paper's
unstated "random" and "unbalanced fully-connected" generators), :math:`J` (:math:`\rho=0`).  At the paper's sizes
(:math:`N\in\{50, 100\}` with :math:`M = 5`; clusters of :math:`n\in\{10, 20\}` with :math:`m = 1`) only :math:`J`
lies below its threshold.  Panel (b): eigenvalues :math:`\frac13+\frac23\cos(2\pi k/n)` of the rings of 10 and 50.
The claim ``afga.rho_ring`` attaches this figure.
"""

from __future__ import annotations

import numpy as np

from theorylab.plotting import pyplot, save
from theorylab.registry import build, register
from theorylab.topology.ring import ring_spectrum

M = 5  # reporting clients per round in the paper's Settings 1-2 (AFGA); CAFGA samples m = 1 per cluster
SIZES = (4, 5, 6, 8, 10, 12, 16, 20, 25, 30, 40, 50, 64, 80, 100)
QUICK_SIZES = (4, 6, 10, 20, 50, 100)
PRINTED = {"ring, N = 50": (50, 0.995), "ring, n = 10": (10, 0.873), "random, N = 50": (50, 0.455),
           "random, n = 10": (10, 0.766), "unbalanced FC, n = 10": (10, 0.335)}


def _seeded(name: str, n: int, seeds: int, **params) -> tuple[float, float]:
    rho = [build("topology", {"name": name, "n": n, "seed": s, **params}).rho for s in range(seeds)]
    return float(np.mean(rho)), float(np.std(rho))


def compute(ctx) -> dict:
    """rho per topology over :data:`SIZES` (quick: :data:`QUICK_SIZES`; random ones: mean and sd over
    ``ctx.pick(4, 20)`` seeds)."""
    seeds = ctx.pick(4, 20)
    sizes = np.array(ctx.pick(QUICK_SIZES, SIZES))
    side = np.arange(2, 11, ctx.pick(2, 1))
    return {
        "n": sizes,
        "ring": np.array([build("topology", {"name": "ring", "n": int(n)}).rho for n in sizes]),
        "torus_n": side ** 2,
        "torus": np.array([build("topology", {"name": "torus", "a": int(a), "b": int(a)}).rho for a in side]),
        "erdos_renyi": np.array([_seeded("erdos_renyi", int(n), seeds, p=0.5) for n in sizes]),
        "sinkhorn": np.array([_seeded("random_doubly_stochastic", int(n), seeds) for n in sizes]),
        "threshold": M / (M + sizes),
        "threshold_cluster": 1 / (1 + sizes),
        "spectra": {n: np.sort(ring_spectrum(n))[::-1] for n in (10, 50)},
        "seeds": seeds,
    }


def draw(data: dict, path):
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.2), constrained_layout=True)
    n = data["n"]
    ax.plot(n, data["ring"], "o-", label="ring (self-weight 1/3)")
    ax.plot(data["torus_n"], data["torus"], "s-", label="torus a x a")
    for key, label in (("erdos_renyi", "Erdos-Renyi p = 0.5, MH weights"), ("sinkhorn", "Sinkhorn (dense)")):
        mean, sd = data[key][:, 0], data[key][:, 1]
        ax.errorbar(n, mean, yerr=sd, marker=".", capsize=2, label=f"{label}, {data['seeds']} seeds")
    ax.plot(n, np.zeros_like(n, dtype=float), "k-", lw=1, label="J (balanced FC)")
    ax.plot(n, data["threshold"], "r--", label=f"Thm 4.6 threshold M/(M+n), M = {M}")
    ax.plot(n, data["threshold_cluster"], "r:", label="Thm D.3 threshold m/(m+n), m = 1")
    for i, (label, (x, y)) in enumerate(PRINTED.items()):
        ax.plot(x, y, marker="*", ms=11, ls="none", color=f"C{i + 4}", label=f"paper: {label} ({y})")
    ax.set(xscale="log", xlabel="clients n", ylabel="rho = ||W - J||_2", title="(a) contraction factor vs n")
    ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    for n_ring, eig in data["spectra"].items():
        bx.plot(np.arange(len(eig)) / len(eig), eig, ".-", label=f"ring({n_ring}): rho = {eig[1]:.5f}")
    bx.axhline(0, color="k", lw=0.5)
    bx.set(xlabel="k / n (sorted)", ylabel="eigenvalue of W", title="(b) ring spectrum 1/3 + 2/3 cos(2 pi k/n)")
    bx.legend(fontsize=7)
    return save(fig, path)


@register("figure", "afga-topologies")
def render(ctx):
    """AFGA/CAFGA topologies: rho = ||W - J||_2 vs n for every topology, the threshold M/(M+n), the paper's values."""
    return draw(compute(ctx), ctx.figure_path("afga-topologies"))
