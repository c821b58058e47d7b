r"""Thesis Fig. 3.4 (seed 001 §3.5.2, L1160-1166; digest 001 §5.4): loss of FedAvg (:math:`\beta = 0`), FedStale
(:math:`\beta = 0.5`) and FedVARP (:math:`\beta = 1`) against participation heterogeneity :math:`p_{\rm avg}/p_{\min}`
at :math:`\sigma_g^2 = 0.6`.

The thesis plots test accuracy of CNNs on MNIST and CIFAR-10; we plot the exact expected loss
:math:`\mathbb E F(w^T) - F^\star` (:math:`\eta_c` tuned per :math:`\beta`, :math:`T = 10/p_{\min}`) on the two-group
quadratic stand-in of :mod:`theorylab.figures.thesis_fig3_2`.  The horizon grows with the ratio, so the curves mix the effect
of participation heterogeneity with that of a longer run, as the thesis' do.
"""

from __future__ import annotations

from theorylab.figures.thesis_fig3_2 import RATIOS
from theorylab.figures.thesis_fig3_3 import draw_lines, loss_lines
from theorylab.registry import register

SIGMA_G2 = 0.6


def compute(ratios=RATIOS, sigma_g2: float = SIGMA_G2) -> dict:
    """The lines of Fig. 3.4: over p_avg/p_min at a fixed sigma_g^2."""
    return loss_lines(ratios, [(sigma_g2, r) for r in ratios])


@register("figure", "thesis-fig3-4")
def render(ctx):
    """Thesis Fig. 3.4: loss vs p_avg/p_min at sigma_g^2 = 0.6 for beta in {0, 0.5, 1} (quadratic stand-in)."""
    return draw_lines(compute(ctx.pick(RATIOS[:5], RATIOS)), ctx.figure_path("thesis-fig3-4"),
                      "participation heterogeneity p_avg / p_min", "Fig. 3.4 stand-in: σ_g² = 0.6", logx=True)
