r"""FedAWE's analysis quantities along a run on the quadratic testbed (seed 000 §6, App. E–F; digest 000 §2.3).

The run is the registered ``fedawe`` kernel driven round by round (same streams, hence the same trajectory
as :func:`theorylab.runner.run`); alongside it this module keeps the auxiliary sequence twice:

* by Definition (6): :math:`z_i^t = x_i^t - \eta_l\eta_g s\,(k_i-1)\,\nabla F_i(x_i^t)` with :math:`k_i = t-\tau_i(t)`
  and the *true* gradient (:math:`x_i^{\tau_i(t)+1} = x_i^t`);
* by the recursion :math:`Z^{(t+1)} = (Z^{(t)}-\eta_l\eta_g\widetilde G^t)W^{(t)}` with (19),
  :math:`\widetilde G_i^t = \mathbb 1\{i\in\mathcal A^t\}k_i\big(\sum_r\nabla\ell_i(x_i^{(t,r)})-s\nabla F_i(x_i^t)\big)
  + s\nabla F_i(x_i^t)` and the run's own stochastic gradients, :math:`\sum_r\nabla\ell_i = G_i^t/\eta_l`.

Per round and replica it records :math:`\|\nabla F(\bar z^t)\|^2`, :math:`\|\nabla F(\bar x^t)\|^2`,
:math:`F(\bar z^t)-F^\star`, the approximation error :math:`\frac1m\sum_i\|x_i^t-z_i^t\|^2`, the consensus
errors of :math:`z` and :math:`x`, :math:`\sum_ik_i^2`, :math:`\sum_ik_i^2\|\nabla F_i(x_i^t)\|^2`, the largest
gap between the two :math:`z`'s, and Lemma 3's left side **exactly**: on a quadratic, given the state at
round :math:`t`, :math:`\bar z^{t+1} = \bar z^t-\frac{\eta}{m}\sum_i\big(s\nabla F_i(x_i^t)+\chi_i(e_i+n_i)\big)` with
independent :math:`\chi_i\sim\mathrm{Bernoulli}(p_i^t)` (A1), :math:`e_i = k_i(C_i(x_i^t-u_i)/\eta_l-s\nabla F_i(x_i^t))`,
noise :math:`n_i` of covariance :math:`k_i^2\Sigma_i/\eta_l^2` (:math:`C_i,\Sigma_i` from
:func:`theorylab.exact.fedavg_moments.local_maps`), so

.. math::
    \mathbb E[F(\bar z^{t+1})\mid\mathcal F^t]-F^\star = \tfrac12(\mu-x^\star)^\top\bar A(\mu-x^\star)
    + \tfrac{\eta^2}{2m^2}\textstyle\sum_i\big(p_i(1-p_i)e_i^\top\bar Ae_i + p_ik_i^2\,\mathrm{tr}(\bar A\Sigma_i)/\eta_l^2\big),

:math:`\mu = \bar z^t-\frac{\eta}{m}\sum_i(s\nabla F_i(x_i^t)+p_ie_i)`, :math:`\eta = \eta_l\eta_g`.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.config import RunConfig
from theorylab.exact.fedavg_moments import local_maps
from theorylab.exact.models import QuadraticModel, require
from theorylab.kernels.algorithm import Round
from theorylab.kernels.schedules import make_schedule
from theorylab.runner import build_run
from theorylab.rng import Streams
from theorylab.staleness import echo_multiplier

TERMS = ("grad_zbar2", "grad_xbar2", "gap_zbar", "approx", "consensus_z", "consensus_x", "sum_k2", "sum_k2_grad2",
         "lemma3_lhs", "recursion_gap", "z_scale")


def _fedawe_parameters(spec: dict) -> tuple[int, float, float]:
    if spec.get("name") != "fedawe":
        raise ValueError(f"analysis terms are defined for the 'fedawe' kernel; got {spec.get('name')!r}")
    if spec.get("clip_norm") is not None or not spec.get("echo", True) or spec.get("broadcast", "active") != "active":
        raise ValueError("analysis terms need Algorithm 1 as analysed: no clip, echo on, broadcast to active clients")
    return int(spec.get("local_steps", 5)), float(spec.get("server_lr", 1.0)), spec.get("lr", 0.05)


def fedawe_terms(config: RunConfig) -> dict[str, np.ndarray]:
    """Run ``config`` (a ``fedawe`` run on a quadratic with memoryless participation) and return every term of
    :data:`TERMS` as a ``(replicas, rounds)`` array (round ``t`` = the state at the start of round ``t``)."""
    steps, eta_g, lr_spec = _fedawe_parameters(config.algorithm)
    spec = dict(config.algorithm, keep_innovation=True)
    problem, process, algorithm = build_run(config.replace(algorithm=spec))
    require(problem, QuadraticModel, "analysis terms (true gradients and local maps)")
    if not getattr(process, "memoryless", False):
        raise ValueError("Lemma 3's exact conditional expectation needs independent Bernoulli availability (A1)")
    schedule, R = make_schedule(lr_spec), config.replicas
    t64 = dict(dtype=problem.dtype, device=problem.device)
    A_bar = torch.as_tensor(problem.hessian_mean(), **t64)
    x_star = torch.as_tensor(problem.x_star, **t64)
    u = torch.as_tensor(problem.u, **t64)

    streams = Streams(config.seed, R, config.device)
    state = algorithm.init(problem, problem.initial_point(R, streams))
    pstate = process.init(R, streams)
    z_rec = state["xi"].clone()
    out = {name: np.empty((R, config.rounds)) for name in TERMS}
    maps: dict[float, tuple[torch.Tensor, torch.Tensor]] = {}
    for t in range(config.rounds):
        lr = schedule(t)
        if lr not in maps:
            C, Sigma = local_maps(problem, lr, steps)
            tr_sigma = np.trace(problem.hessian_mean() @ Sigma, axis1=1, axis2=2)  # tr(A_bar Sigma_i)
            maps[lr] = (torch.as_tensor(C, **t64), torch.as_tensor(tr_sigma, **t64))
        C, tr_sigma = maps[lr]
        eta = lr * eta_g
        xi = state["xi"]
        k = echo_multiplier(state["tau"], t).to(xi.dtype)  # (R, m)
        grads = problem.client_grads(xi)  # true gradients at x_i^t
        z = xi - eta * steps * (k - 1).unsqueeze(-1) * grads  # Definition (6)
        zbar, xbar = z.mean(1), xi.mean(1)
        p = torch.as_tensor(process.probabilities(t), **t64)
        at_zbar = problem.metrics(zbar)
        values = {
            "grad_zbar2": at_zbar["gradnorm2"], "grad_xbar2": problem.metrics(xbar)["gradnorm2"], "gap_zbar": at_zbar["gap"],
            "approx": ((xi - z) ** 2).sum(-1).mean(1), "consensus_z": ((z - zbar.unsqueeze(1)) ** 2).sum(-1).mean(1),
            "consensus_x": ((xi - xbar.unsqueeze(1)) ** 2).sum(-1).mean(1),
            "sum_k2": (k * k).sum(1), "sum_k2_grad2": (k * k * (grads ** 2).sum(-1)).sum(1),
            "lemma3_lhs": _lemma3_lhs(xi, zbar, k, grads, p, C, tr_sigma, u, A_bar, x_star, lr, eta, steps) - at_zbar["gap"],
            "recursion_gap": (z_rec - z).abs().amax(dim=(1, 2)), "z_scale": z.abs().amax(dim=(1, 2)),
        }
        for name, value in values.items():
            out[name][:, t] = value.cpu().numpy()

        pstate, active = process.draw(pstate, t, streams)
        state = algorithm.step(state, Round(t, active, process.probabilities(t), streams), problem)
        a = active.to(xi.dtype).unsqueeze(-1)
        g_tilde = a * k.unsqueeze(-1) * (state["innovation"] / lr - steps * grads) + steps * grads  # (19)
        y = z_rec - eta * g_tilde
        w = a / a.sum(1, keepdim=True).clamp(min=1.0)
        z_rec = torch.where(active.unsqueeze(-1), (w * y).sum(1, keepdim=True), y)  # Y W^(t)
    return out


def _lemma3_lhs(xi, zbar, k, grads, p, C, tr_sigma, u, A_bar, x_star, lr, eta, steps):
    """:math:`\\mathbb E[F(\\bar z^{t+1})\\mid\\mathcal F^t]-F^\\star` in closed form (module docstring)."""
    m = xi.shape[1]
    local = torch.einsum("mij,rmj->rmi", C, xi - u) / lr  # C_i (x_i - u_i) / eta_l = E[sum_r grad l_i]
    e = k.unsqueeze(-1) * (local - steps * grads)
    mu = zbar - eta / m * (steps * grads.sum(1) + (p.unsqueeze(-1) * e).sum(1))
    dev = mu - x_star
    quad_e = torch.einsum("rmi,ij,rmj->rm", e, A_bar, e)
    spread = (p * (1 - p) * quad_e + p * k * k * tr_sigma / lr ** 2).sum(1)
    return 0.5 * torch.einsum("ri,ij,rj->r", dev, A_bar, dev) + 0.5 * (eta / m) ** 2 * spread
