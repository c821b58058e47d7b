r"""AFGA and CAFGA: FedAMSGrad with client re-sampling and gossip between local steps (seed 002 Alg. 1 and 2).

Digest 002 §1.2–1.6, §4 items 1–4, 8.  Round :math:`r`, with the client models stacked as the rows of
:math:`X\in\mathbb R^{N\times d}` and the reporting set :math:`\mathcal S_r` from the run's participation process
(``uniform_k``; per cluster ``cluster_uniform_k``):

.. math::
    X_{r,0} = \mathbf 1x_r^\top,\qquad X_{r,t+1} = W\big(X_{r,t} - \eta_l\,G_{r,t}\big),\quad t = 0,\dots,\mathcal I-1,

where row :math:`i` of :math:`G_{r,t}` is :math:`\nabla F_i(x^i_{r,t};\xi^i_{r,t})` if :math:`i\in\mathcal S_{r,t}`
and 0 otherwise; :math:`\mathcal S_{r,t}` is a fresh uniform draw of :math:`m` clients per cluster (:math:`K` contiguous
clusters of :math:`n = N/K`, :math:`m = |\mathcal S_r\cap\mathcal V_k|`).  Then
:math:`\Delta_r = \sum_{i\in\mathcal S_r} w_i (X_{r,\mathcal I}[i] - x_r)` with :math:`w_i = \alpha_i/\sum_{j\in
\mathcal S_r}\alpha_j` (:math:`1/M` for the paper's uniform weights; CAFGA's :math:`\frac1K\sum_k\frac1m\sum_{i\in
\mathcal S^k_r}` is the same average) and the server step of :mod:`theorylab.kernels.server` (default FedAMSGrad,
eq. (2): :math:`x_{r+1} = x_r + \eta\,m_r/\sqrt{\hat v_r+\epsilon}`).  CAFGA is the same kernel with ``clusters=K``
and a block-diagonal :math:`W = \operatorname{blockdiag}(W_1,\dots,W_K)` (topology ``block_diagonal``).

Ablation switches (digest §1.5–1.6; the paper leaves the starred ones undefined, so each reading is a labelled switch):

* ``resample=False``: :math:`\mathcal S_{r,t} = \mathcal S_r` (with ``gossip=False`` this is FedAMSGrad, bit for bit);
* ``gossip=False``: no mixing (:math:`W = I`); ``gossip=True, resample=False`` is Table 4's "+Gossip";
* ``gossip_scope="reporting"``\*: the "(a)" variants, mixing only among :math:`\mathcal S_r` over a per-round ring of
  the reporting clients of each cluster (self-weight ``ring_self_weight``, footnote 4), identity elsewhere;
* ``resample_pool="reporting"``\*: :math:`\mathcal S_{r,t}` drawn inside :math:`\mathcal S_r` (with the size
  :math:`m` this is :math:`\mathcal S_r` itself: the reading of (a) in which re-sampling disappears); ``"all"``: from
  the whole cluster (the reading in which non-reporting clients compute but do not mix).

A round whose reporting set is empty (possible only without re-sampling, e.g. under Bernoulli participation) leaves
the whole state unchanged (:func:`~theorylab.kernels.algorithm.hold_empty`).

Randomness: the local noise comes from the ``gradient`` stream in :func:`local_sgd`'s layout (every client, every
step), so AFGA and FedAMSGrad share it; :math:`\mathcal S_{r,t}` is drawn from the ``participation`` stream after
:math:`\mathcal S_r`, only when re-sampling is on (so the reporting sets of later rounds differ between ablations,
and ``resample=False`` consumes exactly FedAMSGrad's draws).

State: ``x``, ``server.*`` (:math:`m_r, v_r, \hat v_r`), ``afga.delta`` (:math:`\Delta_r`), ``afga.delta_bar``
(:math:`\bar\Delta_r = \bar x_{r,\mathcal I}-x_r`, the all-client average of eq. (12)), the communication counters
``afga.uploads`` (client→server models, :math:`M` per round) and ``afga.gossip_messages`` (client→client models,
the off-diagonal non-zeros of :math:`W` per mixing step) and, with ``instrument=True`` (§4.8), ``afga.consensus``
(:math:`\frac1N\sum_k\|X^{k,\perp}_{r,t}\|_F^2`, ``(R, I)``, :math:`t = 1..\mathcal I`), ``afga.drift``
(:math:`\frac1K\sum_k\|\bar x^k_{r,t}-x_r\|^2`, ``(R, I)``) and ``afga.gmax`` (running max of the computed
:math:`\|\nabla F_i(x;\xi)\|`).
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.kernels.aggregation import aggregation_weights
from theorylab.kernels.algorithm import Algorithm, hold_empty
from theorylab.kernels.client_work import dense_noise
from theorylab.kernels.local_sgd import check_local_steps
from theorylab.kernels.schedules import make_schedule
from theorylab.kernels.server import make_server
from theorylab.participation.cluster_uniform_k import smallest_per_block
from theorylab.registry import build, register
from theorylab.topology.matrix import Topology, gossip as mix, make_topology
from theorylab.topology.ring import ring_matrix
from theorylab.validation import integer

FEDAMSGRAD = {"name": "adam", "lr": 0.01, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "amsgrad": True,
              "eps_mode": "inside"}  # seed 002 eq. (2); lr and eps are not reported by the paper (digest §6 item 2)
SCOPES = ("all", "reporting")


def contiguous_clusters(n_clients: int, clusters: int) -> list[tuple[int, ...]]:
    """The :math:`K` contiguous equal clusters :math:`\\mathcal V_k` of CAFGA (digest §1.4)."""
    clusters = integer("clusters", clusters, 1)
    if n_clients % clusters:
        raise ValueError(f"clusters must divide the number of clients {n_clients}; got {clusters}")
    n = n_clients // clusters
    return [tuple(range(k * n, (k + 1) * n)) for k in range(clusters)]


def gossip_messages(W: torch.Tensor, steps: int) -> torch.Tensor:
    """Client-to-client models sent in ``steps`` mixing steps with ``W`` (``(N, N)`` or ``(R, N, N)``): its
    off-diagonal non-zeros, once per step (the ``afga.gossip_messages`` counter)."""
    return ((W > 0).sum((-2, -1)) - (W.diagonal(dim1=-2, dim2=-1) > 0).sum(-1)) * steps


def resolve_topology(spec) -> Topology:
    """A topology spec (``{"name": ...}``, see ``theorylab list topology``) or an explicit matrix, validated."""
    try:
        return build("topology", spec) if isinstance(spec, dict) else make_topology("explicit W", spec)
    except ValueError as err:
        raise ValueError(f"topology: {err}") from None


def reporting_ring(active: torch.Tensor, clusters: int, self_weight: float) -> torch.Tensor:
    r"""Per-replica :math:`W_r` ``(R, N, N)``: a ring over the reporting clients of each cluster (in index order), the
    identity elsewhere (footnote 4's sub-ring; a ring of 2 is :math:`\begin{pmatrix}s&1-s\\1-s&s\end{pmatrix}`)."""
    R, N = active.shape
    members = torch.sort(torch.where(active, torch.arange(N, device=active.device), N), dim=1).values
    M = int(active[0].sum())
    members = members[:, :M]  # sorted, so grouped cluster by cluster
    block = np.kron(np.eye(clusters), ring_matrix(M // clusters, self_weight))
    W = torch.eye(N, dtype=torch.float64, device=active.device).repeat(R, 1, 1)
    rows = members.unsqueeze(2).expand(R, M, M)
    W[torch.arange(R, device=active.device).view(R, 1, 1), rows, rows.transpose(1, 2)] = torch.as_tensor(
        block, device=active.device)
    return W


def consensus(X: torch.Tensor, x: torch.Tensor, clusters: int) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Intra-cluster :math:`\frac1N\sum_k\|X^k - \mathbf 1\bar x^{k\top}\|_F^2` and inter-cluster
    :math:`\frac1K\sum_k\|\bar x^k - x\|^2` (Lemmas F.1–F.4) for ``X`` ``(R, N, d)`` and ``x`` ``(R, d)``."""
    R, N, d = X.shape
    grouped = X.reshape(R, clusters, N // clusters, d)
    means = grouped.mean(2, keepdim=True)
    intra = (grouped - means).square().sum((1, 2, 3)) / N
    inter = (means.squeeze(2) - x.unsqueeze(1)).square().sum((1, 2)) / clusters
    return intra, inter


@register("algorithm", "afga")
def afga(local_steps: int = 24, lr=0.01, topology=None, clusters: int = 1, resample: bool = True,
         gossip: bool = True, gossip_scope: str = "all", resample_pool: str = "all", ring_self_weight: float = 1 / 3,
         server: dict | None = None, instrument: bool = False) -> Algorithm:
    """AFGA (clusters=1) / CAFGA: re-sampled local SGD with gossip, FedAMSGrad server (seed 002 Alg. 1-2)."""
    steps, schedule = check_local_steps(local_steps), make_schedule(lr)
    opt = make_server(FEDAMSGRAD if server is None else server)
    if gossip_scope not in SCOPES:
        raise ValueError(f"gossip_scope must be one of {SCOPES}; got {gossip_scope!r}")
    if resample_pool not in SCOPES:
        raise ValueError(f"resample_pool must be one of {SCOPES}; got {resample_pool!r}")
    if not 0.0 <= ring_self_weight < 1.0:
        raise ValueError(f"ring_self_weight must lie in [0, 1); got {ring_self_weight!r}")
    K = integer("clusters", clusters, 1)
    fixed = gossip and gossip_scope == "all"
    if fixed == (topology is None):
        raise ValueError("topology is required when gossip=True and gossip_scope='all' (e.g. {'name': 'ring', 'n': N}),"
                         " and unused otherwise (no gossip, or the per-round ring of gossip_scope='reporting')")
    topo = resolve_topology(topology) if fixed else None
    sized = resample or (gossip and gossip_scope == "reporting")  # needs the same m in every cluster and replica

    def init(problem, x0):
        blocks = contiguous_clusters(problem.n_clients, K)
        if topo is not None:
            if topo.n != problem.n_clients:
                raise ValueError(f"topology has {topo.n} clients but the testbed has {problem.n_clients}")
            if K > 1:
                try:
                    make_topology(topo.name, topo.W, blocks)
                except ValueError as err:
                    raise ValueError(f"topology must be block-diagonal over the {K} clusters: {err}") from None
        zeros = torch.zeros(x0.shape[0], dtype=x0.dtype, device=x0.device)
        state = {"x": x0, **opt.init(x0), "afga.delta": torch.zeros_like(x0), "afga.delta_bar": torch.zeros_like(x0),
                 "afga.uploads": zeros, "afga.gossip_messages": zeros.clone()}
        if instrument:
            state.update({"afga.consensus": x0.new_zeros(x0.shape[0], steps), "afga.drift": x0.new_zeros(
                x0.shape[0], steps), "afga.gmax": zeros.clone()})
        return state

    def step(state, rnd, problem):
        x, active = state["x"], rnd.active
        R, N = active.shape
        m = int(round(float(rnd.probs[0]) * N / K))
        if sized and rnd.t == 0 and not bool((active.reshape(R, K, N // K).sum(-1) == m).all()):
            raise ValueError(f"afga needs a participation process that samples the same number of clients in every "
                             f"one of its {K} clusters (uniform_k, cluster_uniform_k)")
        computing = active.unsqueeze(1).expand(R, steps, N)
        if resample:
            u = rnd.streams.uniform("participation", (steps, N))
            if resample_pool == "reporting":
                u = torch.where(computing, u, 2.0)
            computing = smallest_per_block(u, K, m)
        W = topo.tensor(problem.dtype, problem.device) if fixed else (
            reporting_ring(active, K, ring_self_weight) if gossip else None)
        new = {}
        if instrument:
            new["afga.consensus"], new["afga.drift"] = x.new_zeros(R, steps), x.new_zeros(R, steps)
            gmax = state["afga.gmax"]
        eta = schedule(rnd.t)
        samples = dense_noise(problem, rnd.streams, steps, active)  # the reporting clients' noise as FedAvg's
        X = x.unsqueeze(1).expand(-1, N, -1)
        for t in range(steps):
            mask = computing[:, t]
            g = problem.stochastic_grads(X, samples[t], mask)
            if instrument:
                norms = torch.linalg.vector_norm(g, dim=-1).masked_fill(~mask, 0.0)
                gmax = torch.maximum(gmax, norms.max(1).values)
            X = torch.where(mask.unsqueeze(-1), g.mul_(-eta).add_(X), X)
            if W is not None:
                X = mix(W, X)
            if instrument:
                new["afga.consensus"][:, t], new["afga.drift"][:, t] = consensus(X, x, K)
        w = aggregation_weights("active", active, problem.weights, rnd.probs)
        delta = torch.bmm(w.unsqueeze(1), X).squeeze(1) - w.sum(1, keepdim=True) * x  # sum_i w_i (X_i - x)
        x_new, extra = opt.update(state, x, delta)
        sent = 0.0 if W is None else gossip_messages(W, steps)
        new.update({"x": x_new, **extra, "afga.delta": delta, "afga.delta_bar": X.mean(1) - x,
                    "afga.uploads": state["afga.uploads"] + active.sum(1),
                    "afga.gossip_messages": state["afga.gossip_messages"] + sent})
        if instrument:
            new["afga.gmax"] = gmax
        return hold_empty(state, new, active)

    label = "cafga" if K > 1 else "afga"
    mixing = gossip_scope if gossip else "off"
    return Algorithm(f"{label}[resample={'on' if resample else 'off'},gossip={mixing}]", init, step,
                     lambda state: {"server": state["x"]})
