"""Thesis Ch. 3 figure recipes (Figs 3.2-3.5): the grid's conversions and summaries, the FedAU runs against exact
references, and that the recipes draw."""

import numpy as np
import pytest

from theorylab.figures import thesis_fig3_2, thesis_fig3_3, thesis_fig3_4, thesis_fig3_5
from theorylab.figures.thesis_fig3_2 import gain, horizon, p_min_of, shares, shift_of, summarise, tuned_losses, two_groups
from theorylab.figures.thesis_fig3_5 import estimation_shift, final_gaps
from theorylab.exact.fedstale_moments import fedstale_moments


def test_ratio_and_shift_conversions():
    for p in (0.5, 0.2, 0.1, 0.02, 0.002):
        assert p_min_of((1 + p) / (2 * p)) == pytest.approx(p, rel=1e-12)  # equal halves: p_avg = (1 + p) / 2
    problem = two_groups(shift_of(0.6))
    grads = problem.u[:, 0] - problem.u[:, 0].mean()  # grad F_i - grad F at any w, unit curvature
    assert np.mean(grads ** 2) == pytest.approx(0.6, rel=1e-12)  # sigma_g^2 = s^2 / 2
    with pytest.raises(ValueError, match="ratio"):
        p_min_of(0.5)
    with pytest.raises(ValueError, match="sigma_g"):
        shift_of(-0.1)


def test_summary_of_a_cell_by_hand():
    losses = {0.0: (4.0, 0.1), 0.2: (2.0, 0.1), 0.5: (1.0, 0.01), 0.8: (1.0, 0.1), 1.0: (5.0, 0.01)}
    cell = summarise(losses)  # tie 0.5 / 0.8: the smaller beta
    assert (cell["beta"], cell["lr"]) == (0.5, 0.01)
    assert cell["delta0"] == pytest.approx(75.0) and cell["delta1"] == pytest.approx(80.0)
    assert gain(2.0, 2.0) == 0.0
    assert shares([[0.0, 0.2, 1.0, 1.0], [0.5, 0.8, 0.8, 0.0]]) == {"FedStale": 50.0, "FedVARP": 25.0, "FedAvg": 25.0}


def test_identical_clients_prefer_fedavg():
    assert summarise(tuned_losses(0.0, 0.5))["beta"] == 0.0


def test_fedau_equals_exact_p_when_everyone_always_participates():
    """p = 1 for all (ratio 1): FedAU's intervals all have length 1, so omega = 1 = 1/p and the runs coincide."""
    assert np.array_equal(estimation_shift(0.5, 0.01, 1.0, 8, 0), np.zeros(8))


def test_exact_p_runs_match_the_exact_moments():
    ratio, beta, lr, replicas = 1.5, 0.8, 0.03, 4000
    gaps = final_gaps(beta, lr, ratio, replicas, 3, estimated=False)
    p_min = p_min_of(ratio)
    exact = fedstale_moments(two_groups(shift_of(0.6)), [1, 1, p_min, p_min], beta, 5, lr, 1.0,
                             horizon(p_min))[1][-1]
    assert abs(gaps.mean() - exact) < 4.5 * gaps.std() / np.sqrt(replicas)


def test_fedau_weights_change_the_run_when_p_min_is_small():
    shift = estimation_shift(1.0, 0.01, 5.5, 8, 0)
    assert np.all(np.isfinite(shift)) and np.any(shift != 0)
    with pytest.raises(ValueError, match="replicas"):
        final_gaps(1.0, 0.01, 5.5, 1, 0, True)


def test_recipes_draw(tmp_path):
    grid = thesis_fig3_2.compute((0.0, 0.6), (1.5, 3.0))
    assert grid["beta"].shape == (2, 2) and np.all(grid["beta"][0] == 0)
    lines = thesis_fig3_3.compute((0.0, 0.6))
    table = thesis_fig3_5.compute((1.5,), replicas=16)
    paths = [thesis_fig3_2.draw(grid, tmp_path / "a.png"),
             thesis_fig3_3.draw_lines(lines, tmp_path / "b.png", "x", "t"),
             thesis_fig3_4.draw_lines(thesis_fig3_4.compute((1.5, 3.0)), tmp_path / "c.png", "x", "t", logx=True),
             thesis_fig3_5.draw(table, tmp_path / "d.png")]
    assert all(p.exists() and p.stat().st_size > 10_000 for p in paths)
