"""FedStale (seed 001 Alg. 4): update rule by hand, its end points bit for bit, its switches and bad inputs."""

import numpy as np
import pytest
import torch

from theorylab.testbeds.quadratic import scalar_quadratic
from theorylab.kernels.algorithm import Round
from theorylab.kernels.fedstale import fedstale
from theorylab.registry import build
from theorylab.rng import Streams

# Two scalar clients F_1 = x^2/2, F_2 = (x-2)^2 (curvature 2), two local steps of size 0.1 (as in test_kernels):
# client 1 maps x -> 0.81 x, client 2 maps x -> 0.64 x + 0.72, so in Ch. 3's sign Delta_1 = 0.19 x, Delta_2 =
# 0.36 x - 0.72.  q = (1/2, 1/2), p = (0.5, 0.25), beta = 0.5, eta_s = 1, three replicas.
PROBS = np.array([0.5, 0.25])
MASKS = [torch.tensor([[True, True], [False, True], [False, False]]),
         torch.tensor([[False, True], [True, False], [False, False]]),
         torch.tensor([[False, False], [False, False], [False, False]])]


def _hand_rounds(**kwargs):
    problem = scalar_quadratic([0.0, 2.0], curvatures=[1.0, 2.0], x0=1.0)
    algo = fedstale(beta=0.5, local_steps=2, lr=0.1, **kwargs)
    streams = Streams(0, 3)
    state = algo.init(problem, problem.initial_point(3, streams))
    out = []
    for t, mask in enumerate(MASKS):
        state = algo.step(state, Round(t, mask, PROBS, streams), problem)
        out.append((state["x"][:, 0].numpy().copy(), state["h"][..., 0].numpy().copy()))
    return out


def test_two_rounds_by_hand():
    (x1, h1), (x2, h2), (x3, _) = _hand_rounds()
    # round 1 (h = 0): replica 0: Delta = 0.5*0.19/0.5 + 0.5*(-0.36)/0.25 = -0.53; replica 1: 0.5*(-0.36)/0.25 = -0.72
    np.testing.assert_allclose(x1, [1.53, 1.72, 1.0], atol=1e-14)
    np.testing.assert_allclose(h1, [[0.19, -0.36], [0.0, -0.36], [0.0, 0.0]], atol=1e-14)
    # round 2, replica 0 at x = 1.53: Delta_2 = -0.1692, stale mean = (0.19 - 0.36)/2 = -0.085,
    #   Delta = 0.5*(-0.085) + 0.5*(-0.1692 - 0.5*(-0.36))/0.25 = -0.0209  ->  x = 1.5509;
    # replica 1 at x = 1.72: Delta_1 = 0.3268, stale mean = -0.18, Delta = -0.09 + 0.3268 = 0.2368 -> x = 1.4832
    np.testing.assert_allclose(x2, [1.5509, 1.4832, 1.0], atol=1e-14)
    np.testing.assert_allclose(h2, [[0.19, -0.1692], [0.3268, -0.36], [0.0, 0.0]], atol=1e-14)
    # round 3 has no participant: Alg. 4 still applies beta * stale mean (replica 0: 0.5 * 0.0104 = 0.0052)
    np.testing.assert_allclose(x3, [1.5457, 1.4832 - 0.5 * 0.5 * (0.3268 - 0.36), 1.0], atol=1e-14)


def test_empty_round_hold_and_first_memory_by_hand():
    (_, _), (x2, h2), (x3, h3) = _hand_rounds(empty_round="hold")
    np.testing.assert_array_equal(x3, x2)
    np.testing.assert_array_equal(h3, h2)
    (x1, h1), _, _ = _hand_rounds(memory="first")
    # h^(1) = (0.19, -0.36) for every replica, stale mean -0.085: replica 0: Delta = 0.5*(-0.085) + 0.5*(0.19 -
    # 0.095)/0.5 + 0.5*(-0.36 + 0.18)/0.25 = -0.3075; replica 1: -0.0425 - 0.36 = -0.4025; replica 2: -0.0425
    np.testing.assert_allclose(x1, [1.3075, 1.4025, 1.0425], atol=1e-14)
    np.testing.assert_allclose(h1, [[0.19, -0.36]] * 3, atol=1e-14)


