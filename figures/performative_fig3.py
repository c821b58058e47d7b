r"""Performative FL Figure 3: impact of the sample size :math:`K` (seed 003 §4.1, Fig. 3; digest §6 Table D).

:math:`E=5`, Var(m)=0.6, Var(ε)=0.1; (a) Scheme I with random :math:`p`, (b) Scheme II with :math:`p_i=1/25`;
:math:`K\in\{2,5,10,15,20,24\}` plus full participation (:math:`K=25`).  In exact expectation the error
decreases monotonically in :math:`K` for both schemes (the paper: Scheme II "first increases then decreases").
"""

from __future__ import annotations

from theorylab.figures import performative_sweeps
from theorylab.performative.experiments import algorithm_spec, gaussian_spec
from theorylab.registry import register

K_VALUES = (2, 5, 10, 15, 20, 24)


def panels() -> dict:
    out = {}
    for tag, scheme, weights in (("a", "I", "random"), ("b", "II", "uniform")):
        settings = [(f"K={k}", gaussian_spec(weights=weights), algorithm_spec(scheme, k)) for k in K_VALUES]
        settings.append(("full (K=25)", gaussian_spec(weights=weights), algorithm_spec("full")))
        out[f"({tag}) Scheme {scheme}, {weights} p"] = settings
    return out


def compute(ctx) -> dict:
    return performative_sweeps.compute(ctx, panels(), horizon=50_000)


def draw(data, path):
    return performative_sweeps.draw(data, path, "Fig. 3: impact of K, E=5, Var(m)=0.6, Var(eps)=0.1", legend="lower right")


@register("figure", "performative-fig3")
def render(ctx):
    """Performative FL Fig. 3: impact of K on Schemes I and II."""
    return draw(compute(ctx), ctx.figure_path("performative-fig3"))
