r"""Performative FL Figure 2: impact of the aggregation period :math:`E` (seed 003 §4.1, Fig. 2; digest §6 Table C).

:math:`K=20`, Var(m)=0.6, Var(ε)=0.1; (a) Scheme I with random :math:`p`, (b) Scheme II with :math:`p_i=1/25`;
:math:`E\in\{1,5,10,20,50\}` (the authors' list [R]).  Drawn against local iterations (the paper's axis) and
against rounds.  Per local iteration the error grows monotonically with :math:`E`, against "a slightly larger
:math:`E` converges faster"; per round a moderate :math:`E` wins at a few thousand rounds, so the statement depends
on the figure's axis (``performative.effect_of_E``).
"""

from __future__ import annotations

from theorylab.figures import performative_sweeps
from theorylab.performative.experiments import algorithm_spec, gaussian_spec
from theorylab.registry import register

E_VALUES = (1, 5, 10, 20, 50)


def panels() -> dict:
    return {f"({tag}) Scheme {s}, {w} p": [(f"E={E}", gaussian_spec(weights=w), algorithm_spec(s, 20, E)) for E in E_VALUES]
            for tag, s, w in (("a", "I", "random"), ("b", "II", "uniform"))}


def compute(ctx) -> dict:
    return performative_sweeps.compute(ctx, panels())


def draw(data, path):
    return performative_sweeps.draw(data, path, "Fig. 2: impact of E, K=20, Var(m)=0.6, Var(eps)=0.1", per_round=True)


@register("figure", "performative-fig2")
def render(ctx):
    """Performative FL Fig. 2: impact of E on Schemes I and II (per local iteration and per round)."""
    return draw(compute(ctx), ctx.figure_path("performative-fig2"))
