"""The errata report: a reviewed violation is an entry with quote, witness, readings, defence, severity and command;
an unexpected violation is flagged unreviewed, a reading-dependent verdict is a clarification, a digest number is
internal, and `theorylab errata` writes it from a run."""

import json

import pytest

from theorylab import errata
from theorylab.checks import across, at_most, printed
from theorylab.claims import Claim, Context, Evidence, evaluate
from theorylab.app.cli import main
from theorylab.html_report import load_results, render
from theorylab.registry import _REGISTRY, Entry


def _claim(id, check, kind="statement", expect="violated", **meta):
    fields = dict(because="the floor is crossed", quote="the error floor is 0.083", where="§4.3, eq. (4.6)",
                  defence="the theorem needs decreasing steps; the crossing is inside them", severity="constant")
    fields.update(meta)
    return Claim(id, "seed 001 §4.3", "(4.6) stays above the floor", lambda ctx: Evidence([check]), kind, expect,
                 **fields)


def _results():
    violated = at_most("(4.6) at t = 1e5 <= floor", 0.131, 0.083, basis="closed_form")
    readings = across("(4.6) <= floor", {"coefficient 2": at_most("x", 0.05, 0.083, basis="closed_form"),
                                         "coefficient 8": violated})
    claims = [_claim("zz.finding", across("(4.6) <= floor", {"coefficient 2": violated, "coefficient 8": violated})),
              _claim("zz.reading", readings, expect="inconclusive"),
              _claim("zz.surprise", violated, expect="holds", severity=""),
              _claim("zz.digest", printed("tau_max", 11.0, "10", basis="digest"), kind="digest", severity=""),
              _claim("zz.fine", at_most("ok", 0.01, 0.083, basis="closed_form"), expect="holds")]
    return [evaluate(c, Context()) for c in claims]


def test_an_entry_has_quote_witness_readings_defence_severity_and_command():
    results = _results()
    groups = errata.sections(results)["zz"]
    assert [d["id"] for d in groups["findings"]] == ["zz.finding"]
    assert [d["id"] for d in groups["clarifications"]] == ["zz.reading"]
    assert [d["id"] for d in groups["unreviewed"]] == ["zz.surprise"]
    assert [d["id"] for d in groups["digest"]] == ["zz.digest"]
    text = errata.markdown(results, {"zz": "A test paper"}, mode="quick", seed=0)
    entry = text[text.index("### 1. zz.finding"):text.index("#### Clarifications")]
    for part in ("— constant (statement)", "> the error floor is 0.083", "§4.3, eq. (4.6)",
                 "**Finding.** the floor is crossed", "**Witness.** (4.6) <= floor: measured 0.131, <= under every "
                 "reading 0.083 (closed_form)", "coefficient 2: violated", "coefficient 8: violated",
                 "**Defence.** the theorem needs decreasing steps", "`theorylab validate zz.finding --quick`"):
        assert part in entry, part
    assert "1 findings in 1 of 1 works; 1 verdicts depend on a reading; 1 unreviewed violations." in text


def test_errata_render_alike_from_claims_json(tmp_path):
    results = _results()
    path = tmp_path / "claims.json"
    path.write_text(json.dumps([r.as_dict() for r in results]))
    again = load_results(path)
    assert [r.as_dict() for r in again] == json.loads(path.read_text())
    assert errata.markdown(again, {}, "quick", 0).split("\n", 3)[3] == errata.markdown(results, {}, "quick", 0) \
        .split("\n", 3)[3]
    page = render(again, tmp_path, "quick", 0)
    assert 'id="errata"' in page and "the error floor is 0.083" in page and "unreviewed" in page.lower()


def test_errata_command_writes_the_report(tmp_path, capsys, monkeypatch):
    for r in _results():
        monkeypatch.setitem(_REGISTRY["claim"], r.claim.id, Entry(r.claim.id, r.claim, r.claim.statement))
    monkeypatch.setitem(_REGISTRY["paper"], "zz", Entry("zz", type("P", (), {"title": "A test paper"})(), ""))
    assert main(["errata", "zz", "--quick", "--out", str(tmp_path), "--no-cache"]) == 0
    text = (tmp_path / "errata.md").read_text()
    assert "## A test paper" in text and "### 1. zz.finding" in text
    assert main(["errata", "nopaper", "--out", str(tmp_path)]) == 2
    assert "unknown paper nopaper" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["statement", "scope"])
def test_a_holding_claim_is_never_an_entry(kind):
    fine = evaluate(_claim("zz.ok", at_most("ok", 0.01, 0.083, basis="closed_form"), kind=kind, expect="holds"),
                    Context())
    assert errata.sections([fine])["zz"]["findings"] == []


def test_a_full_mode_violation_is_a_finding_only_where_a_review_expected_it():
    violated = at_most("(4.6) at t = 1e5 <= floor", 0.131, 0.083, basis="closed_form")
    reviewed = evaluate(_claim("zz.reviewed", violated, expect="inconclusive", expect_full="violated",
                               severity="experiment"), Context())
    surprise = evaluate(_claim("zz.surprise", violated, expect="inconclusive", severity=""), Context())
    full = errata.sections([reviewed, surprise], "full")["zz"]
    quick = errata.sections([reviewed, surprise], "quick")["zz"]
    assert [d["id"] for d in full["findings"]] == ["zz.reviewed"] and [d["id"] for d in full["unreviewed"]] == [
        "zz.surprise"]
    assert quick["findings"] == [] and len(quick["unreviewed"]) == 2
    assert reviewed.as_dict()["expect_full"] == "violated" and surprise.as_dict()["expect_full"] == "inconclusive"
