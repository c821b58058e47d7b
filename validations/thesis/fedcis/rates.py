r"""Thesis ch. 5 §5.2 (seed 001, eqs. (5.2), (5.3), (5.5), Fig. 5.2) and §5.4.2 (Tables 5.1-5.2 at 33-33-33): the
CIS rate model and the equal-serving-rate case (digest 001_thesis_ch4-6 §3.1, §3.6, §6 C1, C8).

* C1: the request rates conserve traffic (:math:`\sum_e\Lambda_e=\sum_i\lambda_i^l`), the x-y-z converter reproduces
  :math:`\Lambda=(x,y,z)/100` on the thesis' 7-node (4/2/1) and 17-node (12/4/1) topologies, and in the 2-layer
  example of Fig. 5.2 the root serves all it receives.
* C8: with uniform :math:`\Lambda` Serving Rate and Equal Weight give the same weights, hence the same Fed-CIS
  run for equal seeds; the thesis' tables print equal numbers at 33-33-33.
"""

from __future__ import annotations

import numpy as np

from theorylab.testbeds.early_exit import THESIS_LIKE, at_every_node, population
from theorylab.checks import equal
from theorylab.cis.aggregation import aggregation_weights
from theorylab.cis.rates import SEVEN_NODE, SEVENTEEN_NODE, THESIS_SPLITS, mu_for_split, rates, \
    split_topology_rates
from theorylab.cis.sampling import preset
from theorylab.cis.strategies import equal_weight, serving_rate
from theorylab.cis.training import run_fedcis
from theorylab.claims import Evidence, claim
from theorylab.threads import one_thread
from theorylab.rng import Streams

SOURCE = "seed 001 Ch. 5 §5.2 (5.2)-(5.5), Fig. 5.2, §5.4; digest 001_thesis_ch4-6 §3.1, §3.6, §6 C1"
FIG_5_2 = ((3, 3, 3, None), (1, 1, 1, 2))  # nodes 0, 1, 2 forward to node 3, which serves everything
FIG_5_2_RATES = ([1.0, 2.0, 3.0, 0.0], [0.5, 1.5, 1.0, 0.0])  # illustrative: the thesis prints them only in the image


def _topology_checks(name: str, parents, exits, local) -> list:
    checks = []
    for split in THESIS_SPLITS:
        r = rates(parents, exits, local, mu_for_split(parents, exits, local, split))
        label = "-".join(map(str, split))
        checks += [equal(f"{name}, {label}: sum_e Lambda_e - sum_i lambda_i^l", r.exit_rates.sum() - sum(local), 0.0,
                         1e-12, basis="closed_form", note="conservation of requests; tolerance: rounding"),
                   equal(f"{name}, {label}: max_e |Lambda_e - split_e / sum(split)|",
                         float(np.abs(r.exit_rates - np.asarray(split) / sum(split)).max()), 0.0, 1e-12,
                         basis="closed_form", note="the x-y-z reading of §5.4.1 (33-33-33 renormalised from 99)")]
    return checks


@claim("thesis.ch5.rates", SOURCE,
       "The CIS rate model conserves requests (sum_e Lambda_e = sum_i lambda_i^l); the x-y-z splits give "
       "Lambda = (x, y, z)/100 on the 7- and 17-node topologies; in Fig. 5.2's example the root serves all it "
       "receives.", kind="statement", where="§5.3.1 Fig. 5.2 and (5.5); §5.4.2 'Serving Rates'",
       quote="Node 3 receives requests both locally and from its children, and serves all requests as it has no "
             "parent. … is the total serving rate of all nodes using exit e at inference time … x, y, and z "
             "represent the percentage of inference requests served by nodes using Exits 1, 2, and 3, respectively",
       checks=("C1",))
