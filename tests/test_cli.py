import json

from theorylab.claims import Claim, Evidence
from theorylab.app.cli import main
from theorylab.registry import _REGISTRY, Entry


def register_temporarily(monkeypatch, c: Claim) -> None:
    """Add a claim to the registry for one test only (later runs of "all claims" never see it)."""
    monkeypatch.setitem(_REGISTRY["claim"], c.id, Entry(c.id, c, c.statement))


def test_validate_json_lists_claims_with_verdicts(tmp_path, capsys):
    assert main(["validate", "fedawe.prop1", "thesis.thm2_3_4", "--quick", "--format", "json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in out] == ["fedawe.prop1", "thesis.thm2_3_4"]
    for d in out:
        assert {"id", "source", "verdict", "measured", "theory"} <= set(d) and d["verdict"] == "holds"
    assert (tmp_path / "report.md").read_text().startswith("# theorylab validation report")
    assert json.loads((tmp_path / "claims.json").read_text())[0]["id"] == "fedawe.prop1"


def test_validate_exits_nonzero_when_a_claim_errors(tmp_path, capsys, monkeypatch):
    def broken(ctx):
        raise RuntimeError("bug in a claim")

    register_temporarily(monkeypatch, Claim("zz_test.broken", "test", "always raises", broken))
    assert main(["validate", "zz_test", "--quick", "--out", str(tmp_path)]) == 1
    assert "bug in a claim" in capsys.readouterr().err


def test_violated_claim_does_not_fail_the_command(tmp_path, monkeypatch):
    from theorylab.checks import Check

    register_temporarily(monkeypatch, Claim("zz_test.violated", "test", "a wrong paper statement",
                                            lambda ctx: Evidence([Check("c", 1, 0, "==", "violated", "paper")])))
    assert main(["validate", "zz_test.violated", "--quick", "--out", str(tmp_path)]) == 0


def test_check_expected_fails_on_a_verdict_or_figure_that_is_not_the_reviewed_one(tmp_path, capsys, monkeypatch):
    from theorylab.checks import Check

    def evidence(verdict, figure=None):
        return lambda ctx: Evidence([Check("c", 1, 0, "==", verdict, "paper")], figure=figure)

    drawn = tmp_path / "drawn.png"
    drawn.write_bytes(b"png")
    register_temporarily(monkeypatch, Claim("zz_test.reviewed", "test", "violated as reviewed", evidence("violated"),
                                            expect="violated", because="reviewed"))
    register_temporarily(monkeypatch, Claim("zz_test.drawn", "test", "holds, figure written",
                                            evidence("holds", str(drawn))))
    assert main(["validate", "zz_test", "--quick", "--check-expected", "--out", str(tmp_path)]) == 0
    register_temporarily(monkeypatch, Claim("zz_test.changed", "test", "was reviewed to hold", evidence("violated")))
    register_temporarily(monkeypatch, Claim("zz_test.lost", "test", "names a figure it did not write",
                                            evidence("holds", str(tmp_path / "never.png"))))
    assert main(["validate", "zz_test", "--quick", "--out", str(tmp_path)]) == 0  # without the flag: only errors fail
    assert main(["validate", "zz_test", "--quick", "--check-expected", "--out", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert "zz_test.changed: violated, reviewed holds" in err and "never.png was not written" in err
    assert "zz_test.reviewed" not in err and "zz_test.drawn" not in err


def test_unknown_claim_is_a_usage_error(tmp_path, capsys):
    assert main(["validate", "no.such.claim", "--out", str(tmp_path)]) == 2
    assert "no claim matches" in capsys.readouterr().err


def test_list_and_figure(tmp_path, capsys):
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    for word in ("claims:", "fedawe.prop1", "algorithms:", "fedavg", "bernoulli", "markov", "random_quadratic"):
        assert word in listing
    assert main(["figure", "thesis-eq4-3", "--out", str(tmp_path), "--no-cache"]) == 0  # a cheap exact figure
    assert (tmp_path / "thesis-eq4-3.png").stat().st_size > 10_000


def test_summaries_have_a_tightness_column(tmp_path):
    from theorylab.checks import at_most, equal
    from theorylab.claims import Context, evaluate
    from theorylab.report import markdown, table

    bound = evaluate(Claim("t.bound", "test", "a bound", lambda ctx: Evidence([at_most("b", 2.0, 5.0, basis="closed_form")])), Context())
    plain = evaluate(Claim("t.plain", "test", "no bound", lambda ctx: Evidence([equal("e", 1, 1, 0.0, basis="closed_form")])), Context())
    rows = table([bound, plain]).splitlines()
    start = rows[0].index("tightness")
    cell = lambda row: row[start:start + len("tightness")].strip()  # noqa: E731
    assert cell(rows[2]) == "2.5" and cell(rows[3]) == ""
    summary = markdown([bound, plain], "quick", 0, tmp_path).splitlines()
    header = next(i for i, line in enumerate(summary) if line.startswith("| claim |"))
    col = summary[header].split(" | ").index("tightness")
    assert summary[header + 2].split(" | ")[col] == "2.5" and summary[header + 3].split(" | ")[col] == ""
