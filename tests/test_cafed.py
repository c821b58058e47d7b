"""CA-Fed (thesis Alg. 3): ComputeWeights, the AR filter and the estimators by hand, one and two rounds of the
kernel by hand, the kappa_bar^2 -> infinity limit against the Unbiased baseline bit for bit, and bad inputs."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from theorylab.config import RunConfig
from theorylab.kernels.algorithm import Round
from theorylab.kernels.cafed import ar_filter, cafed, compute_weights, proxy_error
from theorylab.participation import estimators
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.runner import run

T = dict(dtype=torch.float64)


def _weights(kappa2: float, tau: float = 0.0) -> list[float]:
    """Three clients, alpha = 1/3, pi = 1/2 (so q = 2/3 and p = 1/3), gaps (0, 0, 3), order (2, 0, 1)."""
    q = torch.full((1, 3), 2 / 3, **T)
    alpha, pi = torch.full((1, 3), 1 / 3, **T), torch.full((1, 3), 0.5, **T)
    gaps = torch.tensor([[0.0, 0.0, 3.0]], **T)
    order = torch.tensor([[2, 0, 1]])
    return compute_weights(q, order, alpha, gaps, gaps.amax(-1), pi, 4 * kappa2, tau)[0].tolist()


def test_compute_weights_by_hand():
    # kappa2 = 0: e = 1; dropping 2 gives 0 (accepted), dropping 0 gives 0 (accepted, tie with tau = 0),
    # dropping 1 would leave no weight (refused)
    assert _weights(0.0) == [0.0, 2 / 3, 0.0]
    # kappa2 = 1/2 (scale 2): dropping 2 gives 0 + 2 (1/3)^2 3 = 2/3 < 1 (accepted); dropping 0 then gives
    # 2 (2/3)^2 3 = 8/3 > 2/3 (refused), and so does dropping 1
    assert _weights(0.5) == [2 / 3, 2 / 3, 0.0]
    # kappa2 = 1 (scale 4): dropping 2 gives 4/3 > 1: nothing is dropped
    assert _weights(1.0) == [2 / 3, 2 / 3, 2 / 3]
    # tau = 1/2 with kappa2 = 1/2: the drop of 2 gains only 1/3 < tau
    assert _weights(0.5, tau=0.5) == [2 / 3, 2 / 3, 2 / 3]


def test_proxy_error_is_2_25_by_hand():
    q, alpha, pi = torch.tensor([1.0, 3.0], **T), torch.tensor([0.5, 0.5], **T), torch.tensor([0.5, 0.5], **T)
    gaps, gamma = torch.tensor([2.0, 1.0], **T), torch.tensor(2.0, **T)
    # p = (1/4, 3/4); <gaps, p> = 5/4; d_TV = 1/4; 4 * 1 * (1/16) * 2 = 1/2
    assert proxy_error(q, alpha, gaps, gamma, pi, 4.0).item() == pytest.approx(1.75, abs=1e-15)


def test_ar_filter_by_hand():
    previous, losses = torch.tensor([1.0, 2.0, 3.0], **T), torch.tensor([10.0, 20.0, 30.0], **T)
    active = torch.tensor([True, False, True])
    assert ar_filter(previous, losses, active, 0.25).tolist() == [3.25, 2.0, 9.75]


def _problem():
    return build("testbed", {"name": "scalar_quadratic", "centers": [1.0, 3.0]})


def _step(algorithm, state, problem, t: int, active):
    return algorithm.step(state, Round(t, torch.tensor([active]), np.array([0.8, 0.4]), Streams(0, 1)), problem)


def test_two_rounds_by_hand():
    """F_i = (x - u_i)^2 / 2, u = (1, 3), x0 = 0, one local step of 0.1, pi = (0.8, 0.4): q = alpha/pi = (5/8, 5/4)."""
    problem = _problem()
    spec = dict(pi=[0.8, 0.4], lam=[0.0, 0.5], local_steps=1, lr=0.1)
    # kappa2 = 0: losses (1/2, 9/2), p = (1/2, 1/2), e = 5/2; dropping client 1 (largest lambda) gives e = 1/2
    greedy = cafed(kappa2=0.0, **spec)
    state = _step(greedy, greedy.init(problem, torch.zeros(1, 1, **T)), problem, 0, [True, True])
    assert state["cafed.q"][0].tolist() == [0.625, 0.0]
    assert state["x"].item() == pytest.approx(0.625 * 0.1)
    # kappa2 = 1: dropping 1 gives 1/2 + 4 (1/2)^2 (9/2) = 5 > 5/2, dropping 0 gives 9 > 5/2: both kept
    algorithm = cafed(kappa2=1.0, **spec)
    state = _step(algorithm, algorithm.init(problem, torch.zeros(1, 1, **T)), problem, 0, [True, True])
    x1 = 0.625 * 0.1 + 1.25 * 0.3
    assert state["x"].item() == pytest.approx(x1)
    # round 1, only client 1 active: F_hat = (1/2, (x1 - 3)^2/2) (client 0's loss is stale); nothing dropped
    state = _step(algorithm, state, problem, 1, [False, True])
    assert state["cafed.F_hat"][0].tolist() == pytest.approx([0.5, 0.5 * (x1 - 3) ** 2])
    assert state["x"].item() == pytest.approx(x1 + 1.25 * 0.1 * (3 - x1))
    assert state["cafed.included"][0].tolist() == [False, True]
    assert state["cafed.q_sum"][0].tolist() == pytest.approx([1.25, 2.5])


def test_estimated_availability_drives_the_weights():
    """Client 0 active in rounds 1, 1, 0, 1: pi_hat = (3 + 1)/(4 + 2) = 2/3; transitions 1->1, 1->0, 0->1 give
    P11 = (1 + 1)/(2 + 2) = 1/2, P00 = (0 + 1)/(1 + 2) = 1/3, lambda_hat = -1/6.  With kappa2 = 1e6 nothing is
    dropped, so the last round's q is alpha / pi_hat."""
    problem = _problem()
    algorithm = cafed(availability="estimated", kappa2=1e6)
    state = algorithm.init(problem, torch.zeros(1, 1, **T))
    for t, a in enumerate([[True, False], [True, False], [False, False], [True, True]]):
        state = _step(algorithm, state, problem, t, a)
    counts = {k: v for k, v in state.items() if k.startswith("avail_")}
    assert estimators.lambda_hat(counts)[0, 0].item() == pytest.approx(-1 / 6)
    # client 1: active once in 4 rounds, pi_hat = 2/6
    assert state["cafed.q"][0].tolist() == pytest.approx([0.5 / (2 / 3), 0.5 / (2 / 6)])


