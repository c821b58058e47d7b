r"""The chapter-4 quadratic setting shared by the ``thesis.ch4`` claims (digest 001 §2.6-2.7).

The thesis' experiments split :math:`N = 10` clients into two groups with total loss probabilities
:math:`q_1 = 0.1` and :math:`q_2 = 0.9` (group sizes unstated; we take 5/5 as the digest does) and
:math:`\alpha_i = |D_i|/|D|`.  The closed-form stand-in is the digest's: scalar clients
:math:`F_i(w) = \frac12(w-c_i)^2` with :math:`c_i = 1` in the good group and :math:`3` in the lossy one, so
:math:`w^* = 2` with :math:`\alpha_i = 1/10`, :math:`L = \mu = 1`, :math:`\kappa = 1`, :math:`\Gamma = 1/2`, and
:math:`K = 5`, Theorem 4.3.1's step :math:`\eta^{(r)} = 2/(8+r)`.  Losses sit on the uplink (the thesis' :math:`q` is
total; only the product :math:`(1-q_{si})(1-q_{is})` matters).  Every participation probability is 1.
"""

from __future__ import annotations

from theorylab.bounds.thesis_ch4 import theorem_schedule
from theorylab.config import RunConfig

N, K = 10, 5
GOOD, BAD = 0.1, 0.9  # q_1, q_2
AGGREGATORS = ("upga_pl", "dma_pl", "udma_pl", "pga_pl")
NAMES = {"upga_pl": "UPGA-PL", "dma_pl": "DMA-PL", "udma_pl": "UDMA-PL", "pga_pl": "PGA-PL", "dma": "DMA",
         "pga": "PGA"}
SOURCE = "seed 001 Ch. 4 §4.2-4.4, App. C; digest 001 §2.2, §2.6, §6"


def losses(q2: float = BAD) -> list[float]:
    """:math:`q = (q_1,\\dots,q_1,q_2,\\dots,q_2)`, five of each."""
    return [GOOD] * (N // 2) + [q2] * (N // 2)


def problem(sigma: float = 0.0, shift: float = 0.0, x0: float = 0.0) -> dict:
    """The scalar two-group quadratic, centres shifted by ``shift`` (the translation test)."""
    return {"name": "scalar_quadratic", "centers": [1.0 + shift] * (N // 2) + [3.0 + shift] * (N // 2),
            "sigma": sigma, "x0": x0}


def config(aggregator: str, rounds: int, *, lr=None, q2: float = BAD, sigma: float = 0.0, shift: float = 0.0,
           x0: float = 0.0, replicas: int = 1, seed: int = 0, every: int = 1) -> RunConfig:
    """A ``packet_loss`` run on the setting (``lr`` defaults to Theorem 4.3.1's schedule)."""
    q = losses(q2)
    return RunConfig(problem=problem(sigma, shift, x0), participation={"name": "bernoulli", "p": [1.0] * N},
                     algorithm={"name": "packet_loss", "aggregator": aggregator, "loss": q, "local_steps": K,
                                "lr": theorem_schedule(1.0, 1.0) if lr is None else lr},
                     channel={"name": "bernoulli_loss", "uplink": q}, rounds=rounds, replicas=replicas, seed=seed,
                     every=every)
