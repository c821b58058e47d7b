"""The Gilbert–Elliott channel: its stationary loss law against exact enumeration, its draws against that law, its
use in a run, and its refusals.

Independent reference: the two-state chain's transition matrix P, its stationary vector from a linear solve, and
the joint law of losses k rounds apart from the matrix power P^k (an HMM enumeration), not the closed forms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from theorylab.channels.gilbert_elliott import gilbert_elliott, loss_covariance, stationary_loss
from theorylab.config import RunConfig
from theorylab.exact.lossy_moments import lossy_moments
from theorylab.rng import Streams
from theorylab.runner import run

LINK = {"to_bad": 0.1, "to_good": 0.3, "good": 0.05, "bad": 0.8}


def enumerated(to_bad, to_good, good, bad, lag):
    """(P(L=1), Cov(L_t, L_{t+lag})) of the stationary chain by enumeration over its states."""
    P = np.array([[1 - to_bad, to_bad], [to_good, 1 - to_good]])
    A = np.vstack([P.T - np.eye(2), np.ones(2)])
    pi = np.linalg.lstsq(A, np.array([0.0, 0.0, 1.0]), rcond=None)[0]
    e = np.array([good, bad])
    q = pi @ e
    joint = sum(pi[s] * e[s] * np.linalg.matrix_power(P, lag)[s] @ e for s in range(2)) if lag else q
    return q, joint - q * q


@pytest.mark.parametrize("link", [LINK, {"to_bad": 0.6, "to_good": 0.9, "good": 0.2, "bad": 0.5},
                                  {"to_bad": 0.02, "to_good": 0.2, "good": 0.0, "bad": 1.0}])
def test_closed_forms_equal_enumeration(link):
    for lag in range(6):
        q, cov = enumerated(**link, lag=lag)
        assert stationary_loss(**link) == pytest.approx(q, rel=1e-12)
        assert loss_covariance(**link, lag=lag) == pytest.approx(cov, rel=1e-10, abs=1e-15)


def test_independent_losses_when_the_chain_forgets_in_one_step():
    # to_bad + to_good = 1: the next state does not depend on the current one, so losses are i.i.d.
    assert loss_covariance(0.3, 0.7, 0.1, 0.9, lag=1) == pytest.approx(0.0, abs=1e-16)


def sampled_losses(channel, replicas, rounds, seed=0):
    streams = Streams(seed, replicas)
    state, lost = channel.init(replicas, streams), []
    for t in range(rounds):
        state, links = channel.draw(state, t, streams)
        lost.append(~links.uplink)
    return torch.stack(lost).double().numpy()  # (rounds, R, m)


def test_draws_follow_the_stationary_law():
    channel = gilbert_elliott(uplink=LINK, n_clients=2)
    lost = sampled_losses(channel, replicas=4000, rounds=6)
    q = stationary_loss(**LINK)
    rho = 1 - LINK["to_bad"] - LINK["to_good"]
    n = lost.shape[1] * lost.shape[2]
    for t in range(lost.shape[0]):  # every round's marginal is q (the state starts stationary)
        assert abs(lost[t].mean() - q) <= 5 * np.sqrt(q * (1 - q) / n)
    for lag in (1, 2):  # lag covariance across replicas and clients, against the closed form
        products = (lost[:-lag] * lost[lag:]).mean()
        expected = loss_covariance(**LINK, lag=lag) + q * q
        assert expected > q * q and rho > 0  # positively correlated: a test of correlation, not only of q
        # one round pair's products are independent over (R, m), with standard error se; the mean over the
        # (correlated) round pairs has a standard error of at most se
        se = np.sqrt(expected * (1 - expected) / n)
        assert abs(products - expected) <= 5 * se


def test_same_seed_same_draws_and_replicas_independent_of_their_count():
    channel = gilbert_elliott(uplink=LINK, downlink={**LINK, "bad": 0.5}, n_clients=3)
    a, b = sampled_losses(channel, 2, 5, seed=9), sampled_losses(channel, 5, 5, seed=9)
    np.testing.assert_array_equal(a, b[:, :2])
    np.testing.assert_array_equal(a, sampled_losses(channel, 2, 5, seed=9))


def test_a_lossy_run_records_the_bad_fraction_and_exact_moments_refuse_it():
    spec = {"name": "gilbert_elliott", "uplink": {"to_bad": 0.2, "to_good": 0.2, "good": 0.0, "bad": 0.6},
            "n_clients": 4}
    config = RunConfig(problem={"name": "random_quadratic", "n_clients": 4, "dim": 2, "sigma": 0.1},
                       participation={"name": "bernoulli", "p": [1.0] * 4},
                       algorithm={"name": "packet_loss", "aggregator": "upga_pl", "loss": [0.3] * 4,
                                  "local_steps": 2, "lr": 0.05},
                       channel=spec, rounds=40, replicas=200, seed=1)
    trace = run(config)
    bad = trace.metrics["channel.bad_up"]  # (replicas, records); at most the standard error of one record's mean
    assert abs(bad.mean() - 0.5) <= 5 * np.sqrt(0.25 / (4 * 200))  # pi_B = 0.2 / 0.4 at every recorded round
    assert np.isfinite(trace.final["server"]).all()
    with pytest.raises(ValueError, match="correlated"):
        lossy_moments(config)


@pytest.mark.parametrize("kwargs, match", [
    ({}, "needs a downlink or an uplink"),
    ({"uplink": {"to_bad": 0.1}}, "must be a dict with keys to_bad, to_good, good, bad"),
    ({"uplink": {**LINK, "to_bad": 0.0, "to_good": 0.0}}, "the state never moves"),
    ({"uplink": {**LINK, "good": 1.0, "bad": 1.0}}, "stationary loss probability is 1"),
    ({"uplink": {**LINK, "bad": 1.5}}, r"uplink.bad\[0\] = 1.5 is outside"),
    ({"uplink": {**LINK, "to_good": [0.1, 0.2]}, "n_clients": 3}, "does not match n_clients = 3"),
    ({"uplink": {**LINK, "to_good": [0.1, 0.2], "bad": [0.5, 0.6, 0.7]}}, "one entry per client"),
])
def test_bad_inputs_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gilbert_elliott(**kwargs)
