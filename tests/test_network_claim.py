"""Machinery of the Table 2 ordering claim and of `theorylab train`, on tiny synthetic data."""

import dataclasses
import json
import sqlite3

import numpy as np
import pytest

from theorylab.figures import fedawe_cnn_curves
from theorylab.figures.learning_curves import mean_and_std
from theorylab.testbeds.network import fedawe_participation
import torch

from theorylab.testbeds.training import choose_point, exposed_points, final_accuracy, paper_lr0
from theorylab.claims import Context
from theorylab.app.cli import main
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.store import Store
from theorylab.validations.fedawe import table2

TINY = {"name": "synthetic", "model": "mlp", "input_shape": [1, 8, 8], "clients": 6, "alpha": 0.5, "batch_size": 8,
        "eval_train": None, "data": {"train_size": 120, "test_size": 40, "channels": 1, "size": 8, "noise": 40.0}}


def test_dynamics_left_out_are_deviations():
    assert table2.left_out(fedawe_cnn_curves.QUICK) == [
        "Dynamics left out for time: staircase. 'Every dynamics' in the statement is tested on stationary, sine, "
        "interleaved_sine only."]
    every = dataclasses.replace(fedawe_cnn_curves.QUICK, dynamics=tuple(table2.PAPER))
    assert table2.left_out(every) == []


def test_compare_runs_every_cell_and_draws_curves(tmp_path):
    setup = dataclasses.replace(fedawe_cnn_curves.QUICK, problem=TINY, dynamics=("stationary", "sine"), rounds=4,
                                every=2, window=2, local_steps=2, replicas=2)
    ctx = Context(quick=True, figure_dir=tmp_path)
    result = fedawe_cnn_curves.compare(ctx, setup, fedawe_cnn_curves.ALGORITHMS[1:])
    assert set(result["traces"]) == {(d, a) for d in ("stationary", "sine") for a in ("FedAvg over active",
                                                                                      "FedAvg over all")}
    trace = result["traces"][("sine", "FedAvg over all")][0]
    assert trace.metrics["server.test_acc"].shape == (2, 3)
    assert trace.config["participation"]["dynamics"] == "sine"
    assert final_accuracy(trace, "server", 2).shape == (2,)
    assert fedawe_cnn_curves.draw_curves(ctx, result).stat().st_size > 10_000


def test_curve_band_is_the_sample_std():
    values = np.array([[1.0, 2.0], [3.0, 6.0]])  # two runs, two rounds
    mean, std = mean_and_std(values)
    assert np.allclose(mean, [2, 4]) and np.allclose(std, [np.sqrt(2), np.sqrt(8)])  # sum of squares / (n - 1)
    assert np.array_equal(mean_and_std(values[:1])[1], [0, 0])


def test_points_and_step_sizes_per_algorithm():
    fedawe, fedavg = {"name": "fedawe"}, {"name": "fedavg", "aggregation": "all"}
    assert choose_point(fedawe, 6) == "mean" and choose_point(fedavg, 6) == "server"
    assert choose_point(fedawe, 6, "server") == "server"
    with pytest.raises(ValueError, match="no evaluation point 'mean'; its points are server"):
        choose_point(fedavg, 6, "mean")
    # the stand-in problem gives the points a kernel exposes on a real network problem
    problem = build("testbed", {**TINY, "seed": 0}, device="cpu", dtype=torch.float32)
    for spec in (fedawe, fedavg, {"name": "fedawe", "client_points": True}):
        kernel = build("algorithm", spec)
        real = kernel.points(kernel.init(problem, problem.initial_point(1, Streams(0, 1))))
        assert exposed_points(spec, 6) == sorted(real)
    # FedAWE Table 7 (digest 000 §6.1); an ablation the table does not list has no paper value
    assert [paper_lr0(spec) for spec in (fedawe, fedavg, {"name": "fedavg", "aggregation": "known_p"},
                                         {"name": "mifa"})] == [0.1, 0.05, 0.1, 0.05]
    assert paper_lr0({"name": "fedawe", "echo": False}) is None


