"""Thesis Ch. 5: cooperative inference and Fed-CIS (seed 001 Ch. 5; digest 001_thesis_ch4-6.md §3, §6 C1-C11).

* :mod:`.rates` — the CIS rate model, conservation, equal serving rates (C1, C8).
* :mod:`.aggregation` — Algorithm 6's unbiased aggregate and its sampling variance (C2, C3).
* :mod:`.theory` — Theorem 5.3.1 / D.4: the fixed point, the rate, (D.49) (C4, G2).
* :mod:`.terms` — the bias and generalisation terms, re-weighting (C5-C7).
* :mod:`.ablation` — the p-ablation and the assumptions (C9 on the testbed, C11).
* :mod:`.images` — Table 5.1's orderings and the routing effect on images at small scale (C10, C11).
"""
