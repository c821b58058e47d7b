r"""Decentralised baselines of seed 002 Table 8 [EXTERNAL; digest 002 §1.7]: DSGD, PGA and DAdam.

All :math:`N` clients keep a model (rows of :math:`X`, all equal to :math:`x_1` at start) and there is no server; a
round is :math:`\mathcal I` iterations :math:`k` of

.. math::
    X_{k+1} = W X_k - \eta\, D_k,

with :math:`D_k` row :math:`i`:

* DSGD (Lian et al. 2017): :math:`D_k^i = g^i(x^i_k)`, a stochastic gradient at the client's own model;
* DAdam (Nazari et al. 2019, DADAM): :math:`m^i = \beta_1m^i + (1-\beta_1)g^i`, :math:`v^i = \beta_2v^i +
  (1-\beta_2)(g^i)^2`, :math:`\hat v^i = \max(\hat v^i, v^i)`, :math:`D_k^i = m^i/\sqrt{\hat v^i+\epsilon}` (the
  :math:`\epsilon` placement of seed 002's eq. (2); the reading is ours);

PGA (Chen et al. 2021b) is DSGD with ``average_every = H``: every :math:`H`-th iteration is followed by an exact
global average :math:`X\leftarrow JX`.  The theory's point is the client average :math:`\bar x = \frac1N\mathbf
1^\top X` (``"server"``).  The paper gives no settings and does not say which clients are active in a round
[UNCLEAR]: here every client computes at every iteration and the participation mask is not read.
"""

from __future__ import annotations

import torch

from theorylab.kernels.afga import resolve_topology
from theorylab.kernels.algorithm import Algorithm
from theorylab.kernels.local_sgd import check_local_steps
from theorylab.kernels.schedules import make_schedule
from theorylab.registry import register
from theorylab.topology.matrix import gossip as mix
from theorylab.validation import integer


def _decentralized(label: str, local_steps: int, lr, topology, average_every: int | None, adaptive: dict | None):
    steps, schedule, topo = check_local_steps(local_steps), make_schedule(lr), resolve_topology(topology)
    if average_every is not None:
        average_every = integer("average_every", average_every, 1)

    def init(problem, x0):
        if topo.n != problem.n_clients:
            raise ValueError(f"topology has {topo.n} clients but the testbed has {problem.n_clients}")
        X = x0.unsqueeze(1).expand(-1, problem.n_clients, -1).clone()
        extra = {} if adaptive is None else {key: torch.zeros_like(X) for key in ("m", "v", "vmax")}
        return {"X": X, **extra}

    def step(state, rnd, problem):
        W, X, eta = topo.tensor(problem.dtype, problem.device), state["X"], schedule(rnd.t)
        new = dict(state)
        samples = problem.sample(rnd.streams, steps)
        for k in range(steps):
            direction = problem.stochastic_grads(X, samples[k])
            if adaptive is not None:
                b1, b2 = adaptive["beta1"], adaptive["beta2"]
                new["m"] = b1 * new["m"] + (1 - b1) * direction
                new["v"] = b2 * new["v"] + (1 - b2) * direction * direction
                new["vmax"] = torch.maximum(new["vmax"], new["v"])
                direction = new["m"] / (new["vmax"] + adaptive["eps"]).sqrt()
            X = mix(W, X) - eta * direction
            if average_every is not None and (rnd.t * steps + k + 1) % average_every == 0:
                X = X.mean(1, keepdim=True).expand_as(X).clone()
        new["X"] = X
        return new

    return Algorithm(label, init, step, lambda state: {"server": state["X"].mean(1)})


@register("algorithm", "dsgd")
def dsgd(local_steps: int = 5, lr=0.05, topology=None, average_every: int | None = None) -> Algorithm:
    """DSGD (X <- W X - eta G) over a gossip topology; PGA with average_every = H (exact average every H steps)."""
    if topology is None:
        raise ValueError("topology is required (e.g. {'name': 'ring', 'n': N})")
    label = "dsgd" if average_every is None else f"pga[H={average_every}]"
    return _decentralized(label, local_steps, lr, topology, average_every, None)


@register("algorithm", "dadam")
def dadam(local_steps: int = 5, lr=0.01, topology=None, beta1: float = 0.9, beta2: float = 0.99,
          eps: float = 1e-8) -> Algorithm:
    """DAdam (DADAM): per-client AMSGrad direction m / sqrt(vhat + eps) with gossip, X <- W X - eta D."""
    if topology is None:
        raise ValueError("topology is required (e.g. {'name': 'ring', 'n': N})")
    for name, value in (("beta1", beta1), ("beta2", beta2)):
        if not 0 <= value < 1:
            raise ValueError(f"{name} must lie in [0, 1); got {value!r}")
    if not eps > 0:
        raise ValueError(f"eps must be > 0; got {eps!r}")
    return _decentralized("dadam", local_steps, lr, topology, None, {"beta1": beta1, "beta2": beta2, "eps": eps})
