"""Full mode: resumable validation (theorylab.journal), the plan (theorylab.plan), provenance and publishing
(theorylab.provenance), the quick-vs-full comparison and their command-line options."""

import argparse
import dataclasses
import json

import pytest

from theorylab import journal, plan, report
from theorylab.claims import Claim, Context, Evidence, evaluate, select
from theorylab.checks import equal
from theorylab.app.cli import main
from theorylab.app.options import duration


def _result(claim_id="synthetic.one", value=1.0):
    claim = Claim(claim_id, "test", "one is one", lambda ctx: Evidence([equal("1 == 1", value, 1.0, 0.0,
                                                                              basis="closed_form")]), kind="digest")
    return evaluate(claim, Context())


def test_the_journal_gives_back_what_this_mode_seed_and_code_computed(tmp_path, monkeypatch):
    path = tmp_path / "journal.jsonl"
    journal.start(path, resume=False)
    journal.append(path, _result("synthetic.one"), "full", 0, False)
    journal.append(path, _result("synthetic.two", 2.0), "full", 0, False)
    with open(path, "a") as f:
        f.write('{"mode": "full", "seed": 0, "anytime": false, "code": "')  # a line cut short by a crash
    found = journal.finished(path, "full", 0, False)
    assert set(found) == {"synthetic.one", "synthetic.two"}
    assert found["synthetic.two"].as_dict() == _result("synthetic.two", 2.0).as_dict() | {
        "seconds": found["synthetic.two"].seconds}
    assert journal.finished(path, "quick", 0, False) == {}
    assert journal.finished(path, "full", 1, False) == {}
    assert journal.finished(path, "full", 0, True) == {}
    monkeypatch.setattr(journal, "fingerprint", lambda: "other code")
    assert journal.finished(path, "full", 0, False) == {}
    journal.start(path, resume=False)
    assert path.read_text() == ""


def test_the_fingerprint_changes_with_the_code(tmp_path):
    for package in journal.SOURCES:
        (tmp_path / package / "sub").mkdir(parents=True)
        (tmp_path / package / "sub" / "m.py").write_text("x = 1\n")
    first = journal.fingerprint(tmp_path)
    assert len(first) == 16
    (tmp_path / "validations" / "sub" / "m.py").write_text("x = 2\n")
    assert journal.fingerprint(tmp_path) != first
    (tmp_path / "validations" / "sub" / "m.py").write_text("x = 1\n")
    (tmp_path / "figures" / "sub" / "m.py").rename(tmp_path / "figures" / "sub" / "n.py")  # same text, renamed
    assert journal.fingerprint(tmp_path) != first


def test_validate_resume_reuses_the_journal_and_computes_only_what_is_missing(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    args = ["validate", "performative.ps_closed_form", "--quick", "--out", str(out), "--no-cache", "--format", "json"]
    assert main(args) == 0
    lines = (out / "journal.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["result"]["id"] == "performative.ps_closed_form"
    first = json.loads((out / "claims.json").read_text())
    import theorylab.app.validate as cli_validate

    def refuse(*_):
        raise AssertionError("a journaled claim was evaluated again")

    monkeypatch.setattr(cli_validate, "evaluate", refuse)
    capsys.readouterr()
    assert main(args + ["--resume"]) == 0
    assert "resuming: 1 of 1 claims" in capsys.readouterr().err
    assert json.loads((out / "claims.json").read_text()) == first


def test_makespan_schedules_longest_first():
    assert plan.makespan([], 2) == 0.0
    assert plan.makespan([5, 4, 3, 3, 3], 2) == 10  # LPT: {5, 3, 3} / {4, 3}, within 4/3 of the optimum 9
    assert plan.makespan([3, 1], 4) == 3
    assert plan.makespan([2, 2, 2], 1) == 6


def test_the_plan_lists_costs_totals_and_absent_data(tmp_path, monkeypatch):
    claims = [c for c in select(["masfl"])][:3]
    table = {claims[0].id: plan.Cost(3600.0, "measured", ("fmnist",)), claims[1].id: plan.Cost(60.0, "measured")}
    monkeypatch.setattr(plan, "declared", lambda: table)
    text = plan.render(claims, 2, {"fmnist": False})
    assert f"{claims[0].id}" in text and "60 min" in text and "ABSENT: run `make data`" in text
    assert "3 claims, 61 min serial; about 60 min with --workers 2" in text
    assert f"1 claim(s) with no declared cost, not counted: {claims[2].id}" in text


def test_every_claim_declares_its_full_mode_cost():
    from theorylab.sources import papers

    shipped = [prefix for prefix, paper in papers().items() if paper.costs is not None]  # not claims tests register
    assert {"afga", "fedawe", "masfl", "performative", "thesis"} <= set(shipped)
    costs = plan.costs(select(shipped))
    missing = [claim_id for claim_id, cost in costs.items() if cost.seconds is None]
    assert missing == []
    assert all(cost.seconds >= 0 and cost.basis.startswith(("measured", "estimated: ")) for cost in costs.values())


def test_validate_plan_runs_nothing(tmp_path, capsys):
    assert main(["validate", "masfl", "--plan", "--out", str(tmp_path / "never")]) == 0
    assert "serial" in capsys.readouterr().out
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize("text, seconds", [("90", 90), ("90s", 90), ("30m", 1800), ("2h", 7200), ("1h30m", 5400)])
def test_durations_parse(text, seconds):
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "-5", "0", "2x", "h"])
def test_bad_durations_are_usage_errors(text):
    with pytest.raises(argparse.ArgumentTypeError):
        duration(text)


