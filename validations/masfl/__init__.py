"""Claims of seed 004 — Yan et al., "Momentum-Driven Adaptivity: Towards Tuning-Free Asynchronous Federated
Learning" (ICML 2025): MasFL, AdaMasFL and their asynchronous baselines (digest shared/spec/004_masfl.md), one
module per part of the paper.

* :mod:`.staleness` — the asynchrony simulator behind the experiments: the quoted delay statistics at M_c = 20
  under every reading of the refill, the delay law and the average (check 14), the staleness over the M_c sweep
  (check 13, tau part), and Mode A's sampling and staleness laws.

* :mod:`.invariants` — the control-variate invariant, unbiasedness, Lemma B.1 by enumeration, AdaMasFL's geometry,
  scale invariance (checks 1-5).
* :mod:`.optimum` — MasFL's exact optimum against FedBuff's biased point; no dependence on heterogeneity (checks 6, 10).
* :mod:`.rates` — Theorems 3.1 and 4.1's rates in T with their own parameters (checks 7, 9).
* :mod:`.speedup` — MasFL's linear speed-up in S and K at a fixed T inside App. C's regime (check 8).
* :mod:`.robustness` — stability over learning rates and robustness to asynchrony, steps tuned at the default M_c
  and frozen (checks 12-13, and check 11's robustness part).
* :mod:`.staleness_threshold` — where Theorem 3.1's staleness condition puts tau_max, and how MasFL and AdaMasFL
  degrade across it (check 11).
* :mod:`.theory` — the paper's experiments against Theorem 3.1's feasibility condition; the delay requirement.
* :mod:`.images` — the image ordering MasFL, AdaMasFL > CA2FL, FADAS at small scale (check 15).

Helper: :mod:`.trajectory` (the asynchronous heterogeneous quadratic and a round-by-round driver).
"""

from pathlib import Path

from theorylab.sources import register_paper

register_paper("masfl", "004_8bf94e068f51abae.txt",
               "Yan, Zhong, Wang, Zhang: Momentum-Driven Adaptivity: Towards Tuning-Free Asynchronous Federated Learning (MasFL / AdaMasFL, ICML 2025)",
               ('004_masfl.md',), costs=Path(__file__).with_name("full_costs.json"),
               catalogue=Path(__file__).with_name("catalogue.json"))