PI, LAM = [0.9, 0.9, 0.5, 0.1, 0.1, 0.3], [0.9, 0.0, 0.5, 0.9, 0.05, 0.0]


def _runs(**cafed_params):
    base = dict(problem={"name": "random_quadratic", "n_clients": 6, "dim": 3, "seed": 5, "sigma": 0.3},
                participation={"name": "markov", "pi": PI, "lam": LAM}, rounds=60, replicas=4, seed=2, every=5)
    alpha = build("testbed", base["problem"]).alpha
    mine = run(RunConfig(algorithm={"name": "cafed", "pi": PI, "lam": LAM, "local_steps": 2, **cafed_params},
                         **base))
    unbiased = run(RunConfig(algorithm={"name": "fedavg", "aggregation": "all", "local_steps": 2,
                                        "q": (alpha / np.array(PI)).tolist()}, **base))
    return mine, unbiased


@pytest.mark.parametrize("loss_noise", [0.0, 0.1])
def test_large_kappa2_is_the_unbiased_trajectory_bit_for_bit(loss_noise):
    mine, unbiased = _runs(kappa2=1e6, loss_noise=loss_noise)
    np.testing.assert_array_equal(mine.final["server"], unbiased.final["server"])
    np.testing.assert_array_equal(mine.metrics["server.gap"], unbiased.metrics["server.gap"])


def test_small_kappa2_departs_from_unbiased():
    mine, unbiased = _runs(kappa2=0.0)
    assert np.abs(mine.final["server"] - unbiased.final["server"]).max() > 1e-3


