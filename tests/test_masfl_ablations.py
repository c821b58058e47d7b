"""MasFL / AdaMasFL ablation switches (seed 004 Fig. 6; digest 004 §2.6, §5.1 item 6): each against a hand
computation on a stale schedule and against an equivalence — beta = 1 is a SAGA-like table update, MasFL with
beta = 1 and no control variates is FedBuff, AdaMasFL without normalisation is MasFL when nothing is stale."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import drive
from test_masfl_kernels import SCHEDULE, A, U, problem
from theorylab.figures.masfl_curves import async_quadratic
from theorylab.config import RunConfig
from theorylab.kernels.masfl import adamasfl, masfl
from theorylab.runner import run


def ablated_by_hand(beta, gamma, eta, K, *, cv, normalise, delta_server, schedule=SCHEDULE * 2):
    """Alg. 1-4 with the ablations read literally (sigma = 0): without control variates the client direction is
    beta grad + (1 - beta) g_stale and the server momentum takes the fresh uploads' mean."""
    grad = lambda i, th: A[i] * (th - U[i])  # noqa: E731
    N = len(U)
    theta = np.zeros(2)
    c_i = [grad(i, theta) for i in range(N)]
    c = sum(c_i) / N
    g = c.copy()
    start = [(theta, c.copy(), g.copy()) for _ in range(N)]
    for arrived, _, dispatched in schedule:
        uploads = {}
        for i in np.flatnonzero(arrived):
            th0, c0, g0 = start[i]
            th, grads = th0.copy(), []
            for _ in range(K):
                grads.append(grad(i, th))
                step = (beta * (grads[-1] - c_i[i] + c0) if cv else beta * grads[-1]) + (1 - beta) * g0
                th = th - eta * (step / np.linalg.norm(step) if normalise else step)
            uploads[i] = (sum(grads) / K, (th0 - th) / (eta * K))
        S = len(uploads)
        change = sum(uploads[i][0] - c_i[i] for i in uploads)
        fresh = sum(new for new, _ in uploads.values()) / S
        g = beta * ((change / S + c) if cv else fresh) + (1 - beta) * g
        theta = theta - gamma * (sum(d for _, d in uploads.values()) / S if delta_server else g)
        c = c + change / N
        for i, (new, _) in uploads.items():
            c_i[i] = new
        for i in np.flatnonzero(dispatched):
            start[i] = (theta, c.copy(), g.copy())
    return theta, g


@pytest.mark.parametrize("beta", [0.4, 1.0])
@pytest.mark.parametrize("kernel,kwargs,normalise", [
    (masfl, {"control_variates": False}, False),
    (adamasfl, {"control_variates": False}, True),
    (adamasfl, {"normalise": False}, False),
    (adamasfl, {"normalise": False, "control_variates": False}, False)])
