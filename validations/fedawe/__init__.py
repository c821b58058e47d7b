"""Claims of seed 000 — FedAWE (Xiang et al., NeurIPS 2024), digested in shared/spec/000_fedawe.md.

Modules: example1 (Example 1, Fig. 2), echo (Prop. 1), mixing (eq. (4), Lemmas 4 and 1), staleness (Lemma 2),
analysis (the d = 10 setup, Definition 1), lemmas (Prop. 2, Lemmas 3, 5, 6), theorem1 (Theorem 1's bound),
rates (Theorem 1 scalings, Corollary 1), baselines (FedAU, MIFA, FedVARP, F3AST), table2 (Table 2 at small scale),
table10 (which way the Dirichlet alpha moves heterogeneity), example2 (Example 2, Fig. 3: FedAvg against gamma).
"""

from pathlib import Path

from theorylab.sources import register_paper

register_paper("fedawe", "000_c5b371aeff7f93e4.txt",
               "Xiang, Ioannidis, Yeh, Joe-Wong, Su: Efficient Federated Learning against Heterogeneous and Non-stationary Client Unavailability (FedAWE, NeurIPS 2024)",
               ('000_fedawe.md',), costs=Path(__file__).with_name("full_costs.json"),
               catalogue=Path(__file__).with_name("catalogue.json"))
