"""CA-Fed and FedStale on the image testbeds (seed 001 Alg. 3 and 4; digest 001 §3.3-3.4, §5.1, §5.3): the network's
client losses, the thesis' availability and heterogeneity recipes, reproducibility, equivalences under common random
numbers, and ``theorylab train``'s usage errors."""

import numpy as np
import pytest
import torch

from theorylab.testbeds.thesis_recipes import (availability_classes, rare_group, swap_labels, thesis_markov_participation,
                                     two_group_participation)
from theorylab.app.cli import main
from theorylab.config import RunConfig
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.runner import run

DIGITS = {"name": "digits", "model": "logistic", "clients": 8, "alpha": 0.5, "batch_size": 8, "eval_train": 200,
          "eval_test": 100, "seed": 0}


def test_minibatch_losses_match_a_hand_computed_loss():
    problem = build("testbed", DIGITS)
    streams = Streams(3, 2)
    x = problem.initial_point(2, streams)
    draw = problem.sample(streams, 1)[0]
    active = torch.tensor([[True, False] * 4, [False, True] * 4])
    losses = problem.minibatch_losses(x, draw, active)
    r, i = 1, 3
    by_hand = problem.loss(x[r], problem.inputs("train", draw.index[r, i]), problem._labels["train"][draw.index[r, i]])
    assert float(losses[r, i]) == pytest.approx(float(by_hand), rel=1e-6)
    assert float(losses[0, 3]) == 0.0  # inactive


def test_client_values_are_the_mean_loss_over_each_clients_data():
    problem = build("testbed", DIGITS)
    x = problem.initial_point(1, Streams(0, 1))
    part = problem.parts[2]
    by_hand = problem.loss(x[0], problem.inputs("train", torch.as_tensor(part)), problem._labels["train"][part])
    assert problem.client_values(x.numpy())[0, 2] == pytest.approx(float(by_hand), rel=1e-5)


def test_cafed_with_no_exclusion_is_unbiased_fedavg_under_common_random_numbers():
    part = thesis_markov_participation(8, 0)
    q = (1.0 / (8 * np.asarray(part["pi"]))).tolist()
    base = dict(problem=DIGITS, participation=part, rounds=6, replicas=2, seed=1, every=3)
    ca = run(RunConfig(algorithm={"name": "cafed", "pi": part["pi"], "lam": part["lam"], "kappa2": 1e12, "tau": 1e-12,
                                  "f_star": "running_min", "local_steps": 2, "lr": 0.1}, **base))
    ref = run(RunConfig(algorithm={"name": "fedavg", "aggregation": "all", "q": q, "local_steps": 2, "lr": 0.1},
                        **base))
    np.testing.assert_allclose(ca.final["server"], ref.final["server"], rtol=1e-5, atol=1e-6)
    again = run(RunConfig(algorithm={"name": "cafed", "pi": part["pi"], "lam": part["lam"], "kappa2": 1e12,
                                     "tau": 1e-12, "f_star": "running_min", "local_steps": 2, "lr": 0.1}, **base))
    np.testing.assert_array_equal(ca.final["server"], again.final["server"])


def test_fedstale_on_digits_is_reproducible_and_beta0_is_fedavg_known_p():
    problem = {**DIGITS, "partition": "iid", "label_swap": {"fraction": 0.5}}
    base = dict(problem=problem, participation=two_group_participation(8, 0, 0.3), rounds=5, replicas=2, seed=2,
                every=5)
    runs = [run(RunConfig(algorithm={"name": "fedstale", "beta": 0.0, "local_steps": 2}, **base)) for _ in range(2)]
    np.testing.assert_array_equal(runs[0].final["server"], runs[1].final["server"])
    ref = run(RunConfig(algorithm={"name": "fedavg", "aggregation": "known_p", "local_steps": 2}, **base))
    np.testing.assert_array_equal(runs[0].final["server"], ref.final["server"])


def test_recipes():
    classes = availability_classes(8, 0)
    assert np.bincount(classes).tolist() == [2, 2, 2, 2]
    spec = thesis_markov_participation(8, 0)
    np.testing.assert_allclose(spec["pi"], np.where(classes < 2, 0.9, 0.1))
    assert np.all(np.asarray(spec["lam"])[classes % 2 == 0] == 0.9)
    assert np.all(np.abs(np.asarray(spec["lam"])[classes % 2 == 1]) < 0.05)
    rare = rare_group(24, 0)
    assert rare.sum() == 12
    p = np.asarray(two_group_participation(24, 0, 0.1)["p"])
    assert p.mean() / p.min() == pytest.approx(5.5)  # (1 + p_min) / (2 p_min), digest §3.4
    labels = np.array([0, 1, 2, 0, 1, 1, 2, 0])
    parts = [np.array([0, 1, 2, 3]), np.array([4, 5, 6, 7])]
    np.testing.assert_array_equal(swap_labels(labels, parts[:1], 0, 1.0), [1, 0, 2, 1, 1, 1, 2, 0])
    np.testing.assert_array_equal(swap_labels(labels, parts, 0, 0.0), labels)
    assert (swap_labels(labels, parts, 0, 0.5) != labels).sum() == 4  # half of the 6 samples labelled 0 or 1, rounded
    with pytest.raises(ValueError, match="fraction"):
        swap_labels(labels, parts, 0, 1.5)
    with pytest.raises(ValueError, match="p_min"):
        two_group_participation(24, 0, 0.0)


TRAIN = ["train", "--testbed", "digits", "--model", "logistic", "--clients", "8", "--batch-size", "8", "--rounds", "2",
         "--every", "1", "--window", "1", "--local-steps", "1", "--no-cache"]


@pytest.mark.parametrize("extra", [["--algorithm", "cafed"], ["--algorithm", "fedstale", "--beta", "0.5",
                                                              "--p-min", "0.5", "--label-swap", "0.5"]])
def test_train_runs_cafed_and_fedstale(tmp_path, extra, capsys):
    assert main([*TRAIN, "--out", str(tmp_path), *extra]) == 0
    assert "final test accuracy" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--algorithm", "fedavg", "--beta", "0.5"], "--beta"),
    (["--algorithm", "cafed", "--participation", "sine"], "Markov"),
    (["--algorithm", "fedavg", "--p-min", "0.2"], "--p-min"),
    (["--algorithm", "fedstale", "--beta", "1.5"], "beta"),
])
def test_train_usage_errors(tmp_path, extra, message, capsys):
    assert main([*TRAIN, "--out", str(tmp_path), *extra]) == 2
    assert message in capsys.readouterr().err


def test_train_says_how_many_evaluations_its_final_accuracy_averages(tmp_path, capsys):
    argv = [a if a != "1" or i != TRAIN.index("--window") + 1 else "50" for i, a in enumerate(TRAIN)]
    assert main([*argv, "--out", str(tmp_path), "--algorithm", "fedavg", "--every", "5"]) == 0
    out = capsys.readouterr().out
    assert "mean of the last 2 evaluations; --window 50 asked for more than the 2 recorded" in out, out
