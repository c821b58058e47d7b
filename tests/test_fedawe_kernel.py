"""FedAWE (seed 000 Alg. 1) against rounds computed by hand, and its FedAvg special case."""

import numpy as np
import pytest
import torch

from theorylab.testbeds.quadratic import random_quadratic, scalar_quadratic
from theorylab.kernels.algorithm import Round
from theorylab.kernels.fedavg import fedavg
from theorylab.kernels.fedawe import fedawe
from theorylab.rng import Streams

# Scalar clients F_1 = x^2/2 (u_1 = 0), F_2 = (x-2)^2 (curvature 2), x0 = 1, one local GD step of 0.1:
#   G_1(x) = 0.1 x,  G_2(x) = 0.2 (x - 2).
PROBS = np.array([0.5, 0.5])


def _run(masks, **kwargs):
    problem = scalar_quadratic([0.0, 2.0], curvatures=[1.0, 2.0], x0=1.0)
    algo = fedawe(local_steps=1, lr=0.1, **kwargs)
    streams = Streams(0, 1)
    state = algo.init(problem, problem.initial_point(1, streams))
    for t, mask in enumerate(masks):
        state = algo.step(state, Round(t, torch.tensor([mask]), PROBS, streams), problem)
    return algo, state


def test_round_by_hand():
    # t=0: only client 1 (multiplier 0 - (-1) = 1): x1_dag = 1 - 0.1 = 0.9 -> server 0.9, client 1 gets 0.9.
    # t=1: nobody: nothing changes.
    # t=2: only client 2, last active never -> multiplier 2 - (-1) = 3; it restarts from its own x_2 = 1:
    #      x2_dag = 1 - 3 * 0.2 * (1 - 2) = 1.6 -> server 1.6, client 2 gets 1.6, client 1 keeps 0.9.
    # t=3: both; multipliers 3 - 0 = 3 (client 1), 1 (client 2):
    #      x1_dag = 0.9 - 3 * 0.09 = 0.63, x2_dag = 1.6 - 0.2 * (-0.4) = 1.68 -> server 1.155 for both.
    algo, state = _run([[True, False], [False, False], [False, True], [True, True]])
    assert state["x"][0, 0].item() == pytest.approx(1.155)
    assert state["xi"][0, :, 0].tolist() == pytest.approx([1.155, 1.155])
    assert state["tau"][0].tolist() == [3, 3]
    _, mid = _run([[True, False], [False, False], [False, True]])
    assert mid["xi"][0, :, 0].tolist() == pytest.approx([0.9, 1.6])
    assert mid["tau"][0].tolist() == [0, 2]
    points = algo.points(mid)
    assert points["server"][0, 0].item() == pytest.approx(1.6) and points["mean"][0, 0].item() == pytest.approx(1.25)


def test_first_participation_echoes_t_plus_one():
    _, state = _run([[False, False]] * 4 + [[False, True]])
    assert state["xi"][0, 1, 0].item() == pytest.approx(1 - 5 * 0.2 * (1 - 2))


def test_empty_round_changes_nothing():
    _, before = _run([[True, False], [False, True]])
    _, after = _run([[True, False], [False, True], [False, False]])
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_server_clip_matches_the_official_code():
    # t=0, both active from x=1: echoed update mean = (-0.1 + 0.2)/2 = 0.05; clip to 0.02 -> server 1.02.
    _, clipped = _run([[True, True]], clip_norm=0.02)
    assert clipped["x"][0, 0].item() == pytest.approx(1.02)
    _, loose = _run([[True, True]], clip_norm=10.0)
    _, plain = _run([[True, True]])
    assert torch.equal(loose["x"], plain["x"])