@pytest.mark.parametrize("params, message", [
    (dict(tau=-0.1), "tau"), (dict(kappa2=-1.0), "kappa2"), (dict(kappa2=float("inf")), "kappa2"),
    (dict(beta=0.0), "beta"), (dict(beta=1.5), "beta"), (dict(beta=1.0, loss_filter="repo"), "beta"),
    (dict(bias_factor=2.0), "bias_factor"), (dict(lambda_order="sorted"), "lambda_order"),
    (dict(f_star="exact"), "f_star"), (dict(prior=(0.0, 1.0)), "prior"), (dict(loss_noise=-1.0), "loss_noise"),
    (dict(lambda_estimator="joint"), "lambda_estimator"), (dict(availability="guess"), "availability"),
    (dict(pi=None), "pi"), (dict(pi=[0.5, 1.2]), r"pi\[1\]"), (dict(lam=[0.5, 1.0]), r"lam\[1\]"),
])
def test_bad_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        cafed(**{"pi": [0.5, 0.5], "lam": [0.0, 0.0], **params})


def test_refuses_problems_without_client_losses():
    algorithm = cafed(pi=[0.5], lam=[0.0])
    problem = SimpleNamespace(n_clients=1, weights=torch.ones(1, **T))
    with pytest.raises(ValueError, match="client_values"):
        algorithm.init(problem, torch.zeros(1, 1, **T))
    with pytest.raises(ValueError, match="one entry per client"):
        cafed(pi=[0.5, 0.5, 0.5], lam=[0.0, 0.0, 0.0]).init(_problem(), torch.zeros(1, 1, **T))


@pytest.mark.parametrize("order, kept", [("raw", [1.0, 0.0]), ("abs", [0.0, 2.5])])
def test_lambda_order_raw_or_absolute(order, kept):
    """x0 = 2 between u = (1, 3): equal gaps, so with kappa2 = 0 the first client visited is dropped (a tie is
    accepted with tau = 0) and the second is refused (last weight).  lam = (-0.8, 0.5): raw order visits client 1
    first, |.| order client 0.  q = alpha/pi = (0.5/0.5, 0.5/0.2)."""
    problem = _problem()
    algorithm = cafed(pi=[0.5, 0.2], lam=[-0.8, 0.5], kappa2=0.0, lambda_order=order)
    state = _step(algorithm, algorithm.init(problem, torch.full((1, 1), 2.0, **T)), problem, 0, [True, True])
    assert state["cafed.q"][0].tolist() == kept


def test_running_min_with_exact_decreasing_losses_keeps_one_client():
    """Digest 001 §6 item 25: at the first round F_hat* = F_hat, so every gap and Gamma' vanish, the proxy is 0
    for every q and, with tau = 0, every drop but the last is accepted."""
    problem = _problem()
    algorithm = cafed(pi=[0.8, 0.4], lam=[0.0, 0.5], f_star="running_min", kappa2=1.0)
    state = _step(algorithm, algorithm.init(problem, torch.zeros(1, 1, **T)), problem, 0, [True, True])
    assert state["cafed.q"][0].tolist() == [0.625, 0.0]


def test_markov_moments_reduce_to_bernoulli_moments():
    """The claim module's exact propagation over joint availability states equals the memoryless engine at
    lambda = 0."""
    from theorylab.exact.fedavg_moments import fedavg_moments
    from theorylab.participation.markov import TwoStateMarkov
    from theorylab.exact.markov_moments import markov_moments
    from theorylab.validations.thesis.cafed.markov_weights import PI, PROBLEM

    q = [1.0, 2.0, 0.5, 1.5]
    config = RunConfig(problem=PROBLEM, participation={"name": "bernoulli", "p": PI}, rounds=60, every=20,
                       algorithm={"name": "fedavg", "aggregation": "all", "q": q, "local_steps": 3, "lr": 0.05})
    cases = [(TwoStateMarkov(PI, [0.0] * 4), q), (TwoStateMarkov(PI, [0.9] * 4), q)]
    exact, correlated = markov_moments(build("testbed", PROBLEM), cases, 0.05, 3, 60, 20)
    reference = fedavg_moments(config)
    np.testing.assert_allclose(exact.mean, reference.mean, atol=1e-12)
    np.testing.assert_allclose(exact.second, reference.second, atol=1e-12)
    assert np.abs(correlated.second - reference.second).max() > 1e-3  # a stacked case does not leak into another


def test_repo_filter_reading_is_one_minus_beta():
    """The author's code keeps 1 - beta of the old estimate: its beta = 0 is the thesis' beta = 1 (digest §6 item 5)."""
    repo, _ = _runs(kappa2=1.0, beta=0.0, loss_filter="repo")
    thesis, _ = _runs(kappa2=1.0, beta=1.0)
    np.testing.assert_array_equal(repo.final["server"], thesis.final["server"])
