"""Thesis Ch. 2: Markov-correlated availability and CA-Fed (seed 001 Ch. 2; digest 001_thesis_ch1-3.md §2, §5.1-5.2,
§8 V1-V16).

* :mod:`.error_decomposition` — Theorems 2.3.2 and 2.3.4: error = optimisation + bias (chi^2 and TV bounds).
* :mod:`.markov` — the two-state and product chains, the mixing bound (2.5) with C_P and T_P, mixing times (V1-V4).
* :mod:`.estimators` — the Beta-Bayesian pi_hat and transition-count lambda_hat, the author's variant, FedAU (V5, V26).
* :mod:`.exclusion` — CA-Fed's proxy, its kappa_bar^2 limits and the clients it excludes (V11-V13).
* :mod:`.markov_weights` — the weighted scheme under Markov availability, by exact moments (V8, V10).
* :mod:`.leaf` — CA-Fed on Synthetic LEAF: the kappa_bar^2 trade-off, its small-kappa limit, Fig. 2.1a (V12, V14).
* :mod:`.theory` — Remark 1.3.1, the q-optimisation (2.19) and its convexity, Guideline A (V7, V15, V16).
* :mod:`.thm2_3_3` — Theorem 2.3.3 (reconciled) and its growth with the chains' correlation (V9).
"""
