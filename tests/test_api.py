"""The notebook API (issue 27, item 3): ``theorylab.validate / run / figure`` return objects that display themselves
(``_repr_html_``, escaped), traces and results convert to pandas DataFrames, and a sweep's table is also Parquet."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import theorylab
from theorylab import grid, sweep
from theorylab.api import Results
from theorylab.checks import at_most, equal
from theorylab.claims import Claim, Context, Evidence, evaluate
from theorylab.app.cli import main
from theorylab.config import RunConfig
from helpers import tiny_figure
from theorylab.runner import run
from theorylab.store import Store

TINY = dict(problem={"name": "random_quadratic", "n_clients": 6, "dim": 4, "sigma": 0.3, "seed": 2},
            participation={"name": "bernoulli", "p": [0.9, 0.2, 0.5, 0.7, 0.4, 0.6], "dynamics": "sine"},
            algorithm={"name": "fedavg", "local_steps": 2, "lr": 0.1}, rounds=30, replicas=5, every=10, seed=3)


def test_import_stays_light_and_the_api_loads_on_first_use():
    code = ("import sys, theorylab\n"
            "assert not {'theorylab.api', 'theorylab.runner', 'pandas', 'torch'} & set(sys.modules), sys.modules\n"
            "assert callable(theorylab.validate) and callable(theorylab.run) and callable(theorylab.figure)\n"
            "assert 'theorylab.api' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError, match="no attribute 'valdiate'"):
        theorylab.valdiate


def test_validate_an_exact_claim_and_show_its_checks():
    results = theorylab.validate("performative.ps_closed_form", quick=True, store=None)
    assert isinstance(results, Results) and [r.claim.id for r in results] == ["performative.ps_closed_form"]
    result = results[0]
    assert result.verdict == "holds"
    checks = result.evidence.checks
    page = results._repr_html_()
    assert 'class="verdict-holds">holds<' in page and "CI / tolerance" in page
    assert result.evidence.headline.name in page and "1e-10" in page  # the deciding check and its tolerance
    shown = result._repr_html_()
    for c in checks:
        assert f"<td>{c.name}</td><td>{c.basis}</td>" in shown
    assert {"definitional", "independent"} <= {c.basis for c in checks}
    assert "performative.ps_closed_form  statement  holds" in repr(results)  # the terminal table

    frame = results.to_frame()
    assert len(frame) == len(checks) and set(frame["claim"]) == {"performative.ps_closed_form"}
    assert list(frame["check"]) == [c.name for c in checks] and list(frame["basis"]) == [c.basis for c in checks]
    np.testing.assert_array_equal(frame["measured"], [c.measured for c in checks])


def test_unknown_ids_and_names_are_value_errors():
    with pytest.raises(ValueError, match=r"no claim matches \['performative.no_such'\]"):
        theorylab.validate("performative.no_such")
    with pytest.raises(ValueError, match="unknown figure 'no-such-figure'; known: .*performative-ps-vs-po"):
        theorylab.figure("no-such-figure")
    with pytest.raises(ValueError, match=r"unknown run field\(s\) \['round'\]"):
        theorylab.run({**TINY, "round": 5})


def _shown(tmp_path):
    """Three results: a hold with a figure and markup in its statement and notes, a Monte Carlo check with an
    interval, and one whose code raises."""
    figure = tiny_figure(tmp_path / "figures" / "x-one.png")
    samples = np.random.default_rng(0).normal(0.0, 1.0, 20)
    checks = {
        "x.one": lambda ctx: Evidence([equal("a < b & c", 1.0, 1.0, 1e-9, basis="closed_form")], figure,
                                      notes=["a <note>"]),
        "x.two": lambda ctx: Evidence([at_most("noise mean <= 1", samples.mean(), 1.0, basis="monte_carlo",
                                               samples=samples)]),
        "x.three": lambda ctx: 1 / 0,
    }
    claims = [Claim(i, f"source of {i}", f"statement <b>{i}</b> with x < y", fn) for i, fn in checks.items()]
    return Results(evaluate(c, Context(figure_dir=tmp_path / "figures")) for c in claims)


def test_displays_are_escaped_and_embed_the_figure(tmp_path):
    results = _shown(tmp_path)
    one = results[0]._repr_html_()
    assert "statement &lt;b&gt;x.one&lt;/b&gt; with x &lt; y" in one and "<b>x.one</b>" not in one
    assert "a &lt; b &amp; c" in one and "a &lt;note&gt;" in one
    assert one.count("data:image/png;base64,") == 1 and "closed_form" in one
    page = results._repr_html_()
    assert page.count("<details>") == 3 and "ZeroDivisionError" in page and "<b>x.two</b>" not in page
    interval = results[1].evidence.checks[0].ci
    assert f"[{interval[0]:.4g}, {interval[1]:.4g}]" in page  # the Monte Carlo check's interval in the summary row

    frame = results.to_frame()
    assert list(frame["claim"]) == ["x.one", "x.two", "x.three"]
    assert frame.loc[1, "ci_low"] == interval[0] and frame.loc[1, "ci_high"] == interval[1]
    assert frame.loc[2, "verdict"] == "error" and "ZeroDivisionError" in frame.loc[2, "error"]


def test_run_returns_a_trace_whose_frame_holds_its_arrays():
    trace = theorylab.run(TINY)
    assert trace.config == theorylab.run(RunConfig(**TINY)).config
    frame = trace.to_frame()
    assert list(frame.columns) == ["replica", "round", "metric", "value"]
    assert len(frame) == trace.replicas * len(trace.rounds) * len(trace.metrics)
    for name, values in trace.metrics.items():
        wide = frame[frame["metric"] == name].pivot(index="replica", columns="round", values="value")
        assert list(wide.columns) == list(trace.rounds)
        np.testing.assert_array_equal(wide.to_numpy(), values)
    page = trace._repr_html_()
    assert "<code>fedavg</code>" in page and "replicas=5" in page
    mean = trace.metrics["server.dist2"][:, -1].mean()
    assert f"<td>server.dist2</td><td>{mean:.4g}</td>" in page


def test_figure_renders_a_registered_figure(tmp_path):
    shown = theorylab.figure("performative-ps-vs-po", quick=True, out=tmp_path)
    assert shown.path == tmp_path / "performative-ps-vs-po.png"
    assert shown._repr_png_().startswith(b"\x89PNG")
    assert shown._repr_html_().startswith('<figure><img alt="performative-ps-vs-po" src="data:image/png;base64,')


def test_a_sweep_writes_its_table_as_parquet_equal_to_the_csv(tmp_path, capsys):
    spec = {"base": {**TINY, "rounds": 20}, "product": {"seed": [0, 1], "algorithm.name": ["fedavg", "fedawe"]}}
    (tmp_path / "g.json").write_text(json.dumps(spec))
    store, metrics = Store(tmp_path / "store.sqlite"), 0
    for cell in grid.expand(grid.parse(spec)):  # every cell stored: the sweep needs no cluster
        trace = run(cell.config)
        store.put(cell.config.key(), trace)
        metrics += len(trace.metrics)
    out = tmp_path / "out"
    assert main(["sweep", str(tmp_path / "g.json"), "--out", str(out), "--store", str(store.path)]) == 0
    assert f"(and {out / 'g.parquet'})" in capsys.readouterr().out
    table, parquet = pd.read_csv(out / "g.csv"), pd.read_parquet(out / "g.parquet")
    assert len(table) == metrics and set(table["algorithm.name"]) == {"fedavg", "fedawe"}
    pd.testing.assert_frame_equal(parquet, table, check_dtype=False)

    mixed = [{"algorithm.lr": 0.1, "mean": 1.0}, {"algorithm.lr": "auto", "mean": 2.0}]  # stored as text, as in CSV
    back = pd.read_parquet(sweep.write_parquet(mixed, tmp_path / "mixed.parquet"))
    assert list(back["algorithm.lr"]) == ["0.1", "auto"] and list(back["mean"]) == [1.0, 2.0]
