r"""The local work of a round, computed only for the clients whose result is used (issue 23).

A kernel that will read only the rows of the round's *participants* (the sampled set, the arrivals of an
asynchronous step, the received uplinks) names them with ``active`` ``(R, m)``.  :func:`client_work` then computes
the round's local steps as

* **rows** — when the problem can compute single clients (:class:`RowProblem`: ``sample_rows`` and ``grads_rows``),
  is large enough (:data:`ROWS_MIN` clients x dimensions: timed at p = 0.3, 32 replicas, rows took 0.128 / 0.188 /
  0.391 s against dense 0.085 / 0.193 / 0.638 s at m x d = 50 / 500 / 2000) and the run is on the CPU (on a GPU the
  gather would cost a host synchronisation): the participating
  ``(replica, client)`` pairs are gathered into a ``(P, d)`` block (replica-major, clients in index order), their
  noise is drawn for them alone and their gradients computed for them alone, and the result is scattered back into
  an ``(R, m, d)`` tensor whose other rows hold the start point.  With :math:`S` arrivals of :math:`N` clients that
  is :math:`S/N` of the Gaussian draws and of the arithmetic of a dense round.  A problem whose batched product over
  all clients costs less than gathering its rows (full Hessians: ``rows_in_table``) keeps the table and its dense
  arithmetic, and only the noise is drawn for the participants;
* **pairs** — when the problem computes clients from the dense draw (``pair_grads``: the network and synthetic
  LEAF testbeds), someone is idle and only the participants are used: the draw is the dense one
  (:meth:`theorylab.problem.Problem.sample`, every client's minibatch, so nothing changes in the streams), the
  participants' parameters are gathered into a ``(P, d)`` block, stepped there with their gradients alone, and
  scattered back into a copy of the start.  The same floats as the dense layout, bit for bit (an idle client's dense
  row is its start plus ``-lr`` times a zero gradient), without the ``(R, m, d)`` gradient table and update of every
  step;
* **dense** — otherwise: every client of every replica, as before.

A kernel that computes clients beyond the participants (FedStale's ``all_compute``, its first-round memory) says
``compute_all=True``: the participants' rows are drawn as above and the others' from the replica's ``idle`` stream.

**Random numbers.**  The noise of a round's participants is one ``(steps, k_r, d)`` block of replica :math:`r`'s
``gradient`` stream (:meth:`theorylab.rng.Streams.normal_rows`), in client order, whoever else computes.  Hence

* two algorithms that see the same participants — the same participation process, clock and channel, which never
  depend on the algorithm — draw the same noise for the same (replica, round, client), whether they compute rows,
  every client, or gossip over all of them (:func:`dense_noise`): common random numbers are kept, and equivalent
  kernels stay equal bit for bit (a row gets the dense layout's arithmetic exactly);
* when every client participates the block is exactly the dense draw of :meth:`theorylab.problem.Problem.sample`:
  full participation keeps its noise;
* a replica's numbers do not depend on the replicas beside it: its draw is its own :math:`k_r` rows, and a row gets
  the same arithmetic in either layout (rows are used only when some client is idle; with every client active the
  rows are the dense table).  Whether a problem computes rows depends on its size alone, so every algorithm on it
  uses the same layout.

Under partial participation on a problem that computes rows, a client's steps use other draws of the stream than
in versions before rows were computed (each participant's noise now comes from a block of :math:`k_r` rows, not
:math:`m`), so such traces differ from the earlier ones while keeping their law; smaller problems, and every run with
full participation, are unchanged bit for bit.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import torch

from theorylab.rng import Streams


@runtime_checkable
class RowProblem(Protocol):
    """A problem that computes single clients (``theorylab.testbeds.quadratic.Quadratic``)."""

    def sample_rows(self, streams: Streams, steps: int, counts: torch.Tensor,
                    purpose: str = "gradient") -> Sequence[Any]:
        """Noise for ``steps`` local steps of ``counts[r]`` clients of each replica ``r`` from the ``purpose`` stream:
        item ``k`` is ``(P, d)`` (``P = counts.sum()``, replica-major) or ``None`` without noise."""

    def grads_rows(self, x: torch.Tensor, rows: "RowWork", sample_k: Any) -> torch.Tensor:
        """Stochastic gradients ``(P, d)`` of client ``rows.client[p]`` (of replica ``rows.replica[p]``, out of
        ``rows.replicas``) at ``x[p]``, in a fresh tensor."""


ROWS_MIN = 500  # clients x dim from which rows pay: below, a round's fixed cost exceeds the dense work it saves


def computes_rows(problem, active: torch.Tensor | None) -> bool:
    """Whether the round's work is computed as rows (see the module docstring): only when someone is idle, since
    with every client active the rows are the dense table, drawn and computed alike, bit for bit."""
    return (active is not None and isinstance(problem, RowProblem) and active.device.type == "cpu"
            and problem.n_clients * problem.dim >= ROWS_MIN and not bool(active.all()))


class DenseWork:
    """Every client of every replica (the layout of :meth:`theorylab.problem.Problem.stochastic_grads`)."""

    def __init__(self, problem, streams: Streams, steps: int, active: torch.Tensor | None):
        self.problem, self.active = problem, active
        self.samples = problem.sample(streams, steps)

    def gather(self, table: torch.Tensor) -> torch.Tensor:
        return table

    def grads(self, x: torch.Tensor, k: int) -> torch.Tensor:
        return self.problem.stochastic_grads(x, self.samples[k], self.active)

    def scatter(self, base: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        return rows


class PairWork:
    """The participating ``(replica, client)`` pairs of a problem with ``pair_grads``, on the dense draw."""

    def __init__(self, problem, streams: Streams, steps: int, active: torch.Tensor):
        self.problem, self.active = problem, active
        self.samples = problem.sample(streams, steps)
        self.pairs = active.nonzero()  # replica-major, clients in index order: the dense layout's order
        self.index = (self.pairs[:, 0], self.pairs[:, 1])

    def gather(self, table: torch.Tensor) -> torch.Tensor:
        return table[self.index]

    def grads(self, x: torch.Tensor, k: int) -> torch.Tensor:
        return self.problem.pair_grads(x, self.pairs, self.samples[k])

    def scatter(self, base: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        out = base.clone()  # contiguous, also when base is the broadcast start
        out[self.index] = rows
        return out


def grads_from_pairs(problem, x: torch.Tensor, sample_k: Any, active: torch.Tensor | None) -> torch.Tensor:
    """``stochastic_grads`` of a problem with ``pair_grads``: the active clients' gradients ``(R, m, d)``, zero rows
    for the others."""
    R, m, d = x.shape
    pairs = (torch.ones((R, m), dtype=torch.bool, device=x.device) if active is None else active).nonzero()
    if len(pairs) == R * m:  # every row is written: no gather, no scatter
        return problem.pair_grads(x.reshape(R * m, d), pairs, sample_k).view(R, m, d)
    out = torch.zeros((R, m, d), dtype=x.dtype, device=x.device)
    if len(pairs):
        out[pairs[:, 0], pairs[:, 1]] = problem.pair_grads(x[pairs[:, 0], pairs[:, 1]], pairs, sample_k)
    return out


def _cat(parts: list) -> Any:
    present = [p for p in parts if p is not None]
    return None if not present else present[0] if len(present) == 1 else torch.cat(present)


class RowWork:
    """The participating ``(replica, client)`` pairs (and, with ``compute_all``, then the others) as ``(P, ...)``
    rows; or, for a problem whose ``rows_in_table`` is true, the whole ``(R, m, ...)`` table with the rows' noise
    alone (the dense arithmetic, the rows' draws)."""

    def __init__(self, problem: RowProblem, streams: Streams, steps: int, active: torch.Tensor,
                 compute_all: bool = False):
        self.problem, self.replicas = problem, active.shape[0]
        self.table = bool(getattr(problem, "rows_in_table", False))
        groups = [(active, "gradient")] + ([(~active, "idle")] if compute_all else [])
        pairs = [mask.nonzero(as_tuple=True) for mask, _ in groups]  # replica-major, clients in index order
        self.replica, self.client = (_cat([p[j] for p in pairs]) for j in (0, 1))
        noise = [problem.sample_rows(streams, steps, mask.sum(1), purpose) for mask, purpose in groups]
        self.samples = [_cat([n[k] for n in noise]) for k in range(steps)]
        self.memo: dict[str, Any] = {}  # what the problem gathers for these rows once a round (``grads_rows``)

    def gather(self, table: torch.Tensor) -> torch.Tensor:
        """The computed rows of an ``(R, m, ...)`` table (the table itself in table mode)."""
        return table if self.table else table[self.replica, self.client]

    def spread(self, rows: torch.Tensor, shape) -> torch.Tensor:
        """Row noise ``(P, d)`` placed in a zero ``(R, m, d)`` table."""
        table = rows.new_zeros((*shape, rows.shape[-1]))
        table[self.replica, self.client] = rows
        return table

    def grads(self, x: torch.Tensor, k: int) -> torch.Tensor:
        if not self.table:
            return self.problem.grads_rows(x, self, self.samples[k])
        g = self.problem.stochastic_grads(x, None)  # every row, noiseless; then the participants' noise
        if self.samples[k] is not None:
            g.index_put_((self.replica, self.client), self.samples[k].to(g.dtype), accumulate=True)
        return g

    def scatter(self, base: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """``base`` ``(R, m, ...)`` with its computed rows replaced by ``rows`` (in table mode ``rows`` is the
        table)."""
        if self.table:
            return rows
        out = base.clone()
        out[self.replica, self.client] = rows
        return out


def client_work(problem, streams: Streams, steps: int, active: torch.Tensor | None,
                compute_all: bool = False) -> DenseWork | RowWork | PairWork:
    """The round's local work: rows of the participants ``active`` when the problem can compute single clients on
    the CPU, their pairs on the dense draw when it computes clients from it, else dense (see the module
    docstring); ``compute_all`` computes the other clients too."""
    if computes_rows(problem, active):
        return RowWork(problem, streams, steps, active, compute_all)
    if active is not None and not compute_all and hasattr(problem, "pair_grads") and not bool(active.all()):
        return PairWork(problem, streams, steps, active)
    return DenseWork(problem, streams, steps, None if compute_all else active)


def dense_noise(problem, streams: Streams, steps: int, active: torch.Tensor) -> Sequence[Any]:
    """Per-step noise ``(R, m, d)`` for a kernel that moves every client (gossip) but whose round has participants
    ``active``: their rows exactly as :class:`RowWork` draws them, the others' from the ``idle`` stream; for a
    problem without rows, :meth:`theorylab.problem.Problem.sample`."""
    if not computes_rows(problem, active):
        return problem.sample(streams, steps)
    work = RowWork(problem, streams, steps, active, compute_all=True)
    if work.samples[0] is None:
        return work.samples
    return [work.spread(z, active.shape) for z in work.samples]
