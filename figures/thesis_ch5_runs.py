r"""The Fed-CIS runs behind the thesis ch. 5 figure and table analogues (seed 001 §5.4, Tables 5.1-5.4, Fig. D.1;
digest 001_thesis_ch4-6 §3.6): one setting (serving split, data partition, sampling parameter p, exit-weight
strategy) -> per-replica :math:`\epsilon_{\rm true}=F_{\mathcal D,\Lambda}(w^{(T)})-F^*_{\mathcal D,\Lambda}`.

Labelled substitution for ResNet-18 on CIFAR: the nested linear early-exit testbed (:mod:`theorylab.testbeds.early_exit`) on
the 7-node topology (4/2/1), :data:`TOTAL` samples in all with one dataset per replica (``data`` stream), requests
arriving at the leaves, :math:`T=30` rounds of :math:`K=5` local steps of size 0.1, additive gradient noise with
per-exit variances :math:`0.05\,v_e/v_3` in Table D.1's CIFAR10 proportions.  FLOPS Prop weighs exits by the
testbed's parameter counts (2, 4, 6); Balanced Adj is the toolkit's proposal :math:`\Lambda_ev_e^{-1/2}` (the
thesis gives no formula).
"""

from __future__ import annotations

import numpy as np

from theorylab.testbeds.early_exit import PARTITIONS, THESIS_LIKE, combine, exit_quadratics, layer_sizes, optimum_gap, \
    population, sample_moments
from theorylab.cis.aggregation import aggregation_weights
from theorylab.cis.rates import SEVEN_NODE, split_topology_rates
from theorylab.cis.sampling import preset
from theorylab.cis.strategies import balanced_adj, equal_weight, flops_prop, serving_rate
from theorylab.cis.training import run_fedcis
from theorylab.rng import Streams

TABLE_D1_CIFAR10 = np.array([0.00374, 0.00224, 0.00101])
TOTAL, ROUNDS, LOCAL_STEPS, LR = 150, 30, 5, 0.1
STRATEGIES = {"Equal Weight": lambda lam: equal_weight(3),
              "FLOPS Prop": lambda lam: flops_prop(np.cumsum(THESIS_LIKE.blocks)),
              "Serving Rate": serving_rate,
              "Balanced Adj (not the thesis')": lambda lam: balanced_adj(lam, TABLE_D1_CIFAR10, 0.5)}


def fedcis_errors(ctx, split, partition: str, p: float, strategy: str, replicas: int,
                  topology=SEVEN_NODE) -> np.ndarray:
    r"""Per-replica :math:`\epsilon_{\rm true}` after :data:`ROUNDS` rounds for one setting; every setting sees the
    same datasets and draws for the same seed (common random numbers).  ``topology`` (``(parents, exits)`` of
    :mod:`theorylab.cis.rates`) is the 7-node system by default; App. D's Table D.2 uses ``SEVENTEEN_NODE``."""
    exits = topology[1]
    lam = split_topology_rates(split, topology).exit_rates
    sizes = layer_sizes(exits, PARTITIONS[partition], TOTAL)
    q = exit_quadratics(THESIS_LIKE, *sample_moments(THESIS_LIKE, sizes, Streams(ctx.seed, replicas)))
    matrix = preset(exits, p)
    noise = np.sqrt(0.05 * TABLE_D1_CIFAR10 / TABLE_D1_CIFAR10[-1])[None, :] * np.ones(matrix.shape)
    out = run_fedcis(q.hess, q.lin, noise, matrix, aggregation_weights(matrix, sizes, STRATEGIES[strategy](lam)),
                     np.zeros((replicas, THESIS_LIKE.dim)), ROUNDS, LOCAL_STEPS, lambda t, k: LR,
                     Streams(ctx.seed, replicas))[ROUNDS]
    return optimum_gap(combine(population(THESIS_LIKE), lam), out)