def test_availability_follows_the_partition_labels():
    spec = {**TINY, "seed": 3}
    participation = fedawe_participation(spec, "interleaved_sine", gamma=0.2)
    assert participation["name"] == "bernoulli" and participation["dynamics"] == "interleaved_sine"
    assert len(participation["p"]) == 6 and all(0 <= p <= 1 for p in participation["p"])
    assert participation["gamma"] == 0.2
    with pytest.raises(ValueError, match="image testbed"):
        fedawe_participation({"name": "quadratic"})


TRAIN_TINY = ["train", "--testbed", "synthetic", "--model", "mlp", "--clients", "6", "--batch-size", "8",
              "--testbed-options", '{"input_shape": [1, 8, 8], "eval_train": null, "data": {"train_size": 120, '
              '"test_size": 40, "channels": 1, "size": 8}}', "--rounds", "4", "--every", "2", "--window", "2",
              "--local-steps", "2"]


def test_train_command_stores_runs_and_draws_the_curves(tmp_path, capsys):
    args = [*TRAIN_TINY, "--aggregation", "all", "--seeds", "0", "1", "--out", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr()
    assert "fedavg[all] (eta_0 = 0.05): final test accuracy of the server model" in out.out
    assert "over 2 run(s)" in out.out
    assert "round 4/4 acc=" in out.err and "samples/s=" in out.err
    assert (tmp_path / "figures" / "train-synthetic-fedavg-all-sine.png").stat().st_size > 10_000
    assert len(Store(tmp_path / "store.sqlite")) == 2
    assert main(args) == 0  # second time from the store
    assert len(Store(tmp_path / "store.sqlite")) == 2


def test_train_command_reports_a_missing_dataset(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("THEORYLAB_DATA", str(tmp_path))
    monkeypatch.setattr("theorylab.testbeds.data.idx.FMNIST_SYSTEM_DIR", tmp_path / "nowhere")
    assert main(["train", "--testbed", "fmnist", "--rounds", "1", "--out", str(tmp_path), "--no-cache"]) == 2
    assert "make data" in capsys.readouterr().err


def test_train_defaults_to_table7_step_and_the_algorithms_point(tmp_path, capsys):
    assert main([*TRAIN_TINY, "--algorithm", "fedawe", "--out", str(tmp_path)]) == 0
    assert "fedawe (eta_0 = 0.1): final test accuracy of the mean model" in capsys.readouterr().out
    override = ["--algorithm", "fedawe", "--lr", "0.02", "--point", "server"]
    assert main([*TRAIN_TINY, *override, "--out", str(tmp_path)]) == 0
    assert "fedawe (eta_0 = 0.02): final test accuracy of the server model" in capsys.readouterr().out
    assert main([*TRAIN_TINY, "--algorithm", '{"name": "fedawe", "lr": 0.03}', "--out", str(tmp_path)]) == 0
    assert "fedawe (lr = 0.03): final test accuracy of the mean model" in capsys.readouterr().out  # the spec's own lr
    with sqlite3.connect(tmp_path / "store.sqlite") as db:  # the step sizes the stored runs were configured with
        lr = [json.loads(c)["algorithm"]["lr"] for (c,) in db.execute("SELECT config FROM runs")]
    assert sorted(step["lr0"] if isinstance(step, dict) else step for step in lr) == [0.02, 0.03, 0.1]


def test_train_rejects_a_point_or_device_before_training(tmp_path, capsys, monkeypatch):
    assert main([*TRAIN_TINY, "--point", "mean", "--out", str(tmp_path)]) == 2
    assert "'fedavg' has no evaluation point 'mean'; its points are server" in capsys.readouterr().err
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main([*TRAIN_TINY, "--device", "cuda", "--out", str(tmp_path)]) == 2
    assert "device 'cuda' is not available" in capsys.readouterr().err
    assert not (tmp_path / "store.sqlite").exists()