@one_thread
def rate_model(ctx) -> Evidence:
    checks = (_topology_checks("7 nodes (4/2/1)", *SEVEN_NODE, [0.25] * 4 + [0.0] * 3)
              + _topology_checks("17 nodes (12/4/1)", *SEVENTEEN_NODE, [1 / 12] * 12 + [0.0] * 5))
    local, mu = FIG_5_2_RATES
    r = rates(*FIG_5_2, local, mu)
    received = float(r.transfer[:3].sum())
    checks += [equal("Fig. 5.2: root's served rate - what it receives", r.served[3] - received, 0.0, 1e-12,
                     basis="closed_form", note="lambda_3^s = sum_j lambda_j^t since the root forwards nothing"),
               equal("Fig. 5.2: lambda_i^t = min(mu_i, lambda_i^l) for the leaves",
                     float(np.abs(r.transfer[:3] - np.minimum(mu[:3], local[:3])).max()), 0.0, 0.0,
                     basis="closed_form", note="the footnote's recursion with no children")]
    return Evidence(checks, notes=[
        f"Fig. 5.2 example: lambda^l = {local[:3]}, mu^max = {mu[:3]} -> transfers {r.transfer[:3].tolist()}, "
        f"root serves {r.served[3]:g}; Lambda = {r.exit_rates.tolist()}",
        "all requests arrive at the leaves (lambda^l = 1/#leaves, total 1), as in §5.4.1"],
        deviations=["Fig. 5.2 prints its rates only in the image: the example's values are illustrative"])


@claim("thesis.ch5.equal_serving", "seed 001 Ch. 5 §5.4.2 Tables 5.1-5.2 (33-33-33); digest 001 ch4-6 §6 C8",
       "With uniform serving rates, Serving Rate coincides with Equal Weight: same weights, same Fed-CIS run for "
       "equal seeds, and equal numbers in the thesis' tables at 33-33-33.", kind="statement",
       where="§5.3.4 ('Serving Rate'), §5.4.2 ('Equal Weight'), Tables 5.1-5.2 column 33-33-33",
       quote="the optimal strategy sets the aggregation weights $\\tilde{\\Lambda}$ equal to the expected serving "
             "rates Λ . We refer to this configuration rule as ''Serving Rate'' … \"Equal Weight,\" which assigns "
             "equal weight to all early exits", checks=("C8",))
@one_thread
def equal_serving(ctx) -> Evidence:
    exits = SEVEN_NODE[1]
    lam = split_topology_rates((33, 33, 33)).exit_rates
    sizes, p = np.array([100] * 4 + [200] * 2 + [400]), preset(exits, 0.2)
    q = at_every_node(population(THESIS_LIKE), len(exits))
    replicas, rounds = ctx.pick(16, 64), ctx.pick(20, 100)
    runs = [run_fedcis(q.hess, q.lin, np.full(p.shape, 0.3), p, aggregation_weights(p, sizes, target),
                       np.zeros((replicas, THESIS_LIKE.dim)), rounds, 5, lambda t, k: 0.05,
                       Streams(ctx.seed, replicas))[rounds] for target in (serving_rate(lam), equal_weight(3))]
    checks = [equal("max_e |Serving Rate - Equal Weight| weights at 33-33-33",
                    float(np.abs(serving_rate(lam) - equal_weight(3)).max()), 0.0, 1e-15, basis="closed_form",
                    note="Lambda = (1/3, 1/3, 1/3) after normalising 33-33-33; tolerance: one rounding"),
              equal("max |w_Serving - w_Equal| after the run (same seed)", float(np.abs(runs[0] - runs[1]).max()),
                    0.0, 1e-12, basis="closed_form", note=f"{replicas} replicas, {rounds} rounds of Fed-CIS on the "
                                                         "nested linear testbed, p = 0.2; identical weights -> "
                                                         "identical iterates (tolerance: rounding of the weights)")]
    printed_pairs = {"Table 5.1 CIFAR10": (74.9, 74.9), "Table 5.1 CIFAR100": (55.2, 55.2),
                     "Table 5.2 CIFAR10": (74.9, 74.9), "Table 5.2 CIFAR100": (55.6, 55.6)}
    checks += [equal(f"{name} 33-33-33: Serving Rate - Equal Weight (printed)", a - b, 0.0, 0.0, basis="paper",
                     note="both values as printed in the thesis") for name, (a, b) in printed_pairs.items()]
    return Evidence(checks, deviations=["the runs use the nested linear early-exit testbed, not ResNet-18 on CIFAR"])
