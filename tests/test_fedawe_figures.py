"""FedAWE figure recipes: the time averages and consensus errors they report, and that the cheap ones render."""

import numpy as np
import pytest

from theorylab.figures import fedawe_availability, fedawe_rho
from theorylab.figures.fedawe_rate import consensus_error, cor1_config, recording_step, time_average
from theorylab.claims import Context
from theorylab.runner import run


def test_time_average_is_the_left_sum_when_every_round_is_recorded():
    values = np.random.default_rng(0).random((3, 11))
    assert np.allclose(time_average(np.arange(11), values), values[:, :-1].mean(1), atol=1e-15)


def test_time_average_on_a_grid_is_accurate_for_smooth_curves():
    T, every = 4096, 8
    rounds = np.arange(0, T + 1, every)
    f = lambda t: np.exp(-t / 300.0) + 0.01  # noqa: E731
    exact = f(np.arange(T)).sum() / T
    assert time_average(rounds, f(rounds)[None, :])[0] == pytest.approx(exact, rel=1e-4)


def test_recording_step():
    assert [recording_step(T) for T in (128, 1023, 1024, 2 ** 14)] == [1, 1, 2, 8]


def test_consensus_error_from_client_points_matches_the_models():
    config = cor1_config("hetero", 64, 2, 5, replicas=3, seed=0).replace(rounds=10)
    trace = run(config)
    xi = np.stack([trace.final[f"client{i}"] for i in range(10)], 1)  # (R, m, d)
    direct = ((xi - xi.mean(1, keepdims=True)) ** 2).sum(-1).mean(1)
    assert np.allclose(consensus_error(trace)[:, -1], direct, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("module", [fedawe_availability, fedawe_rho])  # lemma1, rate, speedup: via their claims
def test_cheap_figures_render(module, tmp_path):
    path = module.render(Context(quick=True, figure_dir=tmp_path))
    assert path.exists() and path.stat().st_size > 10_000
