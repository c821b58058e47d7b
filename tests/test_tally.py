"""theorylab.tally: a grid statement decided from its points (holds with k holding points, violated when even every
undecided point holding could not reach k, inconclusive otherwise)."""

import numpy as np
import pytest

from theorylab.checks import Check, at_least
from theorylab.tally import tally


def exact(verdict: str) -> Check:
    return Check("point", 1.0, 0.0, ">=", verdict, "closed_form")


@pytest.mark.parametrize("verdicts, needed, expected", [
    (("holds", "holds", "violated"), 2, "holds"),
    (("holds", "violated", "violated"), 2, "violated"),  # 1 + 0 undecided < 2
    (("holds", "inconclusive", "violated"), 2, "inconclusive"),  # 1 + 1 undecided reaches 2
    (("violated", "violated", "holds"), 1, "holds"),
    (("violated", "violated", "violated"), 1, "violated"),
    (("holds", "holds", "inconclusive"), 3, "inconclusive"),
])
def test_counting_rule(verdicts, needed, expected):
    check = tally("grid", {str(i): exact(v) for i, v in enumerate(verdicts)}, needed, relation="rule")
    assert check.verdict == expected
    assert check.measured == verdicts.count("holds") and check.theory == needed and check.basis == "closed_form"


def test_monte_carlo_points_are_re_decided_at_a_bonferroni_share():
    # A point 3.5 standard errors above its bound: it holds alone at 99.9% (two-sided t-quantile 3.31 with 399
    # degrees of freedom) but not at a twentieth of the error rate (4.06), as when it is one of 20 tallied points.
    rng = np.random.default_rng(0)
    z = rng.standard_normal(400)
    z = (z - z.mean()) / z.std(ddof=1)  # exactly mean 0, sd 1
    samples = z + 3.5 / np.sqrt(400)    # mean 3.5 standard errors above 0
    point = at_least("point", float(samples.mean()), 0.0, basis="monte_carlo", samples=samples)
    alone = point.decide(0.999)
    split = tally("grid", {str(i): point for i in range(20)}, 1, relation="one").decide(0.999)
    assert alone.verdict == "holds"           # z = 3.5 > 3.3 (two-sided 99.9%)
    assert split.verdict == "inconclusive"    # each point at 1 - 0.001/20: z needs > 4.06
    assert split.basis == "monte_carlo"


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="no points"):
        tally("grid", {}, 1, relation="r")
    with pytest.raises(ValueError, match="needed must lie in"):
        tally("grid", {"a": exact("holds")}, 2, relation="r")