def test_without_echo_and_with_broadcast_it_is_fedavg_over_active():
    problem = random_quadratic(6, 3, seed=4, sigma=0.7)
    rng = np.random.default_rng(1)
    masks = torch.as_tensor(rng.random((12, 5, 6)) < 0.4)  # includes empty rounds for some replicas
    states = []
    for algo in (fedawe(local_steps=3, lr=0.1, echo=False, broadcast="all"), fedavg(local_steps=3, lr=0.1)):
        streams = Streams(2, 5)
        state = algo.init(problem, problem.initial_point(5, streams))
        for t in range(len(masks)):
            state = algo.step(state, Round(t, masks[t], np.full(6, 0.4), streams), problem)
        states.append(algo.points(state)["server"])
    assert torch.allclose(states[0], states[1], atol=1e-13)


def test_analysis_options():
    algo, state = _run([[True, False], [True, True]], client_points=True, keep_innovation=True)
    points = algo.points(state)
    assert set(points) == {"server", "mean", "client0", "client1"}
    # round 1: client 1 from 0.9 (G = 0.09), client 2 from 1 (G = -0.2)
    assert state["innovation"][0, :, 0].tolist() == pytest.approx([0.09, -0.2])


def test_mean_moves_like_fedavg_over_all_with_echo_weights():
    """Digest 000 §2.1: xbar^{t+1} = xbar^t - (eta_g/m) sum_{i in A} (t - tau_i(t)) G_i^t (W is doubly stochastic)."""
    problem = random_quadratic(5, 2, seed=0, sigma=0.3)
    algo = fedawe(local_steps=2, lr=0.05, server_lr=1.5, keep_innovation=True)
    streams = Streams(3, 4)
    state = algo.init(problem, problem.initial_point(4, streams))
    rng = np.random.default_rng(0)
    for t in range(15):
        mask = torch.as_tensor(rng.random((4, 5)) < 0.5)
        mult = (t - state["tau"]).double()
        new = algo.step(state, Round(t, mask, np.full(5, 0.5), streams), problem)
        expected = state["xi"].mean(1) - 1.5 / 5 * (mult.unsqueeze(-1) * new["innovation"]).sum(1)
        assert torch.allclose(new["xi"].mean(1), expected, atol=1e-13)
        state = new


@pytest.mark.parametrize("kwargs, message", [
    (dict(local_steps=0), "local_steps"), (dict(server_lr=0.0), "server_lr"), (dict(clip_norm=-1.0), "clip_norm"),
    (dict(broadcast="some"), "broadcast"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fedawe(**kwargs)


def _trajectory(name: str, device: str, dtype: str) -> torch.Tensor:
    """Final server models of 16 replicas after 300 rounds of ``name`` on a noiseless quadratic, with participation
    masks drawn once on the CPU (so both devices see the same masks; the devices' own streams differ)."""
    from theorylab.config import RunConfig
    from theorylab.runner import build_run

    probs = np.array([0.3, 0.9] * 4)
    config = RunConfig(problem={"name": "random_quadratic", "n_clients": 8, "dim": 4, "seed": 1, "sigma": 0.0},
                       participation={"name": "bernoulli", "p": probs.tolist()},
                       algorithm={"name": name, "local_steps": 2, "lr": 0.05}, rounds=300, replicas=16,
                       device=device, dtype=dtype)
    problem, _, algo = build_run(config)
    streams = Streams(0, 16, device)
    masks = torch.from_numpy(np.random.default_rng(0).random((300, 16, 8)) < probs)
    state = algo.init(problem, problem.initial_point(16, streams))
    for t, mask in enumerate(masks):
        state = algo.step(state, Round(t, mask.to(device), probs, streams), problem)
    return algo.points(state)["server"].double().cpu()


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["fedawe", "fedau", "f3ast", "mifa", "fedvarp"])
def test_kernels_on_cuda_in_float32_follow_the_cpu_in_float64(name):
    """Device- and dtype-agnostic kernels: on the same masks and a noiseless problem the float32 GPU trajectory
    stays within float32 round-off (1e-4 relative after 300 contracting rounds) of the float64 CPU one."""
    gpu, cpu = _trajectory(name, "cuda", "float32"), _trajectory(name, "cpu", "float64")
    assert torch.isfinite(gpu).all()
    assert (gpu - cpu).norm() <= 1e-4 * cpu.norm()
