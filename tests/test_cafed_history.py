"""CA-Fed's estimator history (``cafed(history=t')``, thesis Fig. 2.4, seed 001 §2.5.2 L883; digest 001 L162, L396)
and the Fig. 2.4b recipe.

Expected values come from closed forms of the two-state chain with matrix :math:`P` (states 0 inactive, 1 active):
stationary law :math:`\\pi = (1-P_{00})/(2-P_{00}-P_{11})`, eigenvalue :math:`\\lambda = P_{00}+P_{11}-1`, pair law
:math:`P(a^{(-1)} = a, a^{(0)} = b) = \\pi_a P_{ab}`, and the Markov central limit variances
:math:`\\mathrm{Var}(\\bar a_n) \\approx \\pi(1-\\pi)(1+\\lambda)/((1-\\lambda) n)`,
:math:`\\mathrm{Var}(\\hat P_{aa}) \\approx P_{aa}(1-P_{aa})/(n\\,\\pi_a)`."""

import numpy as np
import pytest
import torch

from theorylab.claims import Context
from theorylab.config import RunConfig
from theorylab.figures import thesis_fig2_4b
from theorylab.figures.thesis_fig2_1c import METHODS
from theorylab.kernels.algorithm import Round
from theorylab.kernels.cafed import cafed
from theorylab.participation import estimators
from theorylab.participation.markov import markov
from theorylab.registry import build, lookup
from theorylab.rng import Streams
from theorylab.runner import run
from theorylab.store import Store

# (P00, P11) per client: the thesis' less / more available correlated classes, a Bernoulli(1/2) and a middle chain
P00 = np.array([0.99, 0.91, 0.5, 0.8])
P11 = np.array([0.91, 0.99, 0.5, 0.7])
PI = (1 - P00) / (2 - P00 - P11)  # (0.1, 0.9, 0.5, 0.4)
LAM = P00 + P11 - 1  # (0.9, 0.9, 0, 0.5)
PROBLEM = {"name": "scalar_quadratic", "centers": [1.0, 2.0, 3.0, 4.0]}


def _first_round(history: int, replicas: int, seed: int = 0, start=None) -> dict:
    """The kernel's state after round 0, whose mask the participation process ``markov(PI, LAM, start)`` draws."""
    algorithm = cafed(pi=PI.tolist(), lam=LAM.tolist(), availability="estimated", history=history, local_steps=1)
    problem, streams, process = build("testbed", PROBLEM), Streams(seed, replicas), markov(PI, LAM, start)
    state = algorithm.init(problem, torch.zeros(replicas, 1, dtype=torch.float64))
    _, active = process.draw(process.init(replicas, streams), 0, streams)
    return algorithm.step(state, Round(0, active, process.probabilities(0), streams), problem)


def _counts(state: dict) -> dict:
    return {k: v for k, v in state.items() if k.startswith("avail_")}


@pytest.mark.parametrize("availability", ["oracle", "estimated"])
def test_history_zero_is_the_run_without_it_bit_for_bit(availability):
    base = dict(problem={"name": "random_quadratic", "n_clients": 4, "dim": 3, "seed": 5, "sigma": 0.3},
                participation={"name": "markov", "pi": PI.tolist(), "lam": LAM.tolist()}, rounds=25, replicas=3,
                seed=7, every=5)
    spec = {"name": "cafed", "pi": PI.tolist(), "lam": LAM.tolist(), "availability": availability,
            "f_star": "running_min", "loss_noise": 0.1, "local_steps": 2}
    without, zero = (run(RunConfig(algorithm=a, **base)) for a in (spec, {**spec, "history": 0}))
    np.testing.assert_array_equal(without.final["server"], zero.final["server"])
    for name, values in without.metrics.items():
        np.testing.assert_array_equal(values, zero.metrics[name])


