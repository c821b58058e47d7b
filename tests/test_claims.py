import numpy as np
import pytest

from theorylab.checks import Check, across, at_least, at_most, auxiliary, definitional, equal, in_interval, ours, printed
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
    assert Evidence([ok, loose, tight]).headline is loose  # the statement is as informative as its loosest bound
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


def test_claim_tightness_is_its_loosest_statement_bound():
    checks = [at_most("loose", 1.0, 100.0, basis="closed_form"), at_most("tight", 2.0, 5.0, basis="closed_form"),
              equal("no bound", 1.0, 1.0, atol=0.0, basis="closed_form")]
    assert Evidence(checks).tightness == pytest.approx(100.0)
    assert Evidence(checks).label == "holds (vacuous x100)"
    assert Evidence([equal("no bound", 1.0, 1.0, atol=0.0, basis="closed_form")]).tightness is None
    result = evaluate(Claim("t.bounds", "test", "two bounds", lambda ctx: Evidence(checks)), Context())
    assert result.as_dict()["tightness"] == pytest.approx(100.0)
    assert evaluate(Claim("t.none", "test", "no evidence", lambda ctx: 1 / 0), Context()).as_dict()["tightness"] is None


def test_a_tight_auxiliary_bound_does_not_hide_a_vacuous_statement_bound():
    statement = at_most("(B.141)", 1.0, 790.0, basis="closed_form")
    helper = auxiliary(at_most("exact identity", 1.0, 1.04, basis="enumeration"))
    evidence = Evidence([helper, statement])
    assert evidence.label == "holds (vacuous x790)" and evidence.headline.name == "(B.141)"
    assert Evidence([helper]).label == "holds" and Evidence([helper]).tightness is None
    assert Evidence([auxiliary(at_most("b", 2.0, 1.0, basis="closed_form"))]).verdict == "violated"  # it still decides


def test_a_criterion_of_our_own_reads_not_tight_and_never_violated():
    slope = ours(at_least("log-slope >= half the bound's", 0.1, 0.5, basis="closed_form"), "a slope threshold")
    assert slope.verdict == "violated" and slope.role == "ours" and "OUR CRITERION" in slope.note
    paper = at_most("the paper's bound", 1.0, 3.0, basis="closed_form")
    assert Evidence([paper, slope]).verdict == "holds" and Evidence([paper, slope]).label == "holds (not tight)"
    assert Evidence([slope]).verdict == "inconclusive"  # nothing of the paper's decided
    with pytest.raises(ValueError, match="criterion"):
        ours(paper, " ")
    rng = np.random.default_rng(1)
    mc = ours(at_most("mc", 0.0, 0.5, basis="monte_carlo", samples=rng.normal(1.0, 0.1, 50)), "a factor")
    assert Evidence([mc]).checks[0].role == "ours"  # re-decided at the claim's level, still ours


def test_a_digest_number_accuses_only_a_claim_about_the_digest():
    digest = printed("tau_max at M_c = 50", 11.0, "10", basis="digest")
    assert digest.verdict == "violated" and digest.basis == "digest"
    assert Evidence([digest], kind="reproduction").verdict == "inconclusive"
    assert Evidence([digest], kind="digest").verdict == "violated"
    with pytest.raises(ValueError, match="paper or the digest"):
        printed("x", 1.0, "1", basis="closed_form")


def test_across_readings_violates_only_when_every_reading_does():
    bad = {"coefficient 2": at_most("(4.6) <= floor", 0.2, 0.083, basis="closed_form"),
           "coefficient 8": at_most("(4.6) <= floor", 0.3, 0.083, basis="closed_form")}
    assert across("(4.6)", bad).verdict == "violated"
    mixed = {**bad, "coefficient 8": at_most("(4.6) <= floor", 0.05, 0.083, basis="closed_form")}
    combined = across("(4.6)", mixed)
    assert combined.verdict == "inconclusive" and "DEPENDS ON THE READING" in combined.note
    assert [r["verdict"] for r in combined.readings.values()] == ["violated", "holds"]
    assert Evidence([combined]).label == "inconclusive (depends on the reading)"
    good = {k: at_most("b", 0.01, 0.083, basis="closed_form") for k in ("a", "b")}
    assert across("b", good).verdict == "holds" and across("b", good).tightness == pytest.approx(8.3)
    assert Evidence([across("b", good, what="choice")]).verdict == "holds"
    undecided = {"a": good["a"], "b": Check("b", 0.0, 0.0, "<=", "inconclusive", "closed_form")}
    assert "UNDECIDED" in across("b", undecided).note
    with pytest.raises(ValueError, match="no readings"):
        across("empty", {})


def test_across_redecides_monte_carlo_readings_at_the_claims_level():
    rng = np.random.default_rng(2)
    samples = {label: rng.normal(1.0, 1.0, 30) for label in ("R1", "R2")}
    combined = across("mean <= 0", {k: at_most("m", 0.0, 0.0, basis="monte_carlo", samples=v)
                                    for k, v in samples.items()})
    evidence = Evidence([combined, in_interval("other", rng.normal(0, 1, 50), 0.0)], level=0.99)
    decided = evidence.checks[0]
    assert decided.level == pytest.approx(1 - 0.01 / 2) and decided.basis == "monte_carlo"
    assert [r["level"] for r in decided.readings.values()] == pytest.approx([1 - 0.01 / 2] * 2)


def test_claims_validate_severity_and_code_location():
    with pytest.raises(ValueError, match="severity"):
        claim("t.sev", "src", "s", kind="statement", expect="violated", because="x", severity="huge")
    with pytest.raises(ValueError, match="repository file"):
        claim("t.code", "src", "s", kind="code")
    made = claim("t.quoted", "src", "s", kind="statement", quote="a  b\n c", where="§1")(lambda ctx: Evidence([]))
    assert made.quote == "a b c" and made.paper == "t"
