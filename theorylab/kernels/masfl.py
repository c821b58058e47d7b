r"""MasFL and AdaMasFL: asynchronous FL with a control-variate table, two-level momentum and (AdaMasFL) normalised
local steps (seed 004 Alg. 1–4; digest 004 §2.0–2.4, §2.6).

**Initialisation** (Alg. 1/3 line 1).  Every client's control variate is the mean of :math:`K` stochastic gradients
at :math:`\theta^0`, :math:`c_i^0 = \frac1K\sum_{k<K}\nabla F(\theta^0;\xi_i^{-1,k})`; :math:`c^0 = \frac1N\sum_ic_i^0`,
:math:`g^0 = c^0`, so the first broadcast is :math:`u^0 = c^0`.  ``init`` has no random streams, so these
:math:`NK` gradients are drawn at the start of round 0, before the round's own local steps.

**Client** :math:`i` (Alg. 2/4), starting from the snapshot :math:`(\theta^{t-\tau},u^{t-\tau})` it was sent, with
:math:`u = \beta c + (1-\beta)g` and its own previous upload :math:`\tilde c_i`:

.. math::
    g_i^{t,k} = \beta\big(\nabla F(\theta_i^{t,k};\xi_i^{t,k}) - \tilde c_i\big) + u^{t-\tau},\qquad
    \theta_i^{t,k+1} = \theta_i^{t,k} - \eta\,g_i^{t,k}\ \ \text{(MasFL)}, \quad
    \theta_i^{t,k+1} = \theta_i^{t,k} - \eta\,\frac{g_i^{t,k}}{\max(\|g_i^{t,k}\|,\epsilon_0)}\ \ \text{(AdaMasFL)},

uploading :math:`\tilde c_i^{t+1} = \frac1K\sum_k\nabla F(\theta_i^{t,k};\xi_i^{t,k})` and, for AdaMasFL,
:math:`\Delta_i^t = (\theta^{t-\tau}-\theta_i^{t,K})/(\eta K)`.  The norm is the whole-vector :math:`\ell_2` norm over
all :math:`d` parameters; :math:`\epsilon_0 = 10^{-12}` guards :math:`g = 0`, which the paper leaves open
(digest §2.4).

**Server** (Alg. 1 lines 4–8; Alg. 3 lines 4–9) with :math:`\mathcal S_t` the arrived clients, :math:`S=|\mathcal S_t|`
and :math:`\delta_i = c_i^{t+1}-c_i^t` (zero off :math:`\mathcal S_t`):

.. math::
    g^{t+1} = \beta\Big(\tfrac1S\textstyle\sum_{i\in\mathcal S_t}\delta_i + c^t\Big) + (1-\beta)g^t,\qquad
    c^{t+1} = c^t + \tfrac1N\textstyle\sum_{i\in\mathcal S_t}\delta_i,

    \theta^{t+1} = \theta^t - \gamma g^{t+1}\ \ \text{(MasFL)},\qquad
    \theta^{t+1} = \theta^t - \gamma\,\tfrac1S\textstyle\sum_{i\in\mathcal S_t}\Delta_i^t\ \ \text{(AdaMasFL)},

then :math:`(\theta^{t+1}, u^{t+1} = \beta c^{t+1} + (1-\beta)g^{t+1})` goes to the dispatched clients.  The
extraction's lost minus sign of line 6 is restored (digest §5.3).  The recursion keeps the invariant
:math:`c^t = \frac1N\sum_ic_i^t` (up to round-off; claim ``masfl.invariant``).

**The table serves both sides.**  In the round contract an update is computed when it is applied
(:mod:`theorylab.kernels.stale_start`), so the client's held :math:`\tilde c_i` (its own last upload) always equals the
server's :math:`c_i`; one ``(R, N, d)`` table holds both.  (Mode A jobs that finish but are overwritten in the
buffer before being aggregated are not represented: the clock only reports applied updates.)

The objective weights must be equal, :math:`1/N` (seed 004 §2, the problem :math:`f = \frac1N\sum_if_i`).
Special cases (digest §2.6): :math:`\beta = 1` removes both momenta (a SAGA-like table update with SCAFFOLD-type
local correction).

**Ablation switches** (seed 004 Fig. 6, whose caption does not say what is ablated; digest §4 item 6 and §5.1 item 6
name the candidates :math:`\beta=1`, the :math:`c`-correction off, normalisation off).  Defaults are the paper's
algorithms, bit for bit.

* :math:`\beta = 1` is the ``beta`` parameter itself (no switch): no global or local momentum.
* ``control_variates=False`` drops both uses of the table.  Client: :math:`g_i^{t,k} = \beta\nabla F(\theta_i^{t,k};
  \xi_i^{t,k}) + (1-\beta)g^{t-\tau}` (no :math:`-\tilde c_i + c^{t-\tau}`; the snapshot sent is
  :math:`(1-\beta)g`); server: :math:`g^{t+1} = \beta\,\frac1S\sum_{i\in\mathcal S_t}\tilde c_i^{t+1} +
  (1-\beta)g^t` (the fresh uploads' mean, no table).  The table :math:`c_i, c` is still kept (and :math:`g^0 = c^0`
  as in Alg. 1 line 1), but nothing reads it.  With :math:`\beta = 1` as well, MasFL is FedBuff with local step
  :math:`\eta` and server step :math:`\gamma/(\eta K)` (``tests/test_masfl_ablations.py``).
* ``normalise=False`` (AdaMasFL only) drops the division by :math:`\|g_i^{t,k}\|` and keeps the server step
  :math:`-\gamma\frac1S\sum\Delta_i^t` ("MasFL with a :math:`\Delta` server", digest §5.1 item 6).  Then
  :math:`\Delta_i^t = \beta(\tilde c_i^{t+1}-\tilde c_i) + u^{t-\tau_i}`, so without staleness it is MasFL with
  :math:`\gamma` exactly (the mean of :math:`\Delta_i^t` is :math:`g^{t+1}`); stale snapshots make them differ.
"""

