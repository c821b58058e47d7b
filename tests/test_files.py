"""Outputs are written atomically and never replaced by nothing; bad output folders and bad claims.json files are
clear errors naming the path (issue 24)."""

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theorylab.app.cli import main
from theorylab.files import output_dir, replacing, write_text


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = write_text(tmp_path / "report.md", "good")
    with pytest.raises(RuntimeError):
        with replacing(path) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert path.read_text() == "good" and sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_temporary_names_are_unique_per_call(tmp_path):
    with replacing(tmp_path / "f.png") as a, replacing(tmp_path / "f.png") as b:
        assert a != b and a.suffix == b.suffix == ".png" and a.name.startswith(".f.")
        a.write_text("a")
        b.write_text("b")
    assert (tmp_path / "f.png").read_text() == "a"  # the last to finish wins (a's block closes last)


def test_output_dir_refuses_a_file_and_an_unwritable_folder(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        output_dir(afile)


def test_output_dir_refuses_a_folder_it_cannot_create_or_write(tmp_path, monkeypatch):
    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    with monkeypatch.context() as m:  # as on a read-only file system, where even root is refused
        m.setattr("pathlib.Path.mkdir", refused)
        with pytest.raises(ValueError, match="--out .*out cannot be created: Permission denied"):
            output_dir(tmp_path / "out")
    with monkeypatch.context() as m:
        m.setattr(os, "access", lambda *a: False)
        with pytest.raises(ValueError, match="cannot be written"):
            output_dir(tmp_path)


@pytest.mark.parametrize("content, message", [
    ("{}", "holds no claims"), ("[]", "holds no claims"), ("[1, 2]", "entry 0 is a int"),
    ("[{}]", "entry 0 (no id) lacks id"), ('[{"id": "a"', "is not a claims.json"),
    ('[{"id": "x", "source": "s", "statement": "s", "kind": "statement", "expect": "holds", "error": null, '
     '"seconds": 1}]', "lacks checks"),
    ('[{"id": "x", "source": "s", "statement": "s", "kind": "statement", "expect": "holds", "error": null, '
     '"seconds": 1, "checks": [{"name": "c"}]}]', "a check of x is not valid"),
])
def test_report_refuses_a_bad_claims_json_and_keeps_the_page(tmp_path, capsys, content, message):
    (tmp_path / "report.html").write_text("the 167-claim report")
    (tmp_path / "claims.json").write_text(content)
    assert main(["report", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(tmp_path / "claims.json") in err, err
    assert (tmp_path / "report.html").read_text() == "the 167-claim report"


def test_out_that_is_a_file_is_a_usage_error_and_creates_nothing(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({"base": {"problem": {"name": "scalar_quadratic", "centers": [0.0, 1.0]},
                                         "participation": {"name": "bernoulli", "p": [0.5, 0.5]},
                                         "algorithm": {"name": "fedavg"}, "rounds": 2}}))
    for argv in (["validate", "fedawe.prop1", "--quick"], ["report"], ["errata", "fedawe"],
                 ["figure", "fedawe-fig2"], ["sweep", str(grid)]):
        assert main(argv + ["--out", str(afile)]) == 2, argv
        assert "is a file" in capsys.readouterr().err
    assert main(["validate", "no.such.claim", "--out", str(tmp_path / "fresh")]) == 2
    assert not (tmp_path / "fresh").exists()  # a usage error leaves no empty store behind


def test_two_validates_on_one_out_both_succeed(tmp_path):
    argv = [sys.executable, "-m", "theorylab.app.cli", "validate", "fedawe.prop1", "fedawe.lemma1", "--quick",
            "--no-cache", "--out", str(tmp_path)]
    procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    rows = json.loads((tmp_path / "claims.json").read_text())
    assert [r["id"] for r in rows] == ["fedawe.lemma1", "fedawe.prop1"]
    assert all(r["error"] is None for r in rows) and any(r["figure"] for r in rows)
    assert not [p for p in tmp_path.rglob(".*.tmp*")]


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                               max_size=4), max_leaves=12)
_FIELDS = ["id", "source", "statement", "kind", "expect", "checks", "error", "seconds", "figure", "level"]


@settings(max_examples=60)
@given(st.one_of(_JSON, st.lists(st.dictionaries(st.sampled_from(_FIELDS), _JSON), min_size=1, max_size=2)))
def test_report_answers_any_claims_json_with_a_page_or_a_named_error(tmp_path_factory, content):
    """Fuzzed claims.json files (issue 24): a page or exit 2 naming the file, never a traceback."""
    out = tmp_path_factory.mktemp("fuzz")
    (out / "claims.json").write_text(json.dumps(content))
    try:
        code = main(["report", "--out", str(out)])
    except SystemExit as exit_:  # argparse never sees this file; nothing else may exit
        raise AssertionError(f"report exited with {exit_.code}") from None
    assert code in (0, 2)
    assert code == 0 or not (out / "report.html").exists()
