r"""Fed-CIS (seed 001 Ch. 5, Algorithm 6): federated training of a nested early-exit model, as a kernel.

Source: seed 001 Ch. 5 Algorithm 6 and §5.4.3 (the sampling preset); digest 001_thesis_ch4-6 §3.2 (pseudo-code and
the one-exit-per-node reading of line 4), §3.5 (exits as shared parameter prefixes).  The numpy reference on
exit-indexed quadratics is :func:`theorylab.cis.training.run_fedcis`; this kernel runs the same algorithm on any
testbed through the runner, so ``theorylab run`` and ``theorylab train`` can use it.

**Exits on a flat model.**  Exit :math:`e` (of :math:`E`) is the prefix of the parameter vector: with ``cuts``
:math:`0<c_1<\dots<c_E\le1`, :math:`P_e` keeps the first :math:`d_e=\max(1,\mathrm{round}(c_ed))` coordinates and
exit :math:`e`'s loss at node :math:`i` is :math:`F_{i,e}(w)=F_i(P_ew)`, so
:math:`\nabla F_{i,e}(w)=P_e\nabla F_i(P_ew)` and the parameters exit :math:`e` does not use get zero gradient
(digest §3.2).  On the quadratic testbeds this is the nested linear model of digest §3.5 (without its ridge); on a
network's flat vector a prefix is a stand-in for the thesis' exit heads (the image testbed with real heads is
:mod:`theorylab.testbeds.early_exit_net`).  The default ``cuts = [1]`` is one exit, the whole model.

**One round** (participation from the run's process, exits drawn by the kernel).  Node :math:`i` is available with
the process' known probability :math:`\pi_i^t` (``rnd.probs``); an available node draws at most one exit from the
row :math:`p_{i,\cdot}` (:func:`theorylab.cis.sampling.draw`, from the ``exit`` stream, drawn only when some row is
not deterministic, so the run's participation draws are those of any other algorithm), so :math:`\mathbb P(\xi_{i,e}=1)=\tilde p_{i,e}=\pi_i^tp_{i,e}`.  With every node available
(:math:`\pi\equiv1`) this is Algorithm 6's line 4 with the matrix :math:`p`.  Each drawn pair runs :math:`K` local
steps :math:`v\leftarrow v-\eta_t P_e\nabla F_i(P_ev;\xi)` from :math:`w^{(t)}` and the server applies line 12
without projection (:math:`\mathcal W=\mathbb R^d`):

.. math:: w^{(t+1)}=w^{(t)}+\sum_{(i,e)}\frac{\xi_{i,e}}{\tilde p_{i,e}}\,\alpha_{i,e}\,(v_{i,e}^{(t,K)}-w^{(t)}),
          \qquad \alpha_{i,e}=\eta_s\tilde\Lambda_e|D_i|/|D_{e,p}|\ (i\in\mathcal C_e),

with :math:`|D_i|` the testbed's objective weights :math:`q_i` (:func:`theorylab.cis.aggregation.aggregation_weights`),
the exit weights :math:`\tilde\Lambda` of ``target`` (:mod:`theorylab.cis.strategies`) and ``p`` a number (the
§5.4.3 preset over the nodes' exit counts ``exits``, :func:`theorylab.cis.sampling.preset`) or an :math:`N\times E`
matrix (:func:`theorylab.cis.sampling.check_sampling`).  With one exit and ``p = 0`` the update is FedAvg with known
:math:`p_i^t` and :math:`q_i` (``fedavg`` with ``aggregation="known_p"``).

Points: ``server`` (:math:`w`) and, with several exits, ``exit1`` ... ``exitE`` (:math:`P_ew`, the model each exit
serves), so a run records every exit's metrics.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.cis.aggregation import aggregation_weights
from theorylab.cis.sampling import check_sampling, draw, preset
from theorylab.cis.strategies import equal_weight, flops_prop, serving_rate
from theorylab.kernels.algorithm import Algorithm
from theorylab.kernels.client_work import client_work
from theorylab.kernels.local_sgd import check_local_steps
from theorylab.kernels.schedules import make_schedule
from theorylab.registry import register
from theorylab.validation import floats, integer, real

TARGETS = ("equal_weight", "flops_prop")  # or a list of per-exit rates Lambda (Serving Rate)


def check_cuts(cuts) -> np.ndarray:
    """``cuts`` as fractions :math:`0<c_1<\\dots<c_E\\le1`, or a ValueError naming ``cuts``."""
    values = floats("cuts", [1.0] if cuts is None else cuts)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)) or values[0] <= 0 or values[-1] > 1 \
            or (np.diff(values) <= 0).any():
        raise ValueError(f"cuts must be increasing fractions of the model in (0, 1], one per exit; got {cuts!r}")
    return values


def exit_weights(target, cuts: np.ndarray) -> np.ndarray:
    r""":math:`\tilde\Lambda` of ``target``: Equal Weight, FLOPS Prop with the exits' parameter shares ``cuts`` as
    their cost, or a list of per-exit serving rates :math:`\Lambda` (Serving Rate, normalised)."""
    if isinstance(target, str):
        if target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS} or a list of per-exit rates; got {target!r}")
        return equal_weight(len(cuts)) if target == "equal_weight" else flops_prop(cuts)
    rates = floats("target", target)
    if rates.shape != cuts.shape:
        raise ValueError(f"target must hold one rate per exit ({len(cuts)}, from cuts); got {target!r}")
    try:
        return serving_rate(rates)
    except ValueError as err:
        raise ValueError(f"target: {err}") from None


def sampling_matrix(p, exits, n_nodes: int, n_exits: int) -> np.ndarray:
    """The law :math:`p` ``(N, E)`` of each available node's exit: the §5.4.3 preset for a number, else checked."""
    counts = [n_exits] * n_nodes if exits is None else exits
    if not isinstance(counts, (list, tuple)) or len(counts) != n_nodes:
        raise ValueError(f"exits must hold one exit count per node ({n_nodes}); got {exits!r}")
    counts = np.array([integer(f"exits[{i}]", e, 1, n_exits) for i, e in enumerate(counts)])
    if isinstance(p, (list, tuple)):
        return check_sampling(floats("p", p), counts)
    return preset(counts, real("p", p, 0.0, 1.0), n_exits)