from __future__ import annotations

import torch

from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.client_work import client_work
from theorylab.kernels.local_sgd import check_local_steps
from theorylab.kernels.stale_start import arrivals, dispatch, snapshot
from theorylab.registry import register
from theorylab.validation import real

NORM_GUARD = 1e-12  # epsilon_0 of max(||g||, epsilon_0): an [UNCLEAR] of the paper, digest §2.4


def corrected_local_steps(problem, start: torch.Tensor, shift: torch.Tensor, beta: float, eta: float, steps: int,
                          streams, active: torch.Tensor | None, normalise: bool) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Alg. 2/4's local loop for every client at once: :math:`g^k = \beta\nabla F(\theta^k;\xi^k) + s_i` with the
    shift :math:`s_i = u - \beta\tilde c_i` ``(R, N, d)``, step :math:`-\eta g^k` (or :math:`-\eta g^k/\|g^k\|`).
    Returns the end points and the mean stochastic gradient along the path (the new :math:`\tilde c_i`)."""
    work = client_work(problem, streams, steps, active)
    x, shift = work.gather(start), work.gather(shift)
    total = torch.zeros_like(x)
    for k in range(steps):
        grad = work.grads(x, k)
        total.add_(grad)
        direction = grad.mul_(beta).add_(shift)
        if normalise:
            direction.div_(torch.linalg.vector_norm(direction, dim=-1, keepdim=True).clamp_(min=NORM_GUARD))
        x = direction.mul_(-eta).add_(x)
    return work.scatter(start, x), work.scatter(torch.zeros_like(start), total.div_(steps))


def initial_variates(problem, x0: torch.Tensor, steps: int, streams) -> torch.Tensor:
    r""":math:`c_i^0 = \frac1K\sum_{k<K}\nabla F(\theta^0;\xi_i^{-1,k})` for every client ``(R, N, d)``."""
    samples = problem.sample(streams, steps)
    start = x0.unsqueeze(1).expand(-1, problem.n_clients, -1)
    total = torch.zeros_like(start)
    for k in range(steps):
        total.add_(problem.stochastic_grads(start, samples[k], None))
    return total.div_(steps)


def _check_equal_weights(problem) -> None:
    w = problem.weights
    if not torch.allclose(w, torch.full_like(w, 1.0 / problem.n_clients), rtol=1e-9, atol=0.0):
        raise ValueError("MasFL / AdaMasFL need equal objective weights 1/N (seed 004 §2: f = (1/N) sum_i f_i); "
                         "the problem's weights are not uniform")


def _masfl_family(name: str, beta: float, gamma: float, eta: float, local_steps: int, normalise: bool,
                  delta_server: bool | None = None, control_variates: bool = True) -> Algorithm:
    r"""``normalise``: normalised local steps; ``delta_server``: the server step :math:`-\gamma\,\mathrm{mean}\,
    \Delta_i` (AdaMasFL) instead of :math:`-\gamma g^{t+1}` (defaults to ``normalise``); ``control_variates``: the
    table's corrections (module docstring, ablation switches)."""
    beta, steps = real("beta", beta, 0.0, 1.0), check_local_steps(local_steps)
    gamma, eta = real("gamma", gamma, 0.0, open_low=True), real("eta", eta, 0.0, open_low=True)
    normalise, control_variates = _flag("normalise", normalise), _flag("control_variates", control_variates)
    delta_server = normalise if delta_server is None else _flag("delta_server", delta_server)

    def init(problem, x0):
        _check_equal_weights(problem)
        zeros = torch.zeros_like(x0)
        table = x0.new_zeros(x0.shape[0], problem.n_clients, x0.shape[1])
        return {"x": x0, "g": zeros, "c": zeros.clone(), "c_i": table, "start_x": snapshot(x0, problem.n_clients),
                "start_u": table.clone()}

    def first_round(state, problem, streams):
        c_i = initial_variates(problem, state["x"], steps, streams)
        c = c_i.mean(1)
        u = c if control_variates else (1.0 - beta) * c  # u^0 = beta c^0 + (1 - beta) g^0 with g^0 = c^0
        return {**state, "g": c, "c": c, "c_i": c_i, "start_u": snapshot(u, problem.n_clients)}

    def step(state, rnd, problem):
        if rnd.t == 0:
            state = first_round(state, problem, rnd.streams)
        arr = arrivals(rnd)
        x, g, c, c_i = state["x"], state["g"], state["c"], state["c_i"]
        shift = state["start_u"] - beta * c_i if control_variates else state["start_u"]
        end, c_new = corrected_local_steps(problem, state["start_x"], shift, beta, eta, steps, rnd.streams,
                                           arr.arrived, normalise)
        here = arr.arrived.unsqueeze(-1)
        delta_c = torch.where(here, c_new - c_i, torch.zeros_like(c_i)).sum(1)
        size = arr.arrived.sum(1, keepdim=True).to(x.dtype).clamp(min=1.0)
        if control_variates:
            g_next = beta * (delta_c / size + c) + (1.0 - beta) * g
        else:
            g_next = beta * (torch.where(here, c_new, torch.zeros_like(c_new)).sum(1) / size) + (1.0 - beta) * g
        if delta_server:
            moves = torch.where(here, (state["start_x"] - end) / (eta * steps), torch.zeros_like(end))
            x_next = x - gamma * moves.sum(1) / size
        else:
            x_next = x - gamma * g_next
        server = {"x": x_next, "g": g_next, "c": c + delta_c / problem.n_clients,
                  "c_i": torch.where(here, c_new, c_i)}
        server = hold_empty({k: state[k] for k in server}, server, arr.arrived)
        u = (beta * server["c"] + (1.0 - beta) * server["g"]) if control_variates else (1.0 - beta) * server["g"]
        return {**server, "start_x": dispatch(state["start_x"], server["x"], arr.dispatched),
                "start_u": dispatch(state["start_u"], u, arr.dispatched)}

    return Algorithm(name, init, step, lambda state: {"server": state["x"]})


