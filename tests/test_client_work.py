"""Row work (issue 23): only the participants' local steps are computed and drawn, with the random numbers the
dense layout would give them when everyone participates, the same for every algorithm that sees the same
participants, and each row computed with the dense layout's arithmetic."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from theorylab.clocks.events import uniform_pick
from theorylab.kernels.client_work import PairWork, RowWork, client_work, dense_noise
from theorylab.kernels.local_sgd import local_sgd
from theorylab.registry import build
from theorylab.rng import Streams

R, M, D, STEPS = 3, 6, 4, 2


@pytest.fixture(autouse=True)
def rows_at_any_size(monkeypatch):
    """These tiny problems would compute densely (ROWS_MIN): the tests exercise the rows layout itself."""
    monkeypatch.setattr("theorylab.kernels.client_work.ROWS_MIN", 0)


def _problem(diagonal: bool, noise: str = "gaussian"):
    if not diagonal:
        return build("testbed", {"name": "random_quadratic", "n_clients": M, "dim": D, "sigma": 0.7, "seed": 1,
                                 "noise": noise})
    rng = np.random.default_rng(1)
    H = np.einsum("mi,ij->mij", rng.uniform(1, 3, (M, D)), np.eye(D))
    return build("testbed", {"name": "quadratic", "hessians": H.tolist(), "centers": rng.normal(size=(M, D)).tolist(),
                             "sigma": 0.7, "noise": noise})


def _active(seed: int = 0) -> torch.Tensor:
    active = torch.as_tensor(np.random.default_rng(seed).random((R, M)) < 0.5)
    active[:, 0] = True  # every replica has someone
    active[1, 1] = False  # and someone idle
    return active


@pytest.mark.parametrize("noise", ["gaussian", "sphere"])
def test_every_client_counted_draws_the_dense_noise(noise):
    problem = _problem(True, noise)
    rows = problem.sample_rows(Streams(5, R), STEPS, torch.full((R,), M))
    dense = problem.sample(Streams(5, R), STEPS)
    for k in range(STEPS):
        assert torch.equal(rows[k], dense[k].reshape(R * M, D))


@pytest.mark.parametrize("diagonal", [True, False])
def test_rows_equal_the_dense_round_on_the_participants(diagonal):
    """The participants' end points equal a dense local SGD run on the same noise table, bit for bit."""
    problem, active = _problem(diagonal), _active()
    start = torch.randn(R, M, D, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    mine = local_sgd(problem, start, STEPS, 0.1, Streams(7, R), active)
    noise, x = dense_noise(problem, Streams(7, R), STEPS, active), start
    for k in range(STEPS):
        x = problem.stochastic_grads(x, noise[k]).mul_(-0.1).add_(x)
    assert torch.equal(mine[active], x[active])
    if diagonal:  # rows: idle rows are left where they started (full Hessians keep the table: they are meaningless)
        assert torch.equal(mine[~active], start[~active])


def test_the_participants_noise_does_not_depend_on_who_else_computes():
    problem, active = _problem(True), _active()
    alone = RowWork(problem, Streams(2, R), STEPS, active)
    everyone = RowWork(problem, Streams(2, R), STEPS, active, compute_all=True)
    P = int(active.sum())
    for k in range(STEPS):
        assert torch.equal(alone.samples[k], everyone.samples[k][:P])
    assert everyone.samples[0].shape[0] == R * M


def test_a_replica_draws_only_its_participants():
    """Replica r's gradient stream advances by steps x k_r x d draws, whatever the other replicas do."""
    problem, active = _problem(True), _active()
    streams = Streams(4, R)
    client_work(problem, streams, STEPS, active)
    after = streams.normal("gradient", (1,), torch.float32)
    for r in range(R):
        own = Streams(4, R)._generators("gradient")[r]
        torch.empty(STEPS * int(active[r].sum()) * D).normal_(generator=own)
        assert torch.equal(after[r], torch.empty(1).normal_(generator=own))


def test_full_participation_small_problems_and_no_participants_stay_dense(monkeypatch):
    problem = _problem(True)
    assert type(client_work(problem, Streams(0, R), STEPS, _active())).__name__ == "RowWork"
    assert type(client_work(problem, Streams(0, R), STEPS, torch.ones(R, M, dtype=torch.bool))).__name__ == \
        "DenseWork"
    assert type(client_work(problem, Streams(0, R), STEPS, None)).__name__ == "DenseWork"
    monkeypatch.setattr("theorylab.kernels.client_work.ROWS_MIN", M * D + 1)
    assert type(client_work(problem, Streams(0, R), STEPS, _active())).__name__ == "DenseWork"


def _ranked_pick(keys, eligible, k):
    """The earlier implementation: ranks by a double argsort."""
    masked = torch.where(eligible, keys, torch.full_like(keys, 2.0))
    return eligible & (masked.argsort(dim=1).argsort(dim=1) < k.unsqueeze(1))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 12), st.integers(0, 2 ** 31 - 1))
def test_uniform_pick_equals_the_ranked_pick(replicas, n, seed):
    g = torch.Generator().manual_seed(seed)
    keys = torch.rand(replicas, n, dtype=torch.float64, generator=g)
    eligible = torch.rand(replicas, n, generator=g) < 0.6
    k = torch.randint(0, n + 2, (replicas,), generator=g)
    picked = uniform_pick(keys.numpy(), eligible.numpy(), k.numpy())
    assert np.array_equal(picked, _ranked_pick(keys, eligible, k).numpy())


def _pair_problems():
    from theorylab.testbeds.network import image_testbed

    tiny = {"data": {"train_size": 120, "test_size": 40, "channels": 1, "size": 8, "noise": 40.0}, "clients": M,
            "partition": "iid", "batch_size": 5, "eval_train": None, "input_shape": (1, 8, 8)}
    yield "mlp dense", image_testbed("synthetic", model="mlp", strategy="dense", **tiny)
    yield "mlp vmap", image_testbed("synthetic", model="mlp", strategy="vmap", chunk_size=2, **tiny)
    yield "cnn loop", image_testbed("synthetic", model="cnn_cifar", strategy="loop", **tiny)
    yield "leaf", build("testbed", {"name": "synthetic_leaf", "n_clients": M, "batch": 4})


@pytest.mark.parametrize("name, problem", list(_pair_problems()), ids=lambda v: v if isinstance(v, str) else "")
def test_pair_work_equals_the_dense_round_bit_for_bit(name, problem):
    """A problem that computes clients from the dense draw (``pair_grads``) steps only its participants: their end
    points equal the dense step-major round's on the same draw, bit for bit, and the idle rows keep their start (the
    dense round's idle rows: start plus -lr times a zero gradient)."""
    active, d = _active(), problem.dim
    start = problem.initial_point(R, Streams(2, R)).unsqueeze(1).expand(-1, M, -1)
    start = start + 0.01 * torch.randn((R, M, d), dtype=start.dtype, generator=torch.Generator().manual_seed(4))
    work = client_work(problem, Streams(7, R), STEPS, active)
    assert isinstance(work, PairWork)
    x = work.gather(start)
    for k in range(STEPS):
        x = work.grads(x, k).mul_(-0.1).add_(x)
    mine = work.scatter(start, x)
    samples, dense = problem.sample(Streams(7, R), STEPS), start
    for k in range(STEPS):
        dense = problem.stochastic_grads(dense, samples[k], active).mul_(-0.1).add_(dense)
    assert torch.equal(mine, dense)
    assert torch.equal(mine[~active], start[~active])
