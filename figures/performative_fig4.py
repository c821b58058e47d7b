r"""Performative FL Figure 4: data heterogeneity (:math:`m`) vs shift heterogeneity (:math:`\epsilon`).

Seed 003 §4.1, Fig. 4; digest §6 Table E.  :math:`K=20`, :math:`E=5`, :math:`p_i=1/25`, both partial schemes.
(a) Var(m) = 6 vs 0 with Var(ε)=0.1; (b) Var(ε) = 0.6 vs 0.1 with Var(m)=0.6.  Heterogeneous :math:`\epsilon`
costs about 7x (Scheme I) and 10x (Scheme II) at :math:`t=10^5`; heterogeneous :math:`m` about 3%.  With
Var(ε)=0.6, :math:`\sum_ip_i|\epsilon_i|>1` so the theorems say nothing, yet the iterates converge.
"""

from __future__ import annotations

from theorylab.figures import performative_sweeps
from theorylab.performative.experiments import algorithm_spec, gaussian_spec
from theorylab.registry import register


def panels() -> dict:
    def settings(pairs):
        return [(f"Scheme {s}, {label}", gaussian_spec(ev, mv, "uniform"), algorithm_spec(s, 20))
                for s in ("I", "II") for label, ev, mv in pairs]

    return {"(a) data heterogeneity": settings((("Var(m)=6", 0.1, 6.0), ("Var(m)=0", 0.1, 0.0))),
            "(b) shift heterogeneity": settings((("Var(eps)=0.6", 0.6, 0.6), ("Var(eps)=0.1", 0.1, 0.6)))}


def compute(ctx) -> dict:
    return performative_sweeps.compute(ctx, panels())


def draw(data, path):
    return performative_sweeps.draw(data, path, "Fig. 4: heterogeneity, K=20, E=5, p_i=1/25")


@register("figure", "performative-fig4")
def render(ctx):
    """Performative FL Fig. 4: heterogeneity in m vs in eps, Schemes I and II."""
    return draw(compute(ctx), ctx.figure_path("performative-fig4"))
