"""Claims of seed 003 — Performative Federated Learning (Jin et al., preprint 2023), digested in
shared/spec/003_performative_fl.md (checks V1–V18 of its §8; V19, the CNN task, is not in this paper).

Ground truth: the Gaussian-mean testbed's closed forms (:mod:`theorylab.testbeds.gaussian_mean`), the exact P-FedAvg
moment engine (:mod:`theorylab.exact.pfedavg_moments`), the theorem calculator
(:mod:`theorylab.performative.theorems`) and, on credit scoring, certified RRM and multi-start PO
(:mod:`theorylab.testbeds.credit`).  Monte Carlo runs go through the runner (cached, ``ctx.run``).

Modules: closed_forms (PS and PO, §4.1), existence (Props 2.8-2.9, the proof of 2.8, Example 2.7), moments (Lemmas
C.1-C.2, exact moments, Lemma B.2), theorems (Theorems 3.1-3.3 and their scope), schemes (the experiment statements of
§4.1 on the schemes, heterogeneity and a constant step), sweeps (the effect of E and K, Figs 2-3), credit (credit
scoring, §4.2), released_code (the authors' public code), digest_tables (the digest's Tables A-E); common holds what
several of them share.  Claims about the digest's own derivations are of kind digest, those about the released code of
kind code.
"""

from pathlib import Path

from theorylab.sources import register_paper

register_paper("performative", "003_a35d59abd2578376.txt",
               "Jin, Yin, Chen, Sun, Zhang, Liu, Liu: Performative Federated Learning: A Solution to Model-Dependent and Heterogeneous Distribution Shifts (preprint, May 2023)",
               ('003_performative_fl.md',), costs=Path(__file__).with_name("full_costs.json"),
               catalogue=Path(__file__).with_name("catalogue.json"))
