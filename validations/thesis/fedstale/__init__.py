"""Thesis Ch. 3: stale updates and FedStale (seed 001 Ch. 3; digest 001_thesis_ch1-3.md §2.7-2.9, §5.3-5.4,
§8 V17-V26).

* :mod:`.variance` — unbiasedness and the exact participation variance (V17, V18).
* :mod:`.toy` — the motivating example (Fig. 3.1) and step-size sensitivity in beta (V21, V22).
* :mod:`.guidelines` — Guidelines A and B for the best beta (V23).
* :mod:`.estimated` — FedStale and FedVARP with FedAU-estimated participation (V26, Fig. 3.5).
* :mod:`.theory` — Theorem 3.4.1's right side and step conditions, beta*, the lower bound (V19, V20, V24, V25).
* :mod:`.scaling` — FedVARP's floor against p_avg/p_min, rounds to epsilon against 1/p_min (V20, V24).
"""
