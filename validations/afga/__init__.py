"""Claims of seed 002 — Wang & Chen, "On the Data Heterogeneity in Adaptive Federated Learning" (AFGA / CAFGA; digest
shared/spec/002_afga.md), one module per part of the paper.

Topologies and theory (digest §1.8, §2.4-2.6, §6):

* :mod:`.topology` — rho of the paper's rings and of J (V1), closed-form spectra, ||W - J||_2 <= 1 (V2), the gossip
  contraction ||(W - J)Y||_F <= rho ||Y||_F (V7), App. C's false (W - J)^2 = W - J.
* :mod:`.theory` — the chain eq. 32 => 31 => 30, the experiments against rho <= M/(M+N) (§2.6), eq. 25's printed
  coefficient, Table 9's step sizes against the step-size conditions, Lemma F.6 by enumeration under both sampling
  readings (V8).

The kernels on closed-form testbeds (digest §2.7, §4.8, §5):

* :mod:`.equivalences` — gossip preserves the average (V3), the ablation identities with FedAMSGrad and AFGA (V4, V5),
  W = J (V6), each bit for bit under common random numbers.
* :mod:`.lemmas` — App. E-F's pathwise lemmas on AFGA runs (V9, V10, V10b, V10c) and Lemma F.8 on a worst-case path.
* :mod:`.rates` — the rate's shape in R, I and M (V11-V13).
* :mod:`.topology_effect` — the effect of rho, the consensus error, the threshold sweep of W_lambda (V14, V15, V19).
* :mod:`.ablations` — Table 4's ordering, heterogeneity, CAFGA vs AFGA, the noiseless limit (V16-V18, V20).
* :mod:`.images` — Table 4, Figs. 2 and 6 at small scale on images (the CNN-side orderings).

Helpers: :mod:`.paths` (per-round states of a kernel run), :mod:`.replay` (an independent numpy replay of Alg. 1-2).
"""

from pathlib import Path

from theorylab.sources import register_paper

register_paper("afga", "002_6ea6ec071998b21d.txt",
               "Wang, Chen: On the Data Heterogeneity in Adaptive Federated Learning (AFGA / CAFGA)",
               ('002_afga.md',), costs=Path(__file__).with_name("full_costs.json"),
               catalogue=Path(__file__).with_name("catalogue.json"))