def _flag(name: str, value) -> bool:
    if not isinstance(value, (bool, int)) or value not in (0, 1):
        raise ValueError(f"{name} must be true or false; got {value!r}")
    return bool(value)


def _label(base: str, beta: float, **off) -> str:
    """``masfl[0.5]``, or with the ablated parts named: ``adamasfl[1,no control_variates]``."""
    ablated = "".join(f",no {name}" for name, on in off.items() if not on)
    return f"{base}[{beta:g}{ablated}]"


@register("algorithm", "masfl")
def masfl(beta: float = 0.5, gamma: float = 0.05, eta: float = 0.05, local_steps: int = 5,
          control_variates: bool = True) -> Algorithm:
    """MasFL (seed 004 Alg. 1-2): control-variate table, global and local momentum, server step -gamma g.
    ``control_variates=False``: Fig. 6's ablation without the table's corrections (module docstring)."""
    return _masfl_family(_label("masfl", beta, control_variates=control_variates), beta, gamma, eta, local_steps,
                         normalise=False, control_variates=control_variates)


@register("algorithm", "adamasfl")
def adamasfl(beta: float = 0.5, gamma: float = 0.05, eta: float = 0.01, local_steps: int = 5,
             control_variates: bool = True, normalise: bool = True) -> Algorithm:
    """AdaMasFL (seed 004 Alg. 3-4): MasFL with normalised local steps and the mean displacement as server step.
    ``control_variates=False`` / ``normalise=False``: Fig. 6's ablations (module docstring)."""
    return _masfl_family(_label("adamasfl", beta, control_variates=control_variates, normalise=normalise), beta,
                         gamma, eta, local_steps, normalise=normalise, delta_server=True,
                         control_variates=control_variates)