PROBLEM = {"name": "random_quadratic", "n_clients": 5, "dim": 3, "seed": 3, "sigma": 0.4}
BERNOULLI = {"name": "bernoulli", "p": [0.9, 0.5, 0.3, 0.2, 0.1]}  # empty rounds occur (P = 0.1*0.5*0.7*0.8*0.9)


def _states(spec, participation=BERNOULLI, rounds=40, replicas=4, seed=2):
    """Every round's state of ``spec``, driven exactly as the runner drives it (common random numbers by seed)."""
    problem = build("testbed", PROBLEM)
    process, algo = build("participation", participation), build("algorithm", spec)
    streams = Streams(seed, replicas)
    state = algo.init(problem, problem.initial_point(replicas, streams))
    pstate, out, empty = process.init(replicas, streams), [], 0
    for t in range(rounds):
        pstate, active = process.draw(pstate, t, streams)
        empty += int((~active.any(1)).sum())
        state = algo.step(state, Round(t, active, process.probabilities(t), streams), problem)
        out.append(state)
    assert empty > 0 or participation is not BERNOULLI  # the Bernoulli runs exercise empty rounds
    return out


MOMENTUM = {"name": "momentum", "lr": 0.7, "beta": 0.5}


@pytest.mark.parametrize("server, empty_round", [(None, "apply"), (MOMENTUM, "hold")])
def test_beta0_is_unbiased_fedavg_bit_for_bit(server, empty_round):
    """beta = 0 with weights "known_p" is fedavg(aggregation="known_p"); a stateful server needs empty_round="hold"
    (FedAvg leaves its momentum untouched in an empty round), plain SGD needs nothing."""
    common = {"local_steps": 3, "lr": 0.07, "server": server}
    mine = _states({"name": "fedstale", "beta": 0.0, "empty_round": empty_round, **common}, rounds=60)
    ref = _states({"name": "fedavg", "aggregation": "known_p", **common}, rounds=60)
    for a, b in zip(mine, ref):
        assert torch.equal(a["x"], b["x"])


def test_beta1_is_fedvarp_bit_for_bit():
    """beta = 1 with weights "active", memory "zeros" and empty_round "hold" is the fedvarp kernel; its table is -h."""
    common = {"local_steps": 2, "lr": 0.1}
    mine = _states({"name": "fedstale", "beta": 1.0, "weights": "active", "empty_round": "hold", **common})
    ref = _states({"name": "fedvarp", **common})
    for a, b in zip(mine, ref):
        assert torch.equal(a["x"], b["x"]) and torch.equal(a["h"], -b["table"])


def test_active_weights_equal_known_p_under_uniform_k():
    """With exactly k of N clients per round, p_i = k/N and xi_i q_i / p_i = xi_i / k: the two weightings agree."""
    uniform = {"name": "uniform_k", "n_clients": 5, "k": 2}
    a = _states({"name": "fedstale", "beta": 0.6, "weights": "active"}, uniform)[-1]["x"]
    b = _states({"name": "fedstale", "beta": 0.6, "weights": "known_p"}, uniform)[-1]["x"]
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_all_compute_keeps_every_update_and_the_iterates():
    plain = _states({"name": "fedstale", "beta": 0.3}, rounds=5)
    full = _states({"name": "fedstale", "beta": 0.3, "all_compute": True}, rounds=5)
    for a, b in zip(plain, full):
        assert torch.equal(a["x"], b["x"]) and torch.equal(a["h"], b["h"])
    assert bool((full[-1]["fresh"] != 0).all())  # inactive clients' updates are there too


@pytest.mark.parametrize("kwargs, name", [({"beta": -0.1}, "beta"), ({"beta": 1.5}, "beta"),
                                          ({"memory": "ones"}, "memory"), ({"weights": "all"}, "weights"),
                                          ({"empty_round": "skip"}, "empty_round"),
                                          ({"local_steps": 0}, "local_steps")])
def test_bad_inputs_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        fedstale(**kwargs)


