import numpy as np
import pytest

from theorylab.checks import Check, at_most, equal, in_interval
from theorylab.claims import Claim, Context, Evidence, evaluate, select


def test_equal_and_interval_checks():
    assert equal("x", 1.0, 1.0 + 1e-12, atol=1e-9).verdict == "holds"
    assert equal("x", 1.0, 1.1, atol=1e-9).verdict == "violated"
    samples = np.random.default_rng(0).normal(0.3, 1.0, size=4000)
    assert in_interval("m", samples, 0.3).verdict == "holds"
    assert in_interval("m", samples, 0.6).verdict == "violated"


def test_inequality_check_with_and_without_interval():
    c = at_most("b", 2.0, 10.0)
    assert c.verdict == "holds" and c.tightness == pytest.approx(5.0)
    assert at_most("b", 11.0, 10.0).verdict == "violated"
    assert at_most("b", 9.0, 10.0, ci=(8.0, 10.5)).verdict == "inconclusive"
    assert at_most("b", 11.0, 10.0, ci=(10.2, 11.8)).verdict == "violated"


def test_evidence_verdict_is_the_worst_check():
    ok, unsure, bad = (Check("c", 0, 0, "==", v) for v in ("holds", "inconclusive", "violated"))
    assert Evidence([ok, ok]).verdict == "holds"
    assert Evidence([ok, unsure]).verdict == "inconclusive"
    assert Evidence([unsure, bad, ok]).verdict == "violated"
    assert Evidence([]).verdict == "inconclusive"


def test_a_raising_check_is_reported_as_error():
    def boom(ctx):
        raise RuntimeError("kaboom")

    result = evaluate(Claim("t.boom", "test", "raises", boom), Context())
    assert result.verdict == "error" and "kaboom" in result.error
    assert result.as_dict()["verdict"] == "error"


def test_selection_by_prefix():
    ids = [c.id for c in select(["fedawe"])]
    assert "fedawe.prop1" in ids and all(i.startswith("fedawe.") for i in ids)
    assert [c.id for c in select(["fedawe.prop1"])] == ["fedawe.prop1"]
    with pytest.raises(ValueError, match="no claim matches"):
        select(["nonexistent"])


def test_claim_tightness_is_the_worst_bound_ratio():
    checks = [at_most("loose", 1.0, 100.0), at_most("tight", 2.0, 5.0), equal("no bound", 1.0, 1.0, atol=0.0)]
    assert Evidence(checks).tightness == pytest.approx(2.5)
    assert Evidence([equal("no bound", 1.0, 1.0, atol=0.0)]).tightness is None
    result = evaluate(Claim("t.bounds", "test", "two bounds", lambda ctx: Evidence(checks)), Context())
    assert result.as_dict()["tightness"] == pytest.approx(2.5)
    assert evaluate(Claim("t.none", "test", "no evidence", lambda ctx: 1 / 0), Context()).as_dict()["tightness"] is None
