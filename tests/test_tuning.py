"""Selection by a named rule (theorylab/tuning.py) on hand-made traces, and the AFGA baseline table that uses it
(figures/afga_baselines.py) on a tiny grid."""

import dataclasses
import math

import numpy as np
import pytest

from theorylab.claims import Context
from theorylab.figures import afga_baselines, afga_images
from theorylab.trace import Trace
from theorylab.tuning import final_mean, select


def trace(*rows):
    values = np.array(rows, dtype=np.float64)
    return Trace({}, np.arange(values.shape[1]), {"acc": values}, np.full(len(rows), -1))


def test_final_mean_averages_the_last_window_over_every_run():
    score = final_mean("acc", 2)
    # runs (0.2 + 0.4) / 2 = 0.3, (0.6 + 0.8) / 2 = 0.7 and (1.0 + 1.0) / 2 = 1.0: mean 2.0 / 3
    assert score([trace([0.0, 0.2, 0.4], [0.0, 0.6, 0.8]), trace([0.0, 1.0, 1.0])]) == pytest.approx(2.0 / 3.0)
    assert math.isnan(score([trace([0.0, 0.5, np.inf])]))
    with pytest.raises(ValueError, match="window"):
        final_mean("acc", 0)


def test_select_never_picks_a_diverged_point_and_breaks_ties_by_order():
    grid = {0.1: [trace([0.5, 0.6])], 1.0: [trace([0.5, np.inf])], 10.0: [trace([0.2, 0.6])]}
    best = select(grid, final_mean("acc", 1), larger=True, rule="max")
    assert best.best == 0.1 and best.scores[1.0] == -math.inf  # inf accuracy of a diverged run cannot win
    loss = select({"a": [trace([3.0, 2.0])], "b": [trace([3.0, np.nan])], "c": [trace([1.0, 1.5])]},
                  final_mean("acc", 1), larger=False, rule="min")
    assert loss.best == "c" and loss.scores["b"] == math.inf
    # a score that is itself inf (a mean over a diverged run's metric) is worst in either direction too
    mean_last = lambda runs: float(np.mean([t.metrics["acc"][:, -1] for t in runs]))  # noqa: E731
    assert select(grid, mean_last, larger=True, rule="max").best == 0.1
    assert select({"x": [trace([np.inf])], "y": [trace([5.0])]}, mean_last, larger=False, rule="min").best == "y"
    with pytest.raises(ValueError, match="every grid point diverged"):
        select({"a": [trace([np.inf])]}, final_mean("acc", 1), larger=True, rule="max")
    with pytest.raises(ValueError, match="empty"):
        select({}, final_mean("acc", 1), larger=True, rule="max")


def test_the_protocols_grids():
    # App. B.2: 4 local x 7 global steps, and 4 eps for the adaptive methods; FedDyn has no global step; §6: 2 and 3
    assert len(afga_baselines.grid("FedAvg", "App. B.2")) == 28 and len(afga_baselines.grid("AFGA", "App. B.2")) == 112
    assert afga_baselines.grid("FedDyn", "App. B.2") == ((0.001, 1.0, 1e-8), (0.01, 1.0, 1e-8), (0.1, 1.0, 1e-8),
                                                         (1.0, 1.0, 1e-8))
    assert afga_baselines.grid("SCAFFOLD", "§6") == ((0.1, 1.0, 1e-8), (1.0, 1.0, 1e-8))
    assert afga_baselines.grid("FedAdam", "§6") == ((1.0, 0.01, 1e-8), (2.0, 0.01, 1e-8), (10.0, 0.01, 1e-8))


def test_baseline_table_tunes_on_held_out_runs_and_renders(monkeypatch, tmp_path):
    tiny = dataclasses.replace(afga_images.QUICK, rounds=2, every=1, window=1, replicas=2)
    small = {"tiny": (((0.1, 1.0, 1e-8), (1.0, 1.0, 1e-8)), ((0.1, 0.01, 1e-8), (1.0, 0.01, 1e-8)))}
    monkeypatch.setattr(afga_baselines, "QUICK", tiny)
    monkeypatch.setattr(afga_baselines, "READINGS", small)
    ctx = Context(quick=True, figure_dir=tmp_path)
    s = afga_images.tables_1_3_settings(tiny)["Setting 2"]
    calls, original = [], afga_baselines.runs
    monkeypatch.setattr(afga_baselines, "runs", lambda c, setup, *a: calls.append(setup.seeds) or original(c, setup, *a))
    found = afga_baselines.tuned(ctx, s, "tiny")
    assert list(found) == list(afga_baselines.TABLE1)
    # per method: its two grid points on the tuning seed, then its choice on the table's own seeds
    held_out = tuple(seed + afga_baselines.TUNING_SEED for seed in s.seeds)
    assert calls == [held_out, held_out, s.seeds] * len(found)
    assert found["FedDyn"][0] in ((0.1, 1.0, 1e-8), (1.0, 1.0, 1e-8))
    assert all(len(acc) == len(s.seeds) * s.replicas for _, acc in found.values())
    path = afga_baselines.render(ctx)
    assert path.exists() and path.stat().st_size > 10_000