def test_exact_moments_at_beta0_match_the_fedavg_engine():
    """theorylab.exact.fedstale_moments (enumeration over outcomes, memory in the state) at beta = 0 against
    theorylab.exact.fedavg_moments for U-FedAvg (weight moments in closed form): two independent engines."""
    from theorylab.config import RunConfig
    from theorylab.exact.fedavg_moments import fedavg_moments
    from theorylab.exact.fedstale_moments import fedstale_moments

    p = [0.9, 0.5, 0.2]
    spec = {"name": "random_quadratic", "n_clients": 3, "dim": 2, "seed": 3, "sigma": 0.5}
    config = RunConfig(problem=spec, participation={"name": "bernoulli", "p": p}, rounds=30,
                       algorithm={"name": "fedavg", "aggregation": "known_p", "local_steps": 3, "lr": 0.1})
    ref, problem = fedavg_moments(config), build("testbed", spec)
    mean, gap = fedstale_moments(problem, p, 0.0, 3, 0.1, 1.0, 30)
    np.testing.assert_allclose(mean, ref.mean, atol=1e-12)
    np.testing.assert_allclose(gap, ref.metrics(problem)["server.gap"], atol=1e-12)


def test_exact_moment_map_is_the_per_outcome_recursion():
    """The module docstring's recursion over outcomes, written out here, against one step of
    :func:`moment_map` (the (mu, vec S) operator the engine iterates), at beta = 0.5 where the memory matters."""
    from theorylab.exact.fedstale_moments import affine_round, moment_map

    problem = build("testbed", {"name": "random_quadratic", "n_clients": 3, "dim": 2, "seed": 5, "sigma": 0.5})
    step = affine_round(problem, [0.9, 0.5, 0.2], 0.5, 3, 0.1, 0.7)
    D = step.M.shape[1]
    rng = np.random.default_rng(0)
    mu, root = rng.normal(size=D), rng.normal(size=(D, D))
    S = root @ root.T + np.outer(mu, mu)
    mean_next = sum(P * (M @ mu + b) for P, M, b in zip(step.prob, step.M, step.b))
    second_next = sum(P * (M @ (S - np.outer(mu, mu)) @ M.T + np.outer(M @ mu + b, M @ mu + b) + G)
                      for P, M, b, G in zip(step.prob, step.M, step.b, step.noise))
    T, c = moment_map(step)
    v = T @ np.concatenate([mu, S.ravel()]) + c
    np.testing.assert_allclose(v[:D], mean_next, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v[D:].reshape(D, D), second_next, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("empty_round", ["apply", "hold"])
def test_fedau_weights_are_known_p_weights_fed_fedau_estimates(empty_round):
    """weights="fedau" equals the known-p kernel given 1/omega from FedAU's counters kept by hand (read before the
    round, advanced in every round, empty ones too), bit for bit."""
    from theorylab.participation.estimators import fedau_weights, init_fedau, update_fedau

    spec = {"name": "fedstale", "beta": 0.5, "local_steps": 2, "lr": 0.1, "empty_round": empty_round}
    problem = build("testbed", PROBLEM)
    process = build("participation", BERNOULLI)
    mine, ref = build("algorithm", {**spec, "weights": "fedau", "cutoff": 7}), build("algorithm", spec)
    streams = [Streams(2, 4), Streams(2, 4)]
    states = [algo.init(problem, problem.initial_point(4, s)) for algo, s in zip((mine, ref), streams)]
    pstates = [process.init(4, s) for s in streams]
    counts = init_fedau(4, problem.n_clients)
    for t in range(60):
        (pa, active), (pb, again) = (process.draw(p, t, s) for p, s in zip(pstates, streams))
        pstates = [pa, pb]
        assert torch.equal(active, again)
        states = [mine.step(states[0], Round(t, active, process.probabilities(t), streams[0]), problem),
                  ref.step(states[1], Round(t, active, 1.0 / fedau_weights(counts), streams[1]), problem)]
        counts = update_fedau(counts, active, 7)
        assert torch.equal(states[0]["x"], states[1]["x"]) and torch.equal(states[0]["fedau_sum"], counts["fedau_sum"])