def test_quick_and_full_exclude_each_other(capsys):
    with pytest.raises(SystemExit):
        main(["validate", "--quick", "--full", "--plan"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_side_by_side_counts_verdicts_per_paper_and_lists_what_changed():
    quick = [_result("alpha.one"), _result("alpha.two"), _result("beta.one")]
    full = [_result("alpha.one"), _result("alpha.two", 2.0)]  # alpha.two is violated in full mode
    text = report.side_by_side(quick, full)
    assert "| alpha | 2 / 0 / 0 / 0 | 1 / 1 / 0 / 0 |" in text
    assert "| beta | 1 / 0 / 0 / 0 | 0 / 0 / 0 / 0 |" in text
    assert "| alpha.two | holds | VIOLATED | 1 == 1 |" in text
    assert "Not in the full run (1): beta.one." in text


def test_publish_merges_runs_with_their_provenance_and_keeps_no_images(tmp_path, capsys):
    outs = []
    for i, claim_id in enumerate(("performative.ps_closed_form", "performative.prop2_9")):
        outs.append(tmp_path / f"run{i}")
        assert main(["validate", claim_id, "--quick", "--out", str(outs[-1]), "--no-cache", "--format", "json"]) == 0
        stamp = json.loads((outs[-1] / "provenance.json").read_text())
        assert stamp["mode"] == "quick" and stamp["claims"] == 1 and stamp["machine"]["cores"] >= 1
        assert stamp["duration_s"] >= 0 and stamp["code"] == journal.fingerprint()
    dest = tmp_path / "reference"
    assert main(["publish", *map(str, outs), "--to", str(dest), "--quick-json", str(outs[0] / "claims.json")]) == 0
    merged = json.loads((dest / "claims.json").read_text())
    assert [d["id"] for d in merged] == ["performative.ps_closed_form", "performative.prop2_9"]
    summary = json.loads((dest / "provenance.json").read_text())
    assert summary["claims"] == 2 and [s["folder"] for s in summary["segments"]] == ["run0", "run1"]
    assert "![" not in (dest / "report.md").read_text()
    assert (dest / "errata.md").is_file()
    assert "Not in the full run" not in (dest / "quick_vs_full.md").read_text()


def test_record_writes_measured_costs_and_labels_estimates(tmp_path, monkeypatch):
    from theorylab.sources import Paper

    costs = tmp_path / "full_costs.json"
    costs.write_text(json.dumps({"claims": {"alpha.kept": {"seconds": 7.0, "basis": "measured",
                                                            "needs": ["fmnist"]}}}))
    monkeypatch.setattr(plan, "papers", lambda: {"alpha": Paper("alpha", "seed.txt", "Alpha", (), costs)})

    def timed(claim_id, seconds):
        return dataclasses.replace(_result(claim_id), seconds=seconds)

    full = [timed("alpha.one", 40.0), timed("alpha.two", 90.0), timed("alpha.kept", 9.0)]
    quick = [timed("alpha.one", 4.0), timed("alpha.two", 3.0), timed("alpha.new", 2.0), timed("alpha.kept", 1.0)]
    plan.record(full, "reference/x", "test machine", quick)
    written = json.loads(costs.read_text())
    assert written["machine"] == "test machine" and written["reference"] == "reference/x"
    entries = written["claims"]
    assert entries["alpha.one"] == {"seconds": 40.0, "basis": "measured"}
    assert entries["alpha.kept"] == {"seconds": 9.0, "basis": "measured", "needs": ["fmnist"]}
    # ratios full/quick: 10, 30, 9 -> median 10; the unmeasured claim is estimated at 2 s x 10
    assert entries["alpha.new"]["seconds"] == 20.0
    assert entries["alpha.new"]["basis"].startswith("estimated: quick-mode 2.0 s x 10")


def test_a_claim_whose_dataset_is_absent_says_how_to_fetch_it(tmp_path, monkeypatch, capsys):
    # full mode of the MasFL image claim reads Fashion-MNIST; an empty data folder (and no system package) fails at
    # once, before any training, with the command that fetches it
    import theorylab.testbeds.data.idx as idx

    monkeypatch.setenv("THEORYLAB_DATA", str(tmp_path / "empty"))
    monkeypatch.setattr(idx, "FMNIST_SYSTEM_DIR", tmp_path / "no-system-package")
    code = main(["validate", "masfl.image_ordering", "--full", "--no-cache", "--out", str(tmp_path / "out"),
                 "--format", "json"])
    err = capsys.readouterr().err
    assert code == 1
    assert "1 claim(s) need a dataset that is absent (masfl.image_ordering): run `make data`" in err


def test_publish_takes_the_journal_of_a_run_stopped_halfway(tmp_path):
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    journal.append(stopped / "journal.jsonl", _result("alpha.one"), "full", 0, False)
    journal.append(stopped / "journal.jsonl", _result("alpha.two", 2.0), "full", 0, False)
    dest = tmp_path / "reference"
    assert main(["publish", str(stopped), "--to", str(dest)]) == 0
    assert [d["id"] for d in json.loads((dest / "claims.json").read_text())] == ["alpha.one", "alpha.two"]
    segment = json.loads((dest / "provenance.json").read_text())["segments"][0]
    assert segment["partial"] and segment["claims"] == 2 and segment["mode"] == "full"
    with pytest.raises(ValueError, match="neither claims.json nor journal.jsonl"):
        from theorylab.provenance import publish
        publish([tmp_path / "nothing"], dest)
