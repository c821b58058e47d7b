import numpy as np
import pytest

from theorylab.checks import Check, at_most, definitional, equal, in_interval
from theorylab.claims import Claim, Context, Evidence, claim, evaluate, select


def _check(verdict, basis="closed_form", tightness=None, name="c"):
    return Check(name, 0.0, 0.0, "==", verdict, basis, tightness=tightness)


def test_evidence_verdict_is_the_worst_deciding_check():
    ok, unsure, bad = (_check(v) for v in ("holds", "inconclusive", "violated"))
    assert Evidence([ok, ok]).verdict == "holds"
    assert Evidence([ok, unsure]).verdict == "inconclusive"
    assert Evidence([unsure, bad, ok]).verdict == "violated"
    assert Evidence([]).verdict == "inconclusive"


def test_definitional_checks_are_shown_but_never_decide():
    typo_guard = definitional("same formula twice", 1.0, 2.0, atol=0.0)  # violated, yet it cannot decide
    assert typo_guard.verdict == "violated"
    assert Evidence([typo_guard, _check("holds")]).verdict == "holds"
    assert Evidence([definitional("d", 1.0, 1.0, 0.0)]).verdict == "inconclusive"  # nothing decides


def test_headline_is_the_deciding_check():
    ok, loose, tight = _check("holds", name="ok"), _check("holds", tightness=50.0), _check("holds", tightness=2.0)
    unsure, bad = _check("inconclusive", name="unsure"), _check("violated", name="bad")
    assert Evidence([ok, unsure, bad]).headline is bad
    assert Evidence([ok, unsure]).headline is unsure
    assert Evidence([ok, loose, tight]).headline is tight
    assert Evidence([definitional("d", 1.0, 1.0, 0.0), ok]).headline is ok
    result = evaluate(Claim("t.head", "test", "s", lambda ctx: Evidence([ok, bad])), Context()).as_dict()
    assert result["headline"] == "bad" and result["verdict"] == "violated" and result["basis"] == "closed_form"


def test_a_hold_far_from_its_bound_is_labelled_vacuous():
    assert Evidence([at_most("b", 1.0, 1780.0, basis="closed_form")]).label == "holds (vacuous x1.78e+03)"
    assert Evidence([at_most("b", 1.0, 9.0, basis="closed_form")]).label == "holds"
    assert Evidence([at_most("b", 11.0, 10.0, basis="closed_form")]).label == "violated"


def test_monte_carlo_checks_share_the_claims_family_level():
    rng = np.random.default_rng(0)
    checks = [in_interval(f"m{i}", rng.normal(0, 1, 200), 0.0) for i in range(4)]
    evidence = Evidence(checks + [equal("exact", 1.0, 1.0, 0.0, basis="closed_form")], level=0.99)
    assert [c.level for c in evidence.checks] == pytest.approx([1 - 0.01 / 4] * 4 + [None])
    alone = Evidence([in_interval("m", rng.normal(0, 1, 200), 0.0)])
    assert alone.checks[0].level == pytest.approx(0.999)


def test_claims_declare_kind_and_a_reason_for_any_expected_verdict_but_holds():
    with pytest.raises(ValueError, match="kind"):
        claim("t.kind", "src", "s", kind="lemma")
    with pytest.raises(ValueError, match="because"):
        claim("t.why", "src", "s", kind="statement", expect="violated")
    with pytest.raises(ValueError, match="expect"):
        claim("t.expect", "src", "s", kind="statement", expect="maybe", because="x")


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
    checks = [at_most("loose", 1.0, 100.0, basis="closed_form"), at_most("tight", 2.0, 5.0, basis="closed_form"),
              equal("no bound", 1.0, 1.0, atol=0.0, basis="closed_form")]
    assert Evidence(checks).tightness == pytest.approx(2.5)
    assert Evidence([equal("no bound", 1.0, 1.0, atol=0.0, basis="closed_form")]).tightness is None
    result = evaluate(Claim("t.bounds", "test", "two bounds", lambda ctx: Evidence(checks)), Context())
    assert result.as_dict()["tightness"] == pytest.approx(2.5)
    assert evaluate(Claim("t.none", "test", "no evidence", lambda ctx: 1 / 0), Context()).as_dict()["tightness"] is None
