"""The exact mean of pseudo-gradient aggregation under Gilbert-Elliott uplink losses
(theorylab.exact.markov_loss_moments), against brute-force path enumeration and the independent-loss engine."""

import itertools

import numpy as np
import pytest

from theorylab.config import RunConfig
from theorylab.exact.lossy_moments import lossy_moments
from theorylab.exact.markov_loss_moments import pga_mean

LINKS = [{"to_bad": 0.2, "to_good": 0.3, "good": 0.1, "bad": 0.9},
         {"to_bad": 0.05, "to_good": 0.5, "good": 0.0, "bad": 0.7}]
BETA, A, C, K, LR = [0.6, 0.7], [1.0, 2.0], [1.0, 3.0], 3, 0.1


def enumerated_means(rounds: int, w0: float) -> list[float]:
    """E w^t by summing over every path of channel states and deliveries (2 clients: 16 outcomes per round)."""
    m = 1 - (1 - LR * np.array(A)) ** K
    one = lambda l: np.array([[1 - l["to_bad"], l["to_bad"]], [l["to_good"], 1 - l["to_good"]]])  # noqa: E731
    P = [one(l) for l in LINKS]
    pi = [np.array([l["to_good"], l["to_bad"]]) / (l["to_bad"] + l["to_good"]) for l in LINKS]
    loss = [np.array([l["good"], l["bad"]]) for l in LINKS]
    means = [w0]
    for T in range(1, rounds + 1):
        total = 0.0
        for states in itertools.product(itertools.product((0, 1), repeat=2), repeat=T):
            p = pi[0][states[0][0]] * pi[1][states[0][1]]
            for t in range(1, T):
                p *= P[0][states[t - 1][0], states[t][0]] * P[1][states[t - 1][1], states[t][1]]
            # deliveries given the states: average over them round by round (w is affine in each round's xi)
            w_dist = {w0: 1.0}
            for s in states:
                nxt = {}
                for xi in itertools.product((0, 1), repeat=2):
                    q = np.prod([(1 - loss[i][s[i]]) if xi[i] else loss[i][s[i]] for i in range(2)])
                    for w, pw in w_dist.items():
                        w2 = w + sum(BETA[i] * xi[i] * m[i] * (C[i] - w) for i in range(2))
                        nxt[w2] = nxt.get(w2, 0.0) + pw * q
                w_dist = nxt
            total += p * sum(w * pw for w, pw in w_dist.items())
        means.append(total)
    return means


def test_the_state_recursion_equals_path_enumeration():
    means, _ = pga_mean(BETA, A, C, K, LR, LINKS, 0.5, 4)
    np.testing.assert_allclose(means, enumerated_means(4, 0.5), rtol=1e-12)


def test_the_limit_is_the_recursions_fixed_point():
    means, limit = pga_mean(BETA, A, C, K, LR, LINKS, 0.0, 3000)
    assert means[-1] == pytest.approx(limit, rel=1e-10)


def test_independent_rounds_reduce_to_the_independent_loss_engine():
    # to_bad + to_good = 1: the channel forgets in one step, i.e. Bernoulli losses with q = to_bad bad + to_good good
    links = [{"to_bad": 0.3, "to_good": 0.7, "good": 0.0, "bad": 1.0}, {"to_bad": 0.6, "to_good": 0.4, "good": 0.0,
                                                                        "bad": 1.0}]
    q = [0.3, 0.6]
    means, _ = pga_mean([0.5 / 0.7, 0.5 / 0.4], [1.0, 1.0], C, K, LR, links, 0.0, 20)
    config = RunConfig(problem={"name": "scalar_quadratic", "centers": C, "sigma": 0.0, "x0": 0.0},
                       participation={"name": "bernoulli", "p": [1.0, 1.0]},
                       algorithm={"name": "packet_loss", "aggregator": "upga_pl", "loss": q, "local_steps": K,
                                  "lr": LR},
                       channel={"name": "bernoulli_loss", "uplink": q}, rounds=20, every=1)
    np.testing.assert_allclose(means, lossy_moments(config).mean[:, 0], rtol=1e-12, atol=1e-14)


def test_inputs_must_match_in_length():
    with pytest.raises(ValueError, match="one weight, curvature, centre and link per client"):
        pga_mean(BETA, A, C[:1], K, LR, LINKS, 0.0, 1)
