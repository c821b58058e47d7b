r"""P-FedAvg (seed 003 §2.4, L163–185; digest 003 §2): local SGD on performative data, aggregation every E steps.

One kernel round is :math:`E` local iterations :math:`t=rE,\dots,rE+E-1`; every client starts from the
broadcast model and, at each local step, draws a fresh sample from its own distribution map evaluated at
its *current local* model, :math:`Z_i^{t+1}\sim\mathcal D_i(\theta_i^t)` (through the problem's
``sample``/``stochastic_grads``: the problem pushes base randomness forward at the model it is given):

.. math::
    w_i^{t+1}=\theta_i^t-\eta_t\,q_i\nabla_\theta\ell(\theta_i^t;Z_i^{t+1}),\qquad
    \theta_i^{(r+1)E}=\sum_ja_jw_j^{(r+1)E}\ \ \text{for all } i\ \text{(broadcast)},

with the random weights :math:`a` and gradient scales :math:`q` of the aggregation ``scheme``
(:mod:`theorylab.performative.schemes`: ``full``, ``I``, ``II``, ``II_rescaled``, and the released code's
``full_uniform``).  The step size :math:`\eta_t` is indexed by the local iteration :math:`t` (not the round),
as in the theorems: a number (constant) or a schedule spec, e.g. the authors'
:math:`100/(t+10^4)` = ``{"name": "inverse", "lr0": 0.01, "t0": 1e4}`` and the theorems'
:math:`2/(\tilde\mu(t+\gamma))` = ``{"name": "inverse", "lr0": 2/(mu_tilde*gamma), "t0": gamma}``.

Every client computes in every round (the paper's P-FedAvg has no availability process); the sample
:math:`S` only decides whose work is averaged, so the kernel draws it itself and must run under full
participation, :data:`FULL_PARTICIPATION` (``cyclic`` with one group).  ``points`` is the broadcast model,
which equals the virtual average :math:`\bar\theta^t=\sum_ip_i\theta_i^t` at every aggregation step.
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Algorithm
from theorylab.kernels.schedules import make_schedule
from theorylab.performative.schemes import SCHEMES, check_scheme, gradient_scales, sample_weights
from theorylab.registry import register

DEFAULT_LR = {"name": "inverse", "lr0": 0.01, "t0": 1e4}  # the authors' 100/(t + 10^4) [R]


def full_participation(n_clients: int) -> dict:
    """Participation spec under which P-FedAvg runs: every client, every round."""
    return {"name": "cyclic", "n_clients": int(n_clients), "groups": 1}


def pfedavg_params(local_steps: int = 5, lr=DEFAULT_LR, scheme: str = "full", k: int | None = None) -> dict:
    """Validated P-FedAvg parameters (shared by the kernel and the exact-moment engine)."""
    if int(local_steps) != local_steps or local_steps < 1:
        raise ValueError(f"local_steps (E) must be an integer >= 1; got {local_steps}")
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got {scheme!r}")
    make_schedule(lr)  # validates the schedule
    return {"local_steps": int(local_steps), "lr": lr, "scheme": scheme, "k": k}


@register("algorithm", "pfedavg")
def pfedavg(local_steps: int = 5, lr=DEFAULT_LR, scheme: str = "full", k: int | None = None) -> Algorithm:
    """P-FedAvg: E local steps on freshly shifted data, then full / Scheme I / Scheme II aggregation."""
    prm = pfedavg_params(local_steps, lr, scheme, k)
    E, schedule = prm["local_steps"], make_schedule(lr)

    def init(problem, x0):
        check_scheme(scheme, k, problem.n_clients)
        return {"x": x0}

    def step(state, rnd, problem):
        if not bool(rnd.active.all()):
            raise ValueError("pfedavg draws its own client sample; run it under full participation "
                             "(participation spec {'name': 'cyclic', 'n_clients': N, 'groups': 1})")
        n = problem.n_clients
        a = sample_weights(scheme, problem.weights, k, rnd.streams)  # (R, N)
        q = torch.as_tensor(gradient_scales(scheme, problem.weights.cpu().numpy()), dtype=problem.dtype,
                            device=problem.device).view(1, n, 1)
        used = a != 0
        samples = problem.sample(rnd.streams, E)
        x = state["x"].unsqueeze(1).expand(-1, n, -1)
        for j in range(E):
            g = problem.stochastic_grads(x, samples[j], used)
            if scheme == "II_rescaled":
                g.mul_(q)
            x = g.mul_(-schedule(rnd.t * E + j)).add_(x)
        return {"x": torch.bmm(a.unsqueeze(1), x).squeeze(1)}

    return Algorithm(f"pfedavg[{scheme}]", init, step, lambda state: {"server": state["x"]})
