r"""FedAWE Figs. 4 and 5 (App. J.3): a Dirichlet(0.1) partition and the base probabilities it induces.

Seed 000 App. J.3; digest 000 §5 and §6.6.  Labels: a balanced 10-class set of CIFAR-10's training size (50,000, 5,000
per class; the labels enter only through the partition, and the paper does not say which dataset its figures use).
Fig. 4: the partition of :func:`theorylab.testbeds.data.partitions.dirichlet` for 20 clients, one bubble per (class,
client) with area proportional to the client's share of that class.  Fig. 5: the histogram of
:math:`p_i = \langle\hat\nu_i,\phi\rangle` for :math:`m = 100` clients, with :math:`\hat\nu_i` the empirical label
proportions and :math:`[\phi]_c\sim U(0,\Phi_c)`, :math:`\Phi = (1^{\times5}, 0.5^{\times5})`
(:func:`theorylab.testbeds.data.partitions.fedawe_availability`, the official code's recipe).
"""

from __future__ import annotations

import numpy as np

from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.testbeds.data.partitions import dirichlet, fedawe_availability, label_proportions

CLASSES = 10
LABELS = np.repeat(np.arange(CLASSES), 5000)  # CIFAR-10's training split: 5,000 images per class
ALPHA = 0.1


def base_probabilities(seed: int, clients: int = 100, alpha: float = ALPHA) -> np.ndarray:
    r"""``(clients,)`` FedAWE base probabilities of one draw: the partition and :math:`\phi` both from ``seed``."""
    parts = dirichlet(LABELS, clients, alpha, seed)
    return fedawe_availability(LABELS, parts, seed, CLASSES)


def compute(seed: int) -> dict:
    """Fig. 4's ``(20, 10)`` label proportions and Fig. 5's 100 base probabilities, for one seed."""
    return {"proportions": label_proportions(LABELS, dirichlet(LABELS, 20, ALPHA, seed), CLASSES),
            "p": base_probabilities(seed)}


def draw(data: dict, path):
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    share = data["proportions"]
    clients, classes = np.nonzero(share)
    left.scatter(classes, clients, s=400 * share[clients, classes], alpha=0.7, color="C0")
    left.set(xticks=range(CLASSES), yticks=range(share.shape[0]), xlabel="class", ylabel="client",
             title=f"Fig. 4: Dirichlet({ALPHA}) partition, 20 clients (area = share)")
    p = data["p"]
    right.hist(p, bins=np.linspace(0, 1, 21), color="C1", edgecolor="white")
    right.axvline(0.5, color="k", lw=1, ls="--")
    right.set(xlabel="$p_i$", ylabel="clients", title=f"Fig. 5: $p_i$ of m = {len(p)} clients "
                                                      f"({np.mean(p < 0.5):.0%} below 0.5)")
    return save(fig, path)


@register("figure", "fedawe-fig4-5")
def render(ctx):
    """FedAWE Figs. 4-5: a Dirichlet(0.1) partition of 20 clients and the histogram of p_i for m = 100."""
    return draw(compute(ctx.seed), ctx.figure_path("fedawe-fig4-5"))
