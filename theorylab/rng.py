"""Reproducible random streams, one per (seed, purpose, replica).

Every random number of a run comes from a stream owned by one replica and one
*purpose* (``participation``, ``gradient``, ``data``, ``init``, for the world models beyond participation
``channel`` and ``delay``, ``idle`` for the local work of clients computed outside a round's participants,
:mod:`theorylab.kernels.client_work`, ``exit`` for Fed-CIS's exit draws, :mod:`theorylab.kernels.fedcis`, and
``history`` for the availability CA-Fed's estimators observe before round 0, :mod:`theorylab.kernels.cafed`).
A stream is a ``torch.Generator`` seeded from a hash of ``(seed, purpose, replica)`` and is
consumed in round order; within a round the draw has a fixed layout whose
leading axis is the client.  Hence:

* the same seed gives the same trace, bit for bit, on the same device;
* a replica's numbers do not depend on how many replicas run beside it
  (replica ``r`` of a 64-replica run equals replica ``r`` of a 4-replica run);
* two algorithms run with the same seed see the same participation masks and,
  when they consume the gradient stream in the same layout, the same noise
  (common random numbers, which sharpens comparisons between algorithms);
* nothing reads or writes global random state.

Why not one generator keyed per round?  ``torch``'s CPU generator (mt19937)
takes a 32-bit seed, so keys over (replica, round) would collide in long runs;
per-replica seeds are few and are made collision-free below.  Why not a
counter-based hash evaluated on tensors?  On this CPU it was 3x slower than the
generator for the Gaussian noise of the quadratic benchmark.

Small float64 uniform draws on the CPU (participation masks, clock keys: a few hundred numbers per replica per
round) are *drawn ahead*: each replica's generator fills a block of the next several draws at once, and later draws
are cut from it.  torch's CPU uniform sampler is serial, so a block is the concatenation of the draws it replaces,
number for number; what changes is the count of per-replica generator calls, which at these sizes cost far more
than the numbers (the quick suite spent a tenth of its time in them).  Any other kind of draw from a purpose with
numbers still ahead first rewinds its generators to the block's start and replays the numbers handed out, so every
stream stays exactly where one draw at a time would have left it; such a purpose then draws directly.

Gaussian draws are sampled in float32 by torch's vectorised sampler and then
promoted: float64 sampling is 3.5x slower on CPU, and the float32 quantisation
changes the variance by about 1e-7 relative, far below any Monte Carlo error.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import torch

PURPOSES = ("participation", "gradient", "data", "init", "channel", "delay", "idle", "exit",
            "history")  # new ones last
_MASK32 = (1 << 32) - 1
AHEAD_DRAWS = 64  # the most draws a block covers: a run's last block wastes at most this many draws' numbers
AHEAD_ENTRIES = 1 << 21  # and at most this many float64 uniforms per purpose, all replicas together (16 MiB)
AHEAD_MAX_DRAW = 4096  # per replica: a larger draw's fixed cost is small beside its numbers, so it is drawn directly


def _hash32(*parts: object) -> int:
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & _MASK32


def stream_seeds(seed: int, replicas: int) -> dict[str, list[int]]:
    """Distinct 32-bit generator seeds for every (purpose, replica).

    Seeds are assigned replica by replica; a collision with an earlier seed is
    resolved by re-hashing with a counter, so the seeds of replicas ``0..r`` never
    depend on how many replicas follow.
    """
    if replicas < 1:
        raise ValueError(f"replicas must be >= 1; got {replicas}")
    used: set[int] = set()
    seeds: dict[str, list[int]] = {p: [] for p in PURPOSES}
    for r in range(replicas):
        for purpose in PURPOSES:
            value, bump = _hash32(seed, purpose, r), 0
            while value in used:
                bump += 1
                value = _hash32(seed, purpose, r, bump)
            used.add(value)
            seeds[purpose].append(value)
    return seeds


@dataclass
class _Ahead:
    """Uniforms drawn ahead for one purpose: ``values`` ``(R, K)`` came right after the generators' ``states``;
    the first ``used`` of each row have been handed out; the next block covers ``draws`` draws."""

    values: torch.Tensor
    states: list[torch.Tensor]
    used: int
    draws: int


class Streams:
    """The random streams of one run: ``replicas`` generators per purpose.

    Draw methods return a tensor of shape ``(replicas, *shape)`` whose slice
    ``[r]`` comes from replica ``r``'s own generator.
    """

    def __init__(self, seed: int, replicas: int, device: str | torch.device = "cpu"):
        self.seed = int(seed)
        self.replicas = int(replicas)
        self.device = torch.device(device)
        self._seeds = stream_seeds(self.seed, self.replicas)
        self._gens: dict[str, list[torch.Generator]] = {}  # created on first use of a purpose
        self._ahead: dict[str, _Ahead] = {}  # uniforms drawn ahead, per purpose (module docstring)
        self._direct: set[str] = set()  # purposes that also draw other kinds: never drawn ahead again

    def _generators(self, purpose: str) -> list[torch.Generator]:
        """The purpose's generators, positioned just after the last number handed out (a block drawn ahead is given
        back: rewound to its start, and the numbers used replayed)."""
        gens = self._created(purpose)
        ahead = self._ahead.pop(purpose, None)
        if ahead is not None and ahead.used < ahead.values.shape[1]:
            self._direct.add(purpose)
            for gen, state in zip(gens, ahead.states):
                gen.set_state(state)
                torch.empty(ahead.used, dtype=torch.float64).uniform_(generator=gen)
        return gens

    def _created(self, purpose: str) -> list[torch.Generator]:
        if purpose not in self._seeds:
            raise ValueError(f"unknown stream purpose {purpose!r}; expected one of {PURPOSES}")
        if purpose not in self._gens:
            self._gens[purpose] = [torch.Generator(device=self.device).manual_seed(s) for s in self._seeds[purpose]]
        return self._gens[purpose]

    def _fill(self, purpose: str, shape: tuple[int, ...], dtype: torch.dtype, sampler) -> torch.Tensor:
        gens = self._generators(purpose)
        out = torch.empty((self.replicas, *shape), dtype=dtype, device=self.device)
        for row, gen in zip(out.unbind(0), gens):
            sampler(row, gen)
        return out

    def uniform(self, purpose: str, shape: tuple[int, ...], dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """Uniform[0, 1) draws of shape ``(replicas, *shape)``."""
        shape = tuple(shape)
        n = math.prod(shape)
        if (dtype == torch.float64 and self.device.type == "cpu" and 0 < n <= AHEAD_MAX_DRAW
                and purpose not in self._direct):
            return self._uniform_ahead(purpose, n).reshape(self.replicas, *shape)
        return self._fill(purpose, shape, dtype, lambda o, g: o.uniform_(generator=g))

    def _uniform_ahead(self, purpose: str, n: int) -> torch.Tensor:
        """The next ``n`` float64 uniforms of each replica ``(R, n)``, cut from the block drawn ahead; a new block
        (covering twice as many draws as the last, up to :data:`AHEAD_DRAWS` and :data:`AHEAD_ENTRIES`) when this one
        runs out."""
        ahead = self._ahead.get(purpose)
        if ahead is not None and ahead.used + n <= ahead.values.shape[1]:
            ahead.used += n
            return ahead.values[:, ahead.used - n:ahead.used].contiguous()  # callers may need it contiguous
        gens = self._created(purpose)
        head = (ahead.values[:, ahead.used:] if ahead is not None
                else torch.empty((self.replicas, 0), dtype=torch.float64))
        draws = min(2 * ahead.draws, AHEAD_DRAWS) if ahead is not None else 4
        take = n - head.shape[1]
        values = torch.empty((self.replicas, max(take, min(draws * n, AHEAD_ENTRIES // self.replicas))),
                             dtype=torch.float64)
        states = [gen.get_state() for gen in gens]
        for row, gen in zip(values, gens):
            row.uniform_(generator=gen)
        self._ahead[purpose] = _Ahead(values, states, take, draws)
        return torch.cat([head, values[:, :take]], dim=1)

    def normal(self, purpose: str, shape: tuple[int, ...], dtype: torch.dtype = torch.float64,
               scale: float = 1.0) -> torch.Tensor:
        """``scale`` times standard normal draws (sampled in float32, then cast to ``dtype``)."""
        z = self._fill(purpose, tuple(shape), torch.float32, lambda o, g: o.normal_(generator=g))
        if dtype == torch.float32:
            return z.mul_(scale) if scale != 1.0 else z
        return torch.mul(z, scale, out=torch.empty(z.shape, dtype=dtype, device=z.device))

    def normal_rows(self, purpose: str, counts: torch.Tensor, lead: tuple[int, ...], trail: tuple[int, ...],
                    scale: float = 1.0) -> torch.Tensor:
        """Float32 normal draws for a ragged set of rows: replica ``r`` draws one ``(*lead, counts[r], *trail)`` block
        from its own generator (exactly the draw of :meth:`normal` with shape ``(*lead, m, *trail)`` when
        ``counts[r] = m``); the blocks are joined along the rows axis, replica-major: ``(*lead, sum(counts),
        *trail)``."""
        gens = self._generators(purpose)
        axis = len(lead)
        blocks = []
        for gen, k in zip(gens, counts.tolist()):
            block = torch.empty((*lead, int(k), *trail), dtype=torch.float32, device=self.device)
            blocks.append(block.normal_(generator=gen))
        z = blocks[0] if len(blocks) == 1 else torch.cat(blocks, dim=axis)
        return z.mul_(scale) if scale != 1.0 else z

    def integers(self, purpose: str, high: int, shape: tuple[int, ...]) -> torch.Tensor:
        """Uniform integers in ``[0, high)`` of shape ``(replicas, *shape)``."""
        return self._fill(purpose, tuple(shape), torch.int64, lambda o, g: o.random_(0, high, generator=g))
