r"""The shape of DMA-PL's prior bound (4.3) over its undefined parameters :math:`\zeta_1,\zeta_2` (seed 001 §4.2;
digest 001 ch. 4-6 §2.2 and §7 item 5; :func:`theorylab.bounds.thesis_ch4.bound_43`).

The thesis quotes (4.3) from M. Chen et al. (2021) without defining :math:`\zeta_1,\zeta_2` or the step size, so the
figure shows the bound as a function of them instead of deciding anything:

* **left**: the contraction :math:`A=1-\mu/L+4\mu\zeta_2\sum_i\alpha_iq_i/L` against the mean loss
  :math:`\sum_i\alpha_iq_i` (:math:`\kappa=1`), for several :math:`\zeta_2`; above :math:`A=1` the bound does not
  converge.  The thesis' own setting (two groups with :math:`q=0.1/0.9`, :math:`\sum_i\alpha_iq_i=0.5`) needs
  :math:`\zeta_2<1/2`;
* **right**: the bound over rounds on that setting with the losses scaled down to :math:`q=0.03/0.27`
  (:math:`\sum_i\alpha_iq_i=0.15`), for several :math:`\zeta_2` with :math:`\zeta_1` the smallest value of one reading
  of the parameters (:math:`\sum_i\alpha_i\|\nabla F_i\|^2\le\zeta_1+\zeta_2\|\nabla F\|^2`, which the digest recalls
  unverified; :func:`theorylab.bounds.thesis_ch4.smallest_zeta1`: :math:`\zeta_2\ge1`, :math:`\zeta_1=1` here), beside
  the exact :math:`\mathbb EF(w^t)-F^*` of DMA-PL (:func:`theorylab.exact.lossy_moments.lossy_moments`) with one local
  step of :math:`\eta=1/L` — our choice, as (4.3) as quoted states none.

Under that reading the thesis' setting (:math:`\zeta_2\ge1`, :math:`\sum\alpha_iq_i=0.5`) has :math:`A\ge2`: the
bound says nothing there.  This is a property of the quoted bound with our reading, not a finding against it.
"""

from __future__ import annotations

import numpy as np

from theorylab.bounds.thesis_ch4 import bound_43, bound_43_contraction, smallest_zeta1
from theorylab.config import RunConfig
from theorylab.exact.lossy_moments import lossy_moments
from theorylab.plotting import pyplot, save
from theorylab.registry import build, register

N = 10
CENTERS = [1.0] * (N // 2) + [3.0] * (N // 2)  # the chapter's scalar two-group quadratic (L = mu = 1, w* = 2)
ALPHA = [1.0 / N] * N
MILD = [0.03] * (N // 2) + [0.27] * (N // 2)  # q = 0.1 / 0.9 scaled by 0.3
ZETA2 = (0.25, 0.5, 1.0, 1.5)


def dma_pl_gap(loss, rounds: int) -> np.ndarray:
    """Exact :math:`\\mathbb EF(w^t)-F^*` of DMA-PL, :math:`K=1`, :math:`\\eta=1/L=1`, from :math:`w^{(1)}=0`."""
    config = RunConfig(problem={"name": "scalar_quadratic", "centers": CENTERS, "sigma": 0.0, "x0": 0.0},
                       participation={"name": "bernoulli", "p": [1.0] * N},
                       algorithm={"name": "packet_loss", "aggregator": "dma_pl", "loss": list(loss), "local_steps": 1,
                                  "lr": 1.0},
                       channel={"name": "bernoulli_loss", "uplink": list(loss)}, rounds=rounds, every=1)
    return lossy_moments(config).metrics(build("testbed", config.problem))["server.gap"]


@register("figure", "thesis-eq4-3")
def render(ctx):
    """DMA-PL's prior bound (4.3): its contraction and its curve over the undefined zeta_1, zeta_2 (thesis §4.2)."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    s = np.linspace(0.0, 0.6, 121)
    for z2 in ZETA2:
        left.plot(s, [bound_43_contraction(1.0, 1.0, [1.0], [v], z2) for v in s], label=f"zeta_2 = {z2:g}")
    left.axhline(1.0, color="k", lw=0.8, ls="--")
    left.axvline(float(np.dot(ALPHA, [0.1] * 5 + [0.9] * 5)), color="grey", lw=0.8, ls=":",
                 label="thesis setting (q = 0.1 / 0.9)")
    left.set(xlabel="mean loss sum_i alpha_i q_i", ylabel="contraction A (kappa = 1)", ylim=(0, 2.5),
             title="(4.3) converges only below A = 1")
    left.legend(fontsize=8)
    rounds = np.arange(ctx.pick(30, 60))
    exact = dma_pl_gap(MILD, len(rounds))
    gap0 = float(exact[0])
    for z2 in ZETA2:
        z1 = smallest_zeta1(ALPHA, [1.0] * N, CENTERS, z2)
        inside = np.isfinite(z1)  # below the reading's range: shown with zeta_1 = 1, marked
        z1, tag = (z1, "") if inside else (1.0, " (outside the reading)")
        right.plot(rounds, bound_43(gap0, 1.0, 1.0, ALPHA, MILD, z1, z2, rounds), ls="--",
                   label=f"(4.3), zeta_1 = {z1:g}, zeta_2 = {z2:g}{tag}")
    right.plot(rounds, exact[: len(rounds)], color="k", label="exact E F(w^t) - F*, DMA-PL (K = 1, eta = 1/L)")
    right.set(yscale="log", xlabel="round t", ylabel="F - F*", title="q = 0.03 / 0.27 (sum alpha_i q_i = 0.15)")
    right.legend(fontsize=7, loc="center right")
    fig.suptitle("Thesis (4.3), M. Chen et al.'s DMA-PL bound: zeta_1, zeta_2 and the step are not defined in the "
                 "thesis; shown over them", fontsize=10)
    return save(fig, ctx.figure_path("thesis-eq4-3"))
