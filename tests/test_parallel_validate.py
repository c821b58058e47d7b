"""`theorylab validate --workers 2` gives the JSON of a serial run, timings aside, and writes the same reports."""

import json

import pytest

from theorylab.app.cli import main

# fast claims: Monte Carlo over the seed's streams, exact enumeration, a violated one, one with a figure
CLAIMS = ["afga.appc_projection", "fedawe.lemma1", "fedawe.mixing", "thesis.ch4.lemma_a1", "thesis.ch4.unbiased",
          "thesis.ch5.equal_serving"]


def _validate(out, *extra) -> list[dict]:
    assert main(["validate", *CLAIMS, "--quick", "--no-cache", "--seed", "3", "--format", "json", "--out", str(out),
                 *extra]) == 0
    for name in ("report.md", "report.html"):
        assert (out / name).stat().st_size > 1_000
    claims = json.loads((out / "claims.json").read_text())
    for d in claims:
        assert d.pop("seconds") >= 0
    return claims


def test_parallel_validation_equals_the_serial_run(tmp_path, capsys):
    serial = _validate(tmp_path)
    figure = (tmp_path / "figures" / "fedawe-lemma1.png").read_bytes()
    (tmp_path / "figures" / "fedawe-lemma1.png").unlink()
    parallel = _validate(tmp_path, "--workers", "2")
    assert [d["id"] for d in parallel] == CLAIMS
    assert parallel == serial
    assert {d["verdict"] for d in serial} == {"holds", "violated"}
    assert any(c["basis"] == "monte_carlo" for d in serial for c in d["checks"])
    assert (tmp_path / "figures" / "fedawe-lemma1.png").stat().st_size == len(figure)  # drawn again by a worker


def test_workers_and_scheduler_are_exclusive(tmp_path, capsys):
    assert main(["validate", "fedawe.mixing", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1", "--out",
                 str(tmp_path)]) == 2
    assert "give one or the other" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["validate", "fedawe.mixing", "--workers", "0"])
