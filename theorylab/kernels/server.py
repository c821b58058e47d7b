r"""FedOpt server optimisers (seed 001 Alg. 2; Reddi et al. 2021), applied to the pseudo-gradient :math:`-\Delta^t`.

Each is a pair of pure functions ``init(x) -> extra state`` and
``update(state, x, delta) -> (x', state')`` over the flat state dict (keys ``server.*``):

* ``sgd``: :math:`x^{t+1} = x^t + \eta_g\Delta^t` (FedAvg when :math:`\eta_g = 1`);
* ``momentum``: :math:`v^{t+1} = \beta v^t + \Delta^t`, :math:`x^{t+1} = x^t + \eta_g v^{t+1}` (FedAvgM);
* ``adam``: :math:`m^{t+1}=\beta_1m^t+(1-\beta_1)\Delta^t`, :math:`v^{t+1}=\beta_2v^t+(1-\beta_2)(\Delta^t)^2`,
  :math:`x^{t+1}=x^t+\eta_g m^{t+1}/(\sqrt{v^{t+1}}+\epsilon)` without bias correction (FedAdam);
  ``amsgrad=True`` uses :math:`\hat v^{t+1}=\max(\hat v^t, v^{t+1})` in the denominator.
  Where :math:`\epsilon` enters (``eps_mode``, seed 002 eq. (2) and digest 002 §1.2, §1.7):
  ``"outside"`` :math:`m/(\sqrt{v}+\epsilon)` (FedAdam's :math:`\tau`); ``"inside"`` :math:`m/\sqrt{\hat v+\epsilon}`
  (FedAMSGrad, with ``amsgrad=True``); ``"floor"`` :math:`\hat v^{t+1}=\max(\hat v^t, v^{t+1}, \epsilon)`,
  :math:`m/\sqrt{\hat v}` (FedAMS, Wang et al. 2022b [EXTERNAL], needs ``amsgrad=True``).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import torch


class ServerOpt(NamedTuple):
    init: Callable[[torch.Tensor], dict]
    update: Callable[[dict, torch.Tensor, torch.Tensor], tuple[torch.Tensor, dict]]


def _positive(name: str, value: float) -> float:
    if not value > 0:
        raise ValueError(f"server {name} must be > 0; got {value}")
    return float(value)


def _unit(name: str, value: float) -> float:
    if not 0 <= value < 1:
        raise ValueError(f"server {name} must lie in [0, 1); got {value}")
    return float(value)


def sgd(lr: float = 1.0) -> ServerOpt:
    lr = _positive("lr", lr)
    return ServerOpt(lambda x: {}, lambda state, x, delta: (x + lr * delta, {}))


def momentum(lr: float = 1.0, beta: float = 0.9) -> ServerOpt:
    lr, beta = _positive("lr", lr), _unit("beta", beta)

    def update(state, x, delta):
        v = beta * state["server.v"] + delta
        return x + lr * v, {"server.v": v}

    return ServerOpt(lambda x: {"server.v": torch.zeros_like(x)}, update)


EPS_MODES = ("outside", "inside", "floor")


def adam(lr: float = 0.01, beta1: float = 0.9, beta2: float = 0.99, eps: float = 1e-3, amsgrad: bool = False,
         eps_mode: str = "outside") -> ServerOpt:
    lr, eps = _positive("lr", lr), _positive("eps", eps)
    beta1, beta2 = _unit("beta1", beta1), _unit("beta2", beta2)
    if eps_mode not in EPS_MODES or (eps_mode == "floor" and not amsgrad):
        raise ValueError(f"server eps_mode must be one of {EPS_MODES} ('floor' only with amsgrad=True); "
                         f"got {eps_mode!r}")

    def init(x):
        state = {"server.m": torch.zeros_like(x), "server.v": torch.zeros_like(x)}
        if amsgrad:
            state["server.vmax"] = torch.zeros_like(x)
        return state

    def update(state, x, delta):
        m = beta1 * state["server.m"] + (1 - beta1) * delta
        v = beta2 * state["server.v"] + (1 - beta2) * delta * delta
        new = {"server.m": m, "server.v": v}
        denom = v
        if amsgrad:
            denom = torch.maximum(state["server.vmax"], v)
            denom = new["server.vmax"] = denom.clamp(min=eps) if eps_mode == "floor" else denom
        root = {"outside": lambda: denom.sqrt() + eps, "inside": lambda: (denom + eps).sqrt(), "floor": denom.sqrt}
        return x + lr * m / root[eps_mode](), new

    return ServerOpt(init, update)


SERVERS = {"sgd": sgd, "momentum": momentum, "adam": adam}


def make_server(spec: dict | None) -> ServerOpt:
    """``None`` means plain ``sgd`` with :math:`\\eta_g = 1`."""
    spec = {"name": "sgd"} if spec is None else dict(spec)
    name = spec.pop("name", None)
    if name not in SERVERS:
        raise ValueError(f"server optimiser must be one of {tuple(SERVERS)}; got {name!r}")
    try:
        return SERVERS[name](**spec)
    except TypeError as err:
        raise ValueError(f"bad parameters for server optimiser {name!r}: {err}") from None