def test_ablations_match_hand_computation_on_a_stale_schedule(kernel, kwargs, normalise, beta):
    state = drive(kernel(beta=beta, gamma=0.3, eta=0.1, local_steps=3, **kwargs), problem(), SCHEDULE * 2)
    theta, g = ablated_by_hand(beta, 0.3, 0.1, 3, cv=kwargs.get("control_variates", True), normalise=normalise,
                               delta_server=kernel is adamasfl)
    np.testing.assert_allclose(state["x"][0].numpy(), theta, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(state["g"][0].numpy(), g, rtol=1e-12, atol=1e-13)


def test_beta_one_is_a_saga_like_table_update():
    """digest 004 §2.6: at beta = 1, theta^{t+1} = theta^t - gamma (c^t + (1/S) sum_{S_t} (c_i^{t+1} - c_i^t)) and
    the client direction is grad - c~_i + c^{t - tau} (SCAFFOLD-like): no momentum is left."""
    gamma, eta, K = 0.2, 0.07, 2
    grad = lambda i, th: A[i] * (th - U[i])  # noqa: E731
    theta = np.zeros(2)
    table = np.array([grad(i, theta) for i in range(3)])
    sent = [(theta, table.mean(0))] * 3
    for arrived, _, dispatched in SCHEDULE * 2:
        new = table.copy()
        for i in np.flatnonzero(arrived):
            th, total = sent[i][0].copy(), np.zeros(2)
            for _ in range(K):
                total += grad(i, th)
                th = th - eta * (grad(i, th) - table[i] + sent[i][1])
            new[i] = total / K
        chosen = np.flatnonzero(arrived)
        theta = theta - gamma * (table.mean(0) + (new[chosen] - table[chosen]).sum(0) / len(chosen))
        table = new
        for i in np.flatnonzero(dispatched):
            sent[i] = (theta, table.mean(0))
    state = drive(masfl(beta=1.0, gamma=gamma, eta=eta, local_steps=K), problem(), SCHEDULE * 2)
    np.testing.assert_allclose(state["x"][0].numpy(), theta, rtol=1e-12, atol=1e-13)


def test_masfl_without_momentum_and_control_variates_is_fedbuff():
    """beta = 1, no control variates: local SGD with eta, server theta - gamma mean c~_i = theta + gamma / (eta K)
    mean (theta_i^K - theta^{t - tau}): FedBuff with server step gamma / (eta K), under the same Mode B clock."""
    gamma, eta, K = 0.3, 0.05, 4
    base = dict(rounds=40, replicas=3, seed=5, **async_quadratic(8, 2, 5, sigma=0.0))
    mine = run(RunConfig(algorithm={"name": "masfl", "beta": 1.0, "gamma": gamma, "eta": eta, "local_steps": K,
                                    "control_variates": False}, **base))
    ref = run(RunConfig(algorithm={"name": "fedbuff", "lr": eta, "local_steps": K,
                                   "server": {"name": "sgd", "lr": gamma / (eta * K)}}, **base))
    np.testing.assert_allclose(mine.final["server"], ref.final["server"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cv", [True, False])
def test_adamasfl_without_normalisation_is_masfl_when_nothing_is_stale(cv):
    """Delta_i = beta (c~_i^{t+1} - c~_i) + u^t when every client is fresh, whose mean over S_t is g^{t+1}: the
    server steps agree, noise included (the same random streams are drawn in the same order)."""
    base = dict(problem={"name": "random_quadratic", "n_clients": 6, "dim": 3, "sigma": 0.4, "seed": 1},
                participation={"name": "uniform_k", "n_clients": 6, "k": 2}, rounds=30, replicas=3, seed=2)
    steps = {"beta": 0.3, "gamma": 0.1, "eta": 0.05, "local_steps": 3, "control_variates": cv}
    ada = run(RunConfig(algorithm={"name": "adamasfl", "normalise": False, **steps}, **base))
    mas = run(RunConfig(algorithm={"name": "masfl", **steps}, **base))
    np.testing.assert_allclose(ada.final["server"], mas.final["server"], rtol=1e-11, atol=1e-13)


def test_adamasfl_without_normalisation_differs_from_masfl_under_staleness():
    ada = drive(adamasfl(0.4, 0.3, 0.1, 3, normalise=False), problem(), SCHEDULE)["x"]
    mas = drive(masfl(0.4, 0.3, 0.1, 3), problem(), SCHEDULE)["x"]
    assert float(abs(ada - mas).max()) > 1e-6


def test_switch_defaults_are_the_paper_algorithms_bit_for_bit():
    for kernel, extra in ((masfl, {"control_variates": True}), (adamasfl, {"control_variates": True,
                                                                          "normalise": True})):
        plain = drive(kernel(0.4, 0.3, 0.1, 3), problem(sigma=0.5), SCHEDULE * 2, replicas=2)
        named = drive(kernel(0.4, 0.3, 0.1, 3, **extra), problem(sigma=0.5), SCHEDULE * 2, replicas=2)
        assert all(bool((plain[k] == named[k]).all()) for k in plain)
    assert masfl().name == "masfl[0.5]" and adamasfl(normalise=False).name == "adamasfl[0.5,no normalise]"


@pytest.mark.parametrize("kwargs", [{"control_variates": "no"}, {"normalise": 2}])
def test_bad_switches_are_refused(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        adamasfl(**kwargs)


def test_fig6_renders_every_ablation(tmp_path):
    from theorylab.figures import masfl_fig6
    from theorylab.claims import Context

    path = masfl_fig6.render(Context(quick=True, figure_dir=tmp_path))
    assert path.exists() and path.stat().st_size > 10_000
    assert {k: list(v) for k, v in masfl_fig6.specs().items()} == {
        "MasFL": ["full", "β = 1", "no control variates"],
        "AdaMasFL": ["full", "β = 1", "no control variates", "no normalisation"]}
