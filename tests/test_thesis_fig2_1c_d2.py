"""Thesis Fig. 2.1c stand-in (Fig. 2.1a's runs on Fashion-MNIST) and Table D.2 analogue (Fed-CIS on 17 nodes): the
runs are what the recipes say they are, checked by independent routes, and both recipes draw on tiny settings."""

import dataclasses
import types

import numpy as np
import pytest

from theorylab.cis.rates import SEVEN_NODE, SEVENTEEN_NODE, split_topology_rates
from theorylab.claims import Context
from theorylab.figures import thesis_ch5_runs, thesis_fig2_1, thesis_fig2_1c, thesis_table_d2, thesis_tables5
from theorylab.registry import build
from theorylab.testbeds.early_exit import PARTITIONS, layer_sizes

FIG_2_1 = ("CA-Fed", "AdaFed", "Unbiased", "More available", "F3AST")  # the legend of thesis Fig. 2.1


def test_fig2_1c_runs_are_fig2_1a_runs_with_only_the_testbed_changed():
    """Every config the recipe runs equals Fig. 2.1a's (LEAF path, running-minimum mode) except the testbed, the
    replicas, float32, CA-Fed's added loss noise (a network's losses are minibatch estimates) and q = alpha/pi, whose
    alpha is recomputed here from the partition sizes, |D_i| / |D|."""
    ctx, seen = Context(quick=True, seed=3), []

    def record(config):
        seen.append(config)
        return types.SimpleNamespace(rounds=np.arange(2), metrics={"server.test_acc": np.zeros((3, 2))})

    thesis_fig2_1c.compute(ctx, record)
    n, rounds = thesis_fig2_1.clients(ctx), thesis_fig2_1.horizon(ctx)
    leaf = thesis_fig2_1.methods(thesis_fig2_1.leaf_problem(n), rounds, others=FIG_2_1[1:],
                                 mode=thesis_fig2_1.RUNNING_MIN)
    assert list(leaf) == list(FIG_2_1) and len(seen) == 5 and (n, rounds) == (20, 100)
    network = build("testbed", seen[0].problem)
    alpha = network.sizes / network.sizes.sum()
    for label, got in zip(FIG_2_1, seen):
        expected = thesis_fig2_1.leaf_config(ctx, leaf[label], rounds)
        assert dataclasses.replace(got, problem=expected.problem, replicas=expected.replicas, dtype=expected.dtype,
                                   algorithm=expected.algorithm) == expected
        assert (got.problem["name"], got.problem["model"], got.problem["clients"]) == ("digits", "mlp", n)  # quick: no download
        assert (got.replicas, got.dtype, got.device) == (3, "float32", "cpu")
        drop = ("q", "loss_noise")
        assert {k: v for k, v in got.algorithm.items() if k not in drop} == \
            {k: v for k, v in leaf[label].items() if k not in drop}
        if "q" in leaf[label]:
            pi = np.asarray(got.participation["pi"])
            q = alpha / pi * (pi > 0.5 if label == "More available" else 1.0)
            assert np.allclose(got.algorithm["q"], q, rtol=1e-6, atol=0)
    assert seen[0].algorithm["f_star"] == "running_min" and "loss_noise" not in seen[0].algorithm
    assert not np.allclose(seen[1].algorithm["q"], leaf["AdaFed"]["q"])  # the weights really are the network's


def test_fig2_1c_renders_on_a_tiny_setting(tmp_path):
    ctx = Context(quick=True, seed=0)
    data = thesis_fig2_1c.compute(ctx, lambda c: ctx.run(dataclasses.replace(c, rounds=4, every=2, replicas=2)))
    assert list(data) == ["rounds", *FIG_2_1] and data["rounds"].tolist() == [0, 2, 4]
    curves = np.stack([data[label] for label in FIG_2_1])  # (methods, replicas, evals)
    assert curves.shape == (5, 2, 3) and np.all((curves >= 0) & (curves <= 100))
    assert np.all(curves[:, :, 0] == curves[0, :, 0])  # every method starts from the same model
    assert np.all(curves[:, :, -1].mean(1) > curves[:, :, 0].mean(1) + 10)  # and trains: 4 rounds gain 10 points
    path = thesis_fig2_1.draw(data, tmp_path / "c.png", "t", "test accuracy (%) of the server model")
    assert path.exists() and path.stat().st_size > 10_000


def test_table_d2_cells_are_the_tables5_runs_on_17_and_7_nodes():
    """17 nodes: the run function called directly with the 17-node system; 7 nodes: the Table 5.1 analogue's own
    cells at 60-30-10 and 10-30-60; the 17-node system realises the splits and spreads the 150 samples per layer."""
    ctx, replicas = Context(quick=True, seed=2), 3
    seventeen, seven = thesis_table_d2.compute(ctx, replicas).values()
    for row in thesis_table_d2.PRINTED_D2:
        direct = [100 * thesis_ch5_runs.fedcis_errors(ctx, split, "equal", 0.0, row, replicas, SEVENTEEN_NODE).mean()
                  for split in ((60, 30, 10), (10, 30, 60))]
        assert seventeen[row] == pytest.approx(direct, rel=1e-12)
    table51 = thesis_tables5.compute(ctx, replicas)["equal"]
    assert seven == {row: [values[1], values[5]] for row, values in table51.items()}
    assert all(not np.allclose(seventeen[row], seven[row]) for row in seven)  # the topology is really changed
    printed = thesis_table_d2.SYSTEMS["7 nodes (4/2/1), Table 5.1"][1]
    assert printed["Equal Weight"] == (60.6, 83.8) and printed["FLOPS Prop"] == (47.3, 83.2)  # digest Table 5.1
    for split in thesis_table_d2.SPLITS:
        assert np.allclose(split_topology_rates(split, SEVENTEEN_NODE).exit_rates, np.array(split) / 100)
    assert layer_sizes(SEVENTEEN_NODE[1], PARTITIONS["equal"], thesis_ch5_runs.TOTAL).tolist() == \
        [4] * 12 + [12] * 4 + [50]
    assert len(SEVENTEEN_NODE[0]) == 17 and len(SEVEN_NODE[0]) == 7


def test_table_d2_renders_on_a_tiny_setting(tmp_path):
    data = thesis_table_d2.compute(Context(quick=True, seed=0), replicas=2)
    assert [len(rows) for rows in data.values()] == [4, 4]
    assert all(len(v) == 2 and all(np.isfinite(v)) and min(v) > 0 for rows in data.values() for v in rows.values())
    path = thesis_table_d2.draw(data, tmp_path / "d2.png", 2)
    assert path.exists() and path.stat().st_size > 10_000
