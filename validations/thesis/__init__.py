"""Claims of seed 001 — Rodio's thesis on client heterogeneity (digests shared/spec/001_thesis_ch1-3.md and
001_thesis_ch4-6.md), one module per part of the thesis.

Chapter 2 (Markov-correlated availability, CA-Fed):

* :mod:`.error_decomposition` — Theorems 2.3.2 and 2.3.4: error = optimisation + bias (chi^2 and TV bounds).
* :mod:`.markov` — the two-state and product chains, the mixing bound (2.5) with C_P and T_P, mixing times (V1-V4).
* :mod:`.estimators` — the Beta-Bayesian pi_hat and transition-count lambda_hat, the author's variant, FedAU (V5, V26).
* :mod:`.cafed` — CA-Fed's proxy, its kappa_bar^2 limits and the clients it excludes (V11-V13).
* :mod:`.cafed_markov` — the weighted scheme under Markov availability, by exact moments (V8, V10).
* :mod:`.cafed_leaf` — CA-Fed on Synthetic LEAF: the kappa_bar^2 trade-off, its small-kappa limit, Fig. 2.1a (V12, V14).
* :mod:`.ch2_theory` — Remark 1.3.1, the q-optimisation (2.19) and its convexity, Guideline A (V7, V15, V16).
* :mod:`.thm2_3_3` — Theorem 2.3.3 (reconciled) and its growth with the chains' correlation (V9).

Chapter 3 (stale updates, FedStale):

* :mod:`.fedstale` — unbiasedness and the exact participation variance (V17, V18).
* :mod:`.fedstale_toy` — the motivating example (Fig. 3.1) and step-size sensitivity in beta (V21, V22).
* :mod:`.fedstale_guidelines` — Guidelines A and B for the best beta (V23).
* :mod:`.fedstale_estimated` — FedStale and FedVARP with FedAU-estimated participation (V26, Fig. 3.5).
* :mod:`.ch3_theory` — Theorem 3.4.1's right side and step conditions, beta*, the lower bound (V19, V20, V24, V25).
* :mod:`.ch3_scaling` — FedVARP's floor against p_avg/p_min, rounds to epsilon against 1/p_min (V20, V24).
* :mod:`.cnn` — CA-Fed's and FedStale's orderings on images at small scale (V27, V28).

Chapter 4 (packet loss, UPGA-PL; digest 001_thesis_ch4-6 §2, §6 U1-U10, G1-G2):

* :mod:`.ch4_setting` — the chapter's quadratic setting shared by its claims.
* :mod:`.ch4_aggregators` — all aggregators coincide without loss, unbiasedness, Lemma A.1 (U1-U3).
* :mod:`.ch4_theory` — Theorem 4.3.1 against the exact gap, loss sensitivity, Remark 1.3.1, theory vs paper mode
  (U4, U5, G1, G2).
* :mod:`.ch4_moments` — DMA-PL's biased fixed point, the constant-step floor, the homogeneous case (U6, U8, U9).
* :mod:`.ch4_udma` — UDMA-PL's instability by its exact second moment (U7).
* :mod:`.ch4_images` — UPGA-PL against DMA-PL on images at small scale (U10).

Chapter 5 (cooperative inference, Fed-CIS; digest 001_thesis_ch4-6 §3, §6 C1-C11):

* :mod:`.ch5_rates` — the CIS rate model, conservation, equal serving rates (C1, C8).
* :mod:`.ch5_aggregation` — Algorithm 6's unbiased aggregate and its sampling variance (C2, C3).
* :mod:`.ch5_theory` — Theorem 5.3.1 / D.4: the fixed point, the rate, (D.49) (C4, G2).
* :mod:`.ch5_terms` — the bias and generalisation terms, re-weighting (C5-C7).
* :mod:`.ch5_ablation` — the p-ablation and the assumptions (C9 on the testbed, C11).
* :mod:`.ch5_images` — Table 5.1's orderings and the routing effect on images at small scale (C10, C11).
"""

from pathlib import Path

from theorylab.sources import register_paper

register_paper("thesis", "001_3d656900a14cf39b.txt",
               "Rodio: Client Heterogeneity in Federated Learning Systems (PhD thesis, Université Côte d'Azur, 2024)",
               ('001_thesis_ch1-3.md', '001_thesis_ch4-6.md'), costs=Path(__file__).with_name("full_costs.json"))
