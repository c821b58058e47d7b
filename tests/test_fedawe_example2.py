"""FedAWE Example 2 / Fig. 3, Tables 8-9: the scalar analogue's closed form against the exact engine and hand cases,
Table 8's targets and rounds-to-target on hand traces, the recipes on tiny runs, the claim in quick mode."""

import dataclasses

import numpy as np
import pytest

from theorylab.claims import Context, evaluate, select
from theorylab.figures import fedawe_example2 as fig
from theorylab.figures.learning_curves import rounds_to_target
from theorylab.kernels.schedules import make_schedule
from theorylab.trace import Trace
from theorylab.validations.fedawe import example2


@pytest.mark.parametrize("kind", ["active", "all"])
@pytest.mark.parametrize("gamma", [0.1, 0.5])
def test_closed_form_matches_the_exact_engine(kind, gamma):
    config = example2.analogue_config(kind, gamma, p=0.3, clients=6, rounds=60)
    closed = example2.closed_form_gap(config)
    assert closed > 0
    assert example2.exact_gap(config) == pytest.approx(closed, rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("kind", ["active", "all"])
def test_closed_form_with_every_client_always_present(kind):
    """p = 1, gamma = 0: all clients every round, so x^+ - u_bar = c_t (x - u_bar) and the gap is
    (1/2) u_bar^2 prod_t c_t^2 (x^0 = 0, u_bar = 1/2) under both aggregations."""
    config = example2.analogue_config(kind, 0.0, p=1.0, clients=4, rounds=30)
    lr = make_schedule(example2.ANALOGUE["lr"])
    c = np.array([(1 - lr(t)) ** example2.ANALOGUE["steps"] for t in range(30)])
    assert example2.closed_form_gap(config) == pytest.approx(0.5 * 0.25 * np.prod(c ** 2), rel=1e-12)


def test_closed_form_single_round_sampling_variance():
    """One round from x^0 = u_bar = 0 (centers -1, 1): over active clients the gap is
    (1/2)(1-c)^2 E[u_bar_A^2; A nonempty] = (1/2)(1-c)^2 P(K = 1) * 1 for m = 2 (u_bar_A = 0 when both come)."""
    config = example2.analogue_config("active", 0.0, p=0.5, clients=2, rounds=1)
    config = config.replace(problem={"name": "scalar_quadratic", "centers": [-1.0, 1.0]})
    c = (1 - make_schedule(example2.ANALOGUE["lr"])(0)) ** example2.ANALOGUE["steps"]
    assert example2.closed_form_gap(config) == pytest.approx(0.5 * (1 - c) ** 2 * 0.5, rel=1e-12)
    assert example2.exact_gap(config) == pytest.approx(0.5 * (1 - c) ** 2 * 0.5, rel=1e-10)


def test_table8_targets_are_the_papers():
    assert fig.targets(86.5) == (20.0, 40.0, 60.0, 80.0)  # SVHN
    assert fig.targets(68.7) == (15.0, 30.0, 45.0, 60.0)  # CIFAR-10
    assert fig.targets(47.9) == (10.0, 20.0, 30.0, 40.0)  # CINIC-10


def test_rounds_to_target_on_a_hand_trace():
    rounds = [0, 10, 20, 30, 40, 50, 60]
    acc = [5.0, 30.0, 25.0, 50.0, 60.0, 90.0, 95.0]  # sampled every 20 rounds: 5, 25, 60, 95
    assert rounds_to_target(rounds, acc, 0.0, fig.SAMPLE_EVERY) == 0
    assert rounds_to_target(rounds, acc, 20.0, fig.SAMPLE_EVERY) == 20
    assert rounds_to_target(rounds, acc, 30.0, fig.SAMPLE_EVERY) == 40  # round 10 reaches it but is not sampled
    assert rounds_to_target(rounds, acc, 95.0, fig.SAMPLE_EVERY) == 60
    assert rounds_to_target(rounds, acc, 96.0, fig.SAMPLE_EVERY) is None
    assert rounds_to_target(rounds, acc, 30.0, every=10) == 10


def test_accuracies_up_to_a_horizon():
    values = np.array([[0.1, 0.2, 0.4, 0.8], [0.0, 0.5, 0.5, 1.0]])
    trace = Trace({}, np.array([0, 10, 20, 30]), {"server.test_acc": values}, np.array([-1, -1]))
    assert np.allclose(fig.accuracies([trace], "test", 2), [60.0, 75.0])
    assert np.allclose(fig.accuracies([trace], "test", 2, horizon=20), [30.0, 50.0])
    assert np.allclose(fig.accuracies([trace, trace], "test", 1, horizon=25), [40.0, 50.0, 40.0, 50.0])


TINY = dataclasses.replace(fig.EXAMPLE2_QUICK, problem={**fig.EXAMPLE2_QUICK.problem, "clients": 10}, rounds=20,
                           every=10, window=1, local_steps=1, replicas=2)


def test_example2_figure_renders_on_tiny_runs(tmp_path):
    ctx = Context(quick=True, figure_dir=tmp_path)
    runs = fig.example2_runs(ctx, TINY, gammas=(0.1, 0.5), bases=(0.5,))
    assert set(runs) == {(label, 0.5, g) for label in fig.FEDAVG for g in (0.1, 0.5)}
    path = fig.draw_example2(runs, TINY, ctx.figure_path("ex2"))
    assert path.exists() and path.stat().st_size > 10_000


def test_tables_render_on_tiny_runs(tmp_path):
    ctx = Context(quick=True, figure_dir=tmp_path)
    runs = fig.table9_runs(ctx, TINY, gammas=(0.3, 0.1))
    assert runs[(0.3, "FedAWE")][0].config["participation"].get("gamma") is None  # Table 2's sine runs
    assert runs[(0.1, "FedAWE")][0].config["participation"]["gamma"] == 0.1
    data = fig.table_data(runs, TINY)
    assert set(data["table8"]) == {a["label"] for a in fig.ALGORITHMS}
    assert all(r is None or r % fig.SAMPLE_EVERY == 0 for rows in data["table8"].values() for r in rows)
    assert data["targets"] == fig.targets(data["best"])
    path = fig.draw_tables(data, TINY, ctx.figure_path("tables"))
    assert path.exists() and path.stat().st_size > 10_000


@pytest.mark.slow(reason="runs the claim at its quick budget (about 4 s); `make demo --check-expected` checks its "
                         "verdict too")
def test_claim_runs_in_quick_mode():
    (c,) = select(["fedawe.example2"])
    result = evaluate(c, Context(quick=True))
    assert result.error is None, result.error
    assert result.verdict == c.expect
    names = [check.name for check in result.evidence.checks]
    assert any(n.startswith("train accuracy") for n in names) and any(n.startswith("test accuracy") for n in names)
    assert all(check.verdict == "holds" for check in result.evidence.checks if check.name.startswith("analogue"))