def test_a_long_history_estimates_the_chains_within_their_standard_errors():
    """t' = 10^4 past rounds plus round 0: pi_hat and lambda_hat within 4 standard errors of the closed forms, and
    the standardised errors of pi_hat have a spread near 1 (an i.i.d. history would give sqrt((1-lam)/(1+lam)),
    about 0.23, for the two lam = 0.9 clients)."""
    t, replicas = 10_000, 16
    counts = _counts(_first_round(t, replicas, seed=3))
    n = t + 1
    assert np.all(counts["avail_rounds"].numpy() == n)
    pi_hat, lam_hat = estimators.pi_hat(counts).numpy(), estimators.lambda_hat(counts).numpy()
    se_pi = np.sqrt(PI * (1 - PI) * (1 + LAM) / (1 - LAM) / n)
    se_lam = np.sqrt(P00 * (1 - P00) / (n * (1 - PI)) + P11 * (1 - P11) / (n * PI))
    z_pi, z_lam = (pi_hat - PI) / se_pi, (lam_hat - LAM) / se_lam
    assert np.abs(z_pi).max() < 4 and np.abs(z_lam).max() < 4
    assert 0.6 < np.sqrt((z_pi[:, LAM > 0.8] ** 2).mean()) < 1.6


def test_the_last_past_round_and_round_zero_follow_the_chain():
    """history = 1: the one counted transition a^(-1) -> a^(0) has the stationary pair law pi_a P_ab (an independent
    past would give pi_a pi_b instead: 0.01 rather than 0.091 for (1, 1) of the first client)."""
    replicas = 4000
    counts = _counts(_first_round(1, replicas, seed=11))
    law = {"avail_n00": (1 - PI) * P00, "avail_n01": (1 - PI) * (1 - P00), "avail_n10": PI * (1 - P11),
           "avail_n11": PI * P11}
    for key, p in law.items():
        freq = counts[key].numpy().mean(0)
        assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / replicas)), key
    assert np.all(sum(counts[k] for k in law).numpy() == 1)  # exactly one transition per client


def test_history_refuses_a_participation_that_is_not_its_stationary_chain():
    with pytest.raises(ValueError, match="history is the past of the stationary chains"):
        _first_round(10, 2, start=[0.5] * 4)


@pytest.mark.parametrize("params, message", [
    (dict(history=-1), "history"), (dict(history=1e300), "history"), (dict(history=2.5), "history"),
    (dict(history=10, availability="oracle"), "availability='estimated'"),
    (dict(history=10, pi=None), "pi and lam"), (dict(history=10, lam=[0.0, 1.0]), "lam"),
])
def test_bad_histories_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        cafed(**{"pi": [0.5, 0.5], "lam": [0.0, 0.0], "availability": "estimated", **params})


def test_fig2_4b_quick_recipe_writes_its_figure(tmp_path):
    """The registered recipe in quick mode (scikit-learn digits, no download) draws into ``tmp_path``; its data,
    read back from the run store, hold one CA-Fed accuracy per (replica, t') and one per replica per reference."""
    ctx = Context(quick=True, seed=0, store=Store(tmp_path / "store.sqlite"), figure_dir=tmp_path)
    path = lookup("figure", "thesis-fig2-4b").obj(ctx)
    assert path == tmp_path / "thesis-fig2-4b.png" and path.stat().st_size > 10_000
    assert thesis_fig2_4b.stand_in(ctx).problem["name"] == "digits"
    data = thesis_fig2_4b.compute(ctx)  # every run is in the store now
    t = np.round(10 ** np.arange(1.0, 4.01, 0.5)).astype(int)  # the thesis' t' = 10^1, 10^1.5, ..., 10^4
    assert data["t"].tolist() == t.tolist() and data["CA-Fed"].shape == (3, len(t))
    assert set(data) == {"t", "CA-Fed", thesis_fig2_4b.ORACLE, *METHODS[1:]}
    assert all(np.all((v >= 0) & (v <= 100)) for k, v in data.items() if k != "t")
    assert thesis_fig2_4b.hitting_time(20) == pytest.approx(1 / ((1 - 0.9) * 0.1))  # the thesis' 100
