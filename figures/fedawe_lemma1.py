r"""FedAWE Lemma 1: consensus contraction :math:`\mathbb E\|B(\prod_{r\le t}W^{(r)}-\mathbf J)\|_F^2` against :math:`\rho^t\|B\|_F^2`.

Seed 000 Lemma 1; digest 000 §3.2 and §8 item 4: :math:`m = 5`, :math:`p = (0.9, 0.1, 0.5, 0.3, 0.7)`
(:math:`\rho = 0.91592`), a random :math:`3\times5` matrix :math:`B`, :math:`t = 1..50`.  Three curves: Monte Carlo
over independent draws of the active sets (mixing matrices from :func:`theorylab.mixing.mixing_matrix`), the
exact value by the enumerated superoperator (:func:`theorylab.mixing.exact_contraction`), and the bound.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.mixing import exact_contraction, mixing_matrix, rho_of
from theorylab.plotting import pyplot, save
from theorylab.registry import register
from theorylab.rng import Streams
from theorylab.threads import one_thread

P = (0.9, 0.1, 0.5, 0.3, 0.7)
ROUNDS, B_SHAPE = 50, (3, 5)


def compute(draws: int, seed: int) -> dict:
    """Monte Carlo samples ``(draws, ROUNDS)`` of :math:`\\|B(P_t-\\mathbf J)\\|_F^2`, the exact curve,
    :math:`\\rho` and :math:`\\|B\\|_F^2`."""
    m = len(P)
    B = np.random.Generator(np.random.PCG64([seed, 41])).standard_normal(B_SHAPE)
    Bt = torch.as_tensor(B)
    J = torch.full((m, m), 1.0 / m, dtype=torch.float64)
    streams = Streams(seed, 1)
    prod = torch.eye(m, dtype=torch.float64).expand(draws, m, m)
    samples = np.empty((draws, ROUNDS))
    for t in range(ROUNDS):
        active = streams.uniform("participation", (draws, m))[0] < torch.as_tensor(P, dtype=torch.float64)
        prod = prod @ mixing_matrix(active)
        samples[:, t] = ((Bt @ (prod - J)) ** 2).sum((-2, -1)).numpy()
    centered = B @ (np.eye(m) - J.numpy())
    return {"t": np.arange(1, ROUNDS + 1), "samples": samples, "exact": exact_contraction(B, [P] * ROUNDS),
            "rho": rho_of(P), "norm2": float((B ** 2).sum()), "norm2_centered": float((centered ** 2).sum())}


def draw(data: dict, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 3.8), constrained_layout=True)
    t, rho = data["t"], data["rho"]
    mc = data["samples"].mean(0)
    ax.semilogy(t, data["norm2"] * rho ** t, "k--", label=r"Lemma 1 bound $\rho^t\|B\|_F^2$")
    ax.semilogy(t, data["norm2_centered"] * rho ** t, "k:", label=r"sharper $\rho^t\|B(I-\mathbf{J})\|_F^2$")
    ax.semilogy(t, data["exact"], "C0-", lw=2, alpha=0.6, label="exact (enumerated superoperator)")
    ax.semilogy(t, mc, "C1o", ms=3, label=f"Monte Carlo ({data['samples'].shape[0]} draws)")
    ax.set(xlabel="rounds $t$", ylabel=r"$\mathbb{E}\|B(\prod_{r\leq t}W^{(r)}-\mathbf{J})\|_F^2$",
           title=f"FedAWE Lemma 1: m=5, p={P}, $\\rho$={rho:.5f}")
    ax.legend(fontsize=7)
    return save(fig, path)


@register("figure", "fedawe-lemma1")
@one_thread
def render(ctx):
    """FedAWE Lemma 1: Monte Carlo and exact consensus contraction against rho^t ||B||_F^2."""
    return draw(compute(ctx.pick(20000, 200000), ctx.seed), ctx.figure_path("fedawe-lemma1"))
