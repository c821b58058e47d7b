"""FedAWE's baselines (digest 000 §2.4): FedAU, F3AST, MIFA, FedVARP against rounds computed by hand."""

import numpy as np
import pytest
import torch

from theorylab.testbeds.quadratic import random_quadratic, scalar_quadratic
from theorylab.kernels.algorithm import Round
from theorylab.kernels.f3ast import f3ast
from theorylab.kernels.fedau import fedau
from theorylab.kernels.fedavg import fedavg
from theorylab.kernels.fedvarp import fedvarp
from theorylab.kernels.mifa import mifa
from theorylab.rng import Streams

# Two scalar clients, F_1 = x^2/2, F_2 = (x-2)^2/2, one local GD step of 0.5 from x: Delta_1 = -0.5 x,
# Delta_2 = -0.5 (x - 2).
PROBS = np.array([0.5, 0.5])


def _trajectory(algo, masks, x0=1.0):
    problem = scalar_quadratic([0.0, 2.0], x0=x0)
    streams = Streams(0, 1)
    state = algo.init(problem, problem.initial_point(1, streams))
    xs = []
    for t, mask in enumerate(masks):
        state = algo.step(state, Round(t, torch.tensor([mask]), PROBS, streams), problem)
        xs.append(state["x"][0, 0].item())
    return xs, state


def test_mifa_by_hand():
    # t0: both from 1: Y = (-0.5, 0.5) -> x = 1 + 0 = 1.  t1: client 1 from 1: Y_1 = -0.5 -> x = 1 + (-0.5 + 0.5)/2 = 1.
    # t2: client 2 from 1: Y_2 = 0.5 -> 1.  Use an asymmetric start instead: x0 = 0.
    # t0 (both, x=0): Y = (0, 1) -> x = 0.5.  t1 (none): the table is applied again -> x = 1.0.
    # t2 (client 1, x=1): Y_1 = -0.5 -> x = 1 + (-0.5 + 1)/2 = 1.25.
    xs, _ = _trajectory(mifa(local_steps=1, lr=0.5), [[True, True], [False, False], [True, False]], x0=0.0)
    assert xs == pytest.approx([0.5, 1.0, 1.25])


def test_fedvarp_by_hand():
    # t0 (client 2, x=0): Delta_2 = 1, y = 0 -> v = 1 + 0 -> x = 1; y = (0, 1).
    # t1 (none): unchanged.  t2 (client 1, x=1): Delta_1 = -0.5, v = (-0.5 - 0) + mean(0, 1) = 0 -> x = 1; y = (-0.5, 1).
    # t3 (client 2, x=1): Delta_2 = 0.5, v = (0.5 - 1) + mean(-0.5, 1) = -0.25 -> x = 0.75.
    xs, state = _trajectory(fedvarp(local_steps=1, lr=0.5), [[False, True], [False, False], [True, False], [False, True]],
                            x0=0.0)
    assert xs == pytest.approx([1.0, 1.0, 1.0, 0.75])
    assert state["table"][0, :, 0].tolist() == pytest.approx([-0.5, 0.5])


def test_fedau_weights_by_hand():
    # Client 1 active at t0, t3; client 2 active at t3 only.  Cut-off K = 2.
    # t0: client 1, no intervals -> omega 1: x = 0 + (1/2) * 0 = 0 (Delta_1 = 0 at x = 0); I_1 = [1].
    #     client 2 inactive: c_2 = 1.
    # t1: nobody: c_1 = 1; c_2 = 2 >= K -> I_2 = [2], c_2 = 0.  x unchanged.
    # t2: nobody: c_1 = 2 >= K -> I_1 = [1, 2], c_1 = 0; c_2 = 1.
    # t3: both from x = 0: omega_1 = 1.5, omega_2 = 2; Delta = (0, 1) -> x = (1.5 * 0 + 2 * 1) / 2 = 1.
    xs, state = _trajectory(fedau(local_steps=1, lr=0.5, cutoff=2),
                            [[True, False], [False, False], [False, False], [True, True]], x0=0.0)
    assert xs == pytest.approx([0.0, 0.0, 0.0, 1.0])
    assert state["fedau_sum"][0].tolist() == [4.0, 4.0] and state["fedau_num"][0].tolist() == [3.0, 2.0]
    assert state["fedau_gap"][0].tolist() == [0.0, 0.0]


def test_f3ast_by_hand():
    # beta = 0.5, r(0) = 1, pi = 1/2. t0 (client 2, x = 0): x = 0 + (1/2)(1/1) * 1 = 0.5; r = (0.5, 1).
    # t1 (both, x = 0.5): Delta = (-0.25, 0.75); weights (1/2)/0.5 = 1 and 1/2 -> x = 0.5 - 0.25 + 0.375 = 0.625.
    xs, state = _trajectory(f3ast(local_steps=1, lr=0.5, beta=0.5), [[False, True], [True, True]], x0=0.0)
    assert xs == pytest.approx([0.5, 0.625])
    assert state["rate"][0].tolist() == pytest.approx([0.75, 1.0])


def test_f3ast_budget_keeps_the_rarest_selected_clients():
    # budget 1, beta = 0.5: t0 only client 0 available -> selected, r = (1, 0.5);
    # t1 both available: client 1 has the larger pi/r = 1 (vs 0.5) -> only it is selected, r = (0.5, 0.75).
    algo = f3ast(local_steps=1, lr=0.5, beta=0.5, budget=1)
    _, state = _trajectory(algo, [[True, False], [True, True]], x0=0.0)
    assert state["rate"][0].tolist() == pytest.approx([0.5, 0.75])


@pytest.mark.parametrize("make", [lambda: mifa(local_steps=3, lr=0.1), lambda: fedvarp(local_steps=3, lr=0.1),
                                  lambda: fedau(local_steps=3, lr=0.1)])
def test_full_participation_is_fedavg_over_all(make):
    """MIFA, FedVARP and FedAU reduce to FedAvg over all clients when everybody participates every round."""
    problem = random_quadratic(5, 3, seed=3, sigma=0.4)
    finals = []
    for algo in (make(), fedavg(local_steps=3, lr=0.1, aggregation="all")):
        streams = Streams(1, 3)
        state = algo.init(problem, problem.initial_point(3, streams))
        for t in range(8):
            state = algo.step(state, Round(t, torch.ones(3, 5, dtype=torch.bool), np.ones(5), streams), problem)
        finals.append(state["x"])
    assert torch.allclose(finals[0], finals[1], atol=1e-13)


@pytest.mark.parametrize("make, message", [
    (lambda: fedau(cutoff=0), "cutoff"), (lambda: f3ast(beta=0.0), "beta"), (lambda: f3ast(budget=0), "budget"),
    (lambda: f3ast(initial_rate=1.5), "initial_rate"), (lambda: mifa(local_steps=0), "local_steps"),
    (lambda: fedvarp(local_steps=1.5), "local_steps"),
])
def test_bad_parameters(make, message):
    with pytest.raises(ValueError, match=message):
        make()