def prefix_masks(cuts: np.ndarray, x: torch.Tensor) -> torch.Tensor | None:
    r"""The diagonals of :math:`P_1..P_E` ``(E, d)`` for models ``x`` ``(R, d)``, exit e keeping the first
    :math:`\max(1, \mathrm{round}(c_ed))` coordinates; ``None`` when every exit is the whole model."""
    dim = x.shape[-1]
    sizes = np.maximum(1, np.round(cuts * dim))
    if sizes.min() >= dim:
        return None
    return (torch.arange(dim, device=x.device)[None, :] < torch.as_tensor(sizes, device=x.device)[:, None]).to(x.dtype)


@register("algorithm", "fedcis")
def fedcis(cuts: list | None = None, exits: list | None = None, p=0.0, target="equal_weight", local_steps: int = 5,
           lr=0.05, server_lr: float = 1.0) -> Algorithm:
    """Fed-CIS (seed 001 Alg. 6): nodes train one early exit each, the server reweighs by exit weights and p."""
    cut, steps, schedule = check_cuts(cuts), check_local_steps(local_steps), make_schedule(lr)
    target_weights, server_lr = exit_weights(target, cut), real("server_lr", server_lr, 0.0, open_low=True)

    def init(problem, x0):
        """The model and the weights alpha / p ``(R, N, E)`` (0 off C_e; a view of one table), computed once: a bad p,
        exits or target is refused here, before the first round."""
        law = sampling_matrix(p, exits, problem.n_clients, len(cut))
        alpha = aggregation_weights(law, problem.weights.cpu().numpy(), target_weights, server_lr)
        ratio = torch.as_tensor(np.divide(alpha, law, out=np.zeros_like(alpha), where=law > 0), dtype=x0.dtype,
                                device=x0.device)
        return {"x": x0, "ratio": ratio.expand(x0.shape[0], *ratio.shape)}

    def step(state, rnd, problem):
        x, n, law = state["x"], problem.n_clients, sampling_matrix(p, exits, problem.n_clients, len(cut))
        if np.all((law == 0) | (law == 1)):  # every node's exit is fixed: no draw, the stream is left alone
            fixed = np.where(law.sum(1) > 0, law.argmax(1), -1)
            chosen = torch.as_tensor(fixed, device=x.device).expand(x.shape[0], -1)
        else:
            chosen = draw(law, rnd.streams.uniform("exit", (n,), x.dtype))  # (R, N), -1: none
        part, safe = rnd.active & (chosen >= 0), chosen.clamp(min=0)
        start = x.unsqueeze(1).expand(-1, n, -1)
        work = client_work(problem, rnd.streams, steps, part)
        v, lr_t, masks = work.gather(start), schedule(rnd.t), prefix_masks(cut, x)
        mask = None if masks is None else work.gather(masks[safe])  # P_e of each node's exit
        for k in range(steps):
            g = work.grads(v if mask is None else mask * v, k)
            v = v - lr_t * (g if mask is None else mask * g)
        end = work.scatter(start, v)
        pi = torch.as_tensor(rnd.probs, dtype=x.dtype, device=x.device)
        ratio = state["ratio"].gather(2, safe.unsqueeze(-1)).squeeze(-1)
        scale = ratio / torch.where(pi > 0, pi, torch.ones_like(pi))
        scale = torch.where(part, scale, torch.zeros_like(scale))  # xi alpha / (pi p)
        return {"x": x + torch.einsum("rn,rnd->rd", scale, end - x.unsqueeze(1)), "ratio": state["ratio"]}

    def points(state):
        x = state["x"]
        masks = prefix_masks(cut, x)
        exit_points = {f"exit{e + 1}": x if masks is None else x * masks[e] for e in range(len(cut))}
        return {"server": x, **(exit_points if len(cut) > 1 else {})}

    return Algorithm(f"fedcis[{len(cut)}-exit]", init, step, points)
