r"""CA-Fed, Correlation-Aware FL (seed 001 Ch. 2, Algorithm 3, eqs. (2.21)–(2.25); digest 001 §2.6, §6, §7.1).

Round :math:`t` (all server state is :math:`O(m)` scalars per replica):

1. **Losses** (line 3).  Every active client reports its loss at the server model :math:`x^t`.  On a problem with
   ``minibatch_losses(x, draw, active)`` (a network, :mod:`theorylab.testbeds.network`) it is the thesis' estimate on the
   minibatch :math:`\mathcal B_i^{(t,0)}` of the client's first local step: the round's draw is taken once and both
   the losses and local SGD read it, so CA-Fed consumes the ``data`` stream exactly as the other algorithms do
   (common random numbers); ``loss_noise`` is refused there.  Otherwise (``problem.client_values``, the quadratic)
   the exact :math:`F_i(x^t)` stands for that estimate, optionally plus :math:`\mathcal N(0, \text{loss\_noise}^2)`
   drawn from the replica's ``data`` stream (the quadratic consumes only the ``gradient`` stream, so common random
   numbers survive).
2. **Estimators** (line 4).  The AR filter (2.22)
   :math:`\hat F_i \leftarrow (1-b\,a_i)\hat F_i + b\,a_i F_i` with :math:`b=\beta\in(0,1]` (``loss_filter="thesis"``)
   or :math:`b = 1-\beta`, :math:`\beta\in[0,1)` (``"repo"``: the author's code's ``smoothness_param``, so the thesis'
   experimental ":math:`\beta=0`" means "replace by the latest loss", digest §6 item 5);
   :math:`\hat F_i^\star` is the running minimum :math:`\min_{s\le t}\hat F_i^{(s)}` (thesis) or the exact minimum
   ``problem.c`` (``f_star="oracle"``, as the author's code; digest §6 items 9, 25);
   :math:`\hat\Gamma' = \max_i(\hat F_i-\hat F_i^\star)` (2.24).  Availability is the oracle :math:`(\pi_i,\lambda_i)`
   or, with ``availability="estimated"``, the estimators of :mod:`theorylab.participation.estimators` fed with
   the rounds seen so far (this one included): the Beta-Bayesian :math:`\hat\pi_i = (c_i + a)/(t + a + b)` and
   :math:`\hat\lambda_i = \hat P_{00,i}+\hat P_{11,i}-1` from Beta(``a``, ``b``)-smoothed transition counts,
   conditional (``lambda_estimator="conditional"``, digest §2.6) or the author's joint frequencies
   (``"repository"``, digest §6 item 10), with ``prior = (a, b)`` for every Beta prior.
   :math:`\hat F^{(0)}` is every client's loss at :math:`x^0` (line 1 leaves the initialisation open).
3. **Weights** (lines 5–7).  :math:`q = \alpha/\hat\pi` for all clients, then :func:`compute_weights` twice: clients
   in descending :math:`\hat\lambda_i` (``lambda_order="raw"``) or :math:`|\hat\lambda_i|` (``"abs"``, the code),
   then in ascending :math:`\hat\pi_i`.  Each candidate :math:`i` is dropped (:math:`q_i\leftarrow0`) iff the proxy
   (2.25) :math:`\hat\epsilon(q) = \langle\hat F-\hat F^\star, p(q)\rangle
   + c\,\bar\kappa^2 d_{TV}^2(\alpha, p(q))\hat\Gamma'`,
   :math:`p(q) = \hat\pi\tilde\odot q = \hat\pi q/\sum_h\hat\pi_hq_h`, falls by at least :math:`\tau`
   (digest 001 §6 item 4: (2.21) prints :math:`d_{TV}(\alpha, \rho)`; we take
   :math:`d_{TV}(\alpha, \hat\pi\tilde\odot q)`, the distance of Theorem 2.3.4 and of line 15); a drop that
   would leave no weight is refused (the code's ``break``).  :math:`c` is ``bias_factor``: 4 (thesis line 15) or 1
   (the code; digest §6 item 6).
4. **Update** (lines 8–12).  Active clients with :math:`q_i>0` run local SGD from :math:`x^t`;
   :math:`x^{t+1} = \mathrm{ServerUpdate}(x^t, \sum_{i\in\mathcal S^t} q_i\Delta_i)` with unnormalised :math:`q`
   (no projection: the quadratic's iterates stay bounded).

For :math:`\bar\kappa^2\to\infty` (and :math:`\hat\Gamma'>0`) no drop is ever accepted and the rule is the Unbiased
baseline ``fedavg`` with ``aggregation="all"``, ``q = alpha/pi``, computed by the same operations.  The state keeps
``cafed.q`` (this round's :math:`q`), ``cafed.included`` (:math:`a_i\mathbb 1\{q_i>0\}`) and ``cafed.q_sum``
(:math:`\sum_t q^{(t)}`, Fig. 2.1d) for the claims, and the ``avail_*`` counters of the estimators.  An empty round leaves the model unchanged; the estimators still
advance.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from theorylab.kernels.aggregation import aggregation_weights
from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.local_sgd import check_local_steps, local_sgd
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.participation import estimators
from theorylab.registry import register
from theorylab.validation import floats

LOSS_FILTERS = ("thesis", "repo")
F_STARS = ("oracle", "running_min")
AVAILABILITIES = ("oracle", "estimated")
LAMBDA_ORDERS = ("raw", "abs")
BIAS_FACTORS = (4.0, 1.0)


# ----- the pure pieces of Algorithm 3 ------------------------------------------------------------------------------
def effective_weights(pi: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """:math:`\\pi\\tilde\\odot q = \\pi q / \\sum_h \\pi_h q_h` over the last axis (the biased objective's
    :math:`p`)."""
    pq = pi * q
    return pq / pq.sum(-1, keepdim=True)


def proxy_error(q, alpha, gaps, gamma, pi, scale: float) -> torch.Tensor:
    """(2.25): :math:`\\langle\\hat F-\\hat F^\\star, p\\rangle + \\text{scale}\\cdot d_{TV}^2(\\alpha, p)\\hat\\Gamma'`
    with :math:`p = \\pi\\tilde\\odot q`, ``scale`` :math:`= c\\bar\\kappa^2`; ``gaps`` and ``q`` are ``(..., m)``,
    ``gamma`` ``(...)``."""
    p = effective_weights(pi, q)
    tv = 0.5 * (alpha - p).abs().sum(-1)
    return (gaps * p).sum(-1) + scale * tv * tv * gamma


def compute_weights(q, order, alpha, gaps, gamma, pi, scale: float, tau: float) -> torch.Tensor:
    """ComputeWeights (Alg. 3 lines 13–22) for a batch ``(R, m)``: visit clients in ``order`` (``(R, m)`` indices) and
    set :math:`q_i = 0` whenever :math:`\\hat\\epsilon(q) - \\hat\\epsilon(q^+) \\ge \\tau`; never drop the last
    weight."""
    e = proxy_error(q, alpha, gaps, gamma, pi, scale)
    for k in range(q.shape[-1]):
        q_plus = q.scatter(-1, order[:, k:k + 1], 0.0)
        alive = q_plus.sum(-1) > 0
        e_plus = proxy_error(torch.where(alive.unsqueeze(-1), q_plus, q), alpha, gaps, gamma, pi, scale)
        accept = alive & (e - e_plus >= tau)
        q = torch.where(accept.unsqueeze(-1), q_plus, q)
        e = torch.where(accept, e_plus, e)
    return q


def ar_filter(previous: torch.Tensor, losses: torch.Tensor, active: torch.Tensor, weight: float) -> torch.Tensor:
    """(2.22): :math:`(1-w\\,a)\\odot\\hat F + w\\,a\\odot F` with :math:`a` the active indicator."""
    wa = weight * active.to(previous.dtype)
    return (1 - wa) * previous + wa * losses


# ----- parameter checks ----------------------------------------------------------------------------------------------
def _choice(name: str, value, allowed: tuple):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def _filter_weight(beta: float, loss_filter: str) -> float:
    if loss_filter == "thesis":
        if not 0 < beta <= 1:
            raise ValueError(f"beta must lie in (0, 1] for loss_filter='thesis' (eq. 2.22); got {beta}")
        return float(beta)
    if not 0 <= beta < 1:
        raise ValueError(f"beta must lie in [0, 1) for loss_filter='repo' (the code's smoothness 1 - beta); got {beta}")
    return 1.0 - float(beta)


def _per_client(name: str, values, low: float, high: float, closed_high: bool) -> np.ndarray:
    """Oracle values as an array, or a ValueError naming the first entry outside ``(low, high]`` / ``(low, high)``."""
    if values is None:
        raise ValueError(f"availability='oracle' needs {name} (one value per client)")
    arr = floats(name, values)
    above = arr > high if closed_high else arr >= high
    bad = ~np.isfinite(arr) | (arr <= low) | above
    if bad.any():
        i = int(np.argmax(bad))
        interval = f"({low:g}, {high:g}{']' if closed_high else ')'}"
        raise ValueError(f"{name}[{i}] = {arr[i]:g} is outside the allowed range {interval}")
    return arr


def _losses_of(problem, need_minima: bool):
    """The problem's exact client losses (and minima): refuse problems that lack them, naming the members."""
    members = ("client_values", "c") if need_minima else ("client_values",)
    missing = [name for name in members if not hasattr(problem, name)]
    if missing:
        raise ValueError(f"CA-Fed collects client losses through problem.client_values(x) (and, with "
                         f"f_star='oracle', the minima problem.c): {type(problem).__name__} lacks {', '.join(missing)}")
    return lambda x: torch.as_tensor(problem.client_values(x.detach().cpu().numpy()), dtype=x.dtype, device=x.device)


