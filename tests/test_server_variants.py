"""Server optimiser variants of seed 002 (digest 002 §1.2, §1.7): FedAMSGrad, FedAMS and FedAdam, two steps by hand."""

import math

import pytest
import torch

from theorylab.kernels.server import make_server

DELTAS = (0.2, -0.1)


def _two_steps(spec):
    opt = make_server(spec)
    x = torch.zeros(1, 1, dtype=torch.float64)
    state = opt.init(x)
    for delta in DELTAS:
        x, extra = opt.update(state, x, torch.full((1, 1), delta, dtype=torch.float64))
        state = {**state, **extra}
    return float(x), {k: float(v) for k, v in state.items()}


def test_fedamsgrad_eps_inside_the_root_by_hand():
    x, state = _two_steps({"name": "adam", "lr": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-3, "amsgrad": True,
                           "eps_mode": "inside"})
    m1, v1 = 0.1 * 0.2, 0.01 * 0.04  # 0.02, 4e-4
    x1 = 0.1 * m1 / math.sqrt(v1 + 1e-3)
    m2, v2 = 0.9 * m1 + 0.1 * -0.1, 0.99 * v1 + 0.01 * 0.01  # 0.008, 4.96e-4
    vhat2 = max(v1, v2)
    assert x == pytest.approx(x1 + 0.1 * m2 / math.sqrt(vhat2 + 1e-3), rel=1e-14)
    assert state["server.m"] == pytest.approx(m2, rel=1e-14) and state["server.vmax"] == pytest.approx(vhat2, rel=1e-14)


def test_fedams_floors_vhat_at_eps_by_hand():
    x, state = _two_steps({"name": "adam", "lr": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 4.5e-4, "amsgrad": True,
                           "eps_mode": "floor"})
    m1, v1 = 0.02, 4e-4
    vhat1 = max(v1, 4.5e-4)  # eps wins
    m2, v2 = 0.008, 4.96e-4
    vhat2 = max(vhat1, v2, 4.5e-4)  # v wins
    assert x == pytest.approx(0.1 * m1 / math.sqrt(vhat1) + 0.1 * m2 / math.sqrt(vhat2), rel=1e-14)
    assert state["server.vmax"] == pytest.approx(vhat2, rel=1e-14)


def test_fedadam_tau_outside_is_the_default():
    x, _ = _two_steps({"name": "adam", "lr": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-3})
    assert x == pytest.approx(0.1 * 0.02 / (math.sqrt(4e-4) + 1e-3) + 0.1 * 0.008 / (math.sqrt(4.96e-4) + 1e-3),
                              rel=1e-14)


@pytest.mark.parametrize("spec", [{"name": "adam", "eps_mode": "middle"}, {"name": "adam", "eps_mode": "floor"}])
def test_bad_eps_mode_is_refused(spec):
    with pytest.raises(ValueError, match="eps_mode"):
        make_server(spec)
