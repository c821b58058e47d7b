r"""Per-cluster uniform sampling: exactly ``k`` clients of each of ``clusters`` equal contiguous blocks, every round.

CAFGA's reporting sets (seed 002 Alg. 2 line 4; digest 002 §1.4, §1.9): the clients are split into :math:`K` clusters
:math:`\mathcal V_k = \{kn,\dots,(k+1)n-1\}` of :math:`n = N/K` clients and :math:`\mathcal S_r^k\subset\mathcal V_k`
has :math:`m` members drawn uniformly without replacement, independently across clusters, so
:math:`P(i\in\mathcal S_r) = m/n` and, within a cluster, :math:`P(i,j\in\mathcal S_r^k) = \frac{m(m-1)}{n(n-1)}`
(the pair probability of Lemma F.6).  The draw is the ``k`` smallest of one uniform per client within each block;
with one cluster it is :mod:`theorylab.participation.uniform_k`'s draw, bit for bit.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.participation.base import check_clients
from theorylab.registry import register


def smallest_per_block(u: torch.Tensor, blocks: int, k: int) -> torch.Tensor:
    """Boolean mask of the ``k`` smallest entries of ``u`` (``(..., N)``) within each of ``blocks`` contiguous equal
    blocks of the last axis."""
    shape = u.shape
    grouped = u.reshape(*shape[:-1], blocks, shape[-1] // blocks)
    chosen = torch.topk(grouped, k, dim=-1, largest=False).indices
    return torch.zeros(grouped.shape, dtype=torch.bool, device=u.device).scatter_(-1, chosen, True).reshape(shape)


class ClusterUniformK:
    memoryless = False

    def __init__(self, n_clients: int, clusters: int, k: int):
        self.n_clients = check_clients(n_clients)
        if int(clusters) != clusters or clusters < 1 or self.n_clients % clusters:
            raise ValueError(f"clusters must be an integer >= 1 dividing n_clients={self.n_clients}; got {clusters}")
        self.clusters = int(clusters)
        size = self.n_clients // self.clusters
        if int(k) != k or not 1 <= k <= size:
            raise ValueError(f"k must be an integer in [1, cluster size={size}]; got {k}")
        self.k = int(k)

    def probabilities(self, t: int) -> np.ndarray:
        return np.full(self.n_clients, self.k * self.clusters / self.n_clients)

    def init(self, replicas, streams):
        return None

    def draw(self, state, t, streams):
        return None, smallest_per_block(streams.uniform("participation", (self.n_clients,)), self.clusters, self.k)


@register("participation", "cluster_uniform_k")
def cluster_uniform_k(n_clients: int, clusters: int, k: int) -> ClusterUniformK:
    """Exactly k clients of each of `clusters` equal contiguous clusters per round (CAFGA's S_r^k)."""
    return ClusterUniformK(n_clients, clusters, k)