class _Drawn:
    """``problem`` whose ``sample`` returns this round's draw, taken once for both the losses and local SGD."""

    def __init__(self, problem, samples):
        self._problem, self._samples = problem, samples

    def sample(self, streams, steps):
        return self._samples

    def __getattr__(self, name):
        return getattr(self._problem, name)


@register("algorithm", "cafed")
def cafed(pi=None, lam=None, kappa2: float = 1.0, tau: float = 0.0, beta: float = 1.0, loss_filter: str = "thesis",
          f_star: str = "oracle", availability: str = "oracle", lambda_order: str = "raw", bias_factor: float = 4.0,
          prior=(1.0, 1.0), lambda_estimator: str = "conditional", loss_noise: float = 0.0, local_steps: int = 5,
          lr=0.05, server: dict | None = None) -> Algorithm:
    """CA-Fed (thesis Alg. 3): greedy exclusion of correlated, then rarely available clients; weights alpha/pi."""
    if not (math.isfinite(kappa2) and kappa2 >= 0):
        raise ValueError(f"kappa2 (kappa_bar^2) must be a finite number >= 0; got {kappa2}")
    if not (math.isfinite(tau) and tau >= 0):
        raise ValueError(f"tau must be a finite number >= 0; got {tau}")
    if not loss_noise >= 0:
        raise ValueError(f"loss_noise must be >= 0; got {loss_noise}")
    weight = _filter_weight(beta, _choice("loss_filter", loss_filter, LOSS_FILTERS))
    running_min = _choice("f_star", f_star, F_STARS) == "running_min"
    estimated = _choice("availability", availability, AVAILABILITIES) == "estimated"
    by_abs = _choice("lambda_order", lambda_order, LAMBDA_ORDERS) == "abs"
    scale = float(_choice("bias_factor", float(bias_factor), BIAS_FACTORS)) * float(kappa2)
    prior = tuple(floats("prior", prior))
    if len(prior) != 2 or min(prior) <= 0:
        raise ValueError(f"prior must be two Beta pseudo-counts (a, b) > 0; got {prior}")
    activity_prior = estimators.BetaPrior(*prior)
    transition_prior = estimators.TransitionPrior(activity_prior, activity_prior)
    variant = _choice("lambda_estimator", lambda_estimator, estimators.VARIANTS)
    steps, schedule, opt = check_local_steps(local_steps), make_schedule(lr), make_server(server)

    oracle = None if estimated else (_per_client("pi", pi, 0.0, 1.0, True), _per_client("lam", lam, -1.0, 1.0, False))

    def availability_of(counts, like):
        if estimated:
            return (estimators.pi_hat(counts, activity_prior),
                    estimators.lambda_hat(counts, transition_prior, variant))
        return tuple(torch.as_tensor(v, dtype=like.dtype, device=like.device).expand_as(like) for v in oracle)

    def init(problem, x0):
        if loss_noise > 0 and hasattr(problem, "minibatch_losses"):
            raise ValueError("loss_noise is for problems with exact client losses; a problem with minibatch_losses "
                             "already reports noisy (one-minibatch) losses")
        losses = _losses_of(problem, not running_min)(x0)
        if oracle is not None and any(v.shape != (problem.n_clients,) for v in oracle):
            raise ValueError(f"pi and lam must have one entry per client ({problem.n_clients}); got "
                             f"{len(oracle[0])} and {len(oracle[1])}")
        minima = losses.clone() if running_min else torch.as_tensor(problem.c, dtype=x0.dtype, device=x0.device)
        zeros = torch.zeros_like(losses)
        return {"x": x0, **opt.init(x0), "cafed.F_hat": losses, "cafed.F_star": minima.expand_as(losses).clone(),
                "cafed.q": zeros, "cafed.included": zeros.bool(), "cafed.q_sum": zeros,
                **estimators.init_counts(*zeros.shape, dtype=zeros.dtype, device=zeros.device)}

    def step(state, rnd, problem):
        x, active = state["x"], rnd.active
        if hasattr(problem, "minibatch_losses"):
            samples = problem.sample(rnd.streams, steps)
            losses = problem.minibatch_losses(x, samples[0], active)
            problem = _Drawn(problem, samples)
        else:
            losses = _losses_of(problem, not running_min)(x)
        if loss_noise > 0:
            losses = losses + rnd.streams.normal("data", (problem.n_clients,), losses.dtype, scale=loss_noise)
        F_hat = ar_filter(state["cafed.F_hat"], losses, active, weight)
        F_star = torch.minimum(state["cafed.F_star"], F_hat) if running_min else state["cafed.F_star"]
        counts = estimators.update_counts({k: v for k, v in state.items() if k.startswith("avail_")}, active)
        pi_hat, lam_hat = availability_of(counts, F_hat)

        gaps = F_hat - F_star
        gamma = gaps.amax(-1)
        alpha = problem.weights.expand_as(F_hat)
        q = alpha / pi_hat
        key = lam_hat.abs() if by_abs else lam_hat
        for order in (torch.argsort(key, dim=-1, descending=True, stable=True),
                      torch.argsort(pi_hat, dim=-1, stable=True)):
            q = compute_weights(q, order, alpha, gaps, gamma, pi_hat, scale, tau)
        included = active & (q > 0)

        start = x.unsqueeze(1).expand(-1, problem.n_clients, -1)
        end = local_sgd(problem, start, steps, schedule(rnd.t), rnd.streams, included)
        w = aggregation_weights("all", active, q, None)
        delta = torch.bmm(w.unsqueeze(1), end).squeeze(1) - w.sum(1, keepdim=True) * x  # sum_i w_i (end_i - x)
        x_new, extra = opt.update(state, x, delta)
        model = hold_empty(state, {"x": x_new, **extra}, active)
        return {**model, "cafed.F_hat": F_hat, "cafed.F_star": F_star, "cafed.q": q, "cafed.included": included,
                "cafed.q_sum": state["cafed.q_sum"] + q, **counts}

    return Algorithm("cafed", init, step, lambda state: {"server": state["x"]})
