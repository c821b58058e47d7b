"""Claims of seed 001 — Rodio's thesis on client heterogeneity (digests shared/spec/001_thesis_ch1-3.md and
001_thesis_ch4-6.md): one sub-package per system of the thesis, one module per part of its chapter.

* :mod:`.cafed` — Ch. 2, Markov-correlated availability and CA-Fed (V1-V16).
* :mod:`.fedstale` — Ch. 3, stale updates and FedStale (V17-V26).
* :mod:`.cnn` — CA-Fed's and FedStale's orderings on images at small scale (V27, V28).
* :mod:`.packet_loss` — Ch. 4, packet loss: DMA-PL, UDMA-PL, UPGA-PL (U1-U10, G1-G2).
* :mod:`.fedcis` — Ch. 5, cooperative inference: Fed-CIS (C1-C11).
"""

from pathlib import Path

from theorylab.sources import register_paper

register_paper("thesis", "001_3d656900a14cf39b.txt",
               "Rodio: Client Heterogeneity in Federated Learning Systems (PhD thesis, Université Côte d'Azur, 2024)",
               ('001_thesis_ch1-3.md', '001_thesis_ch4-6.md'), costs=Path(__file__).with_name("full_costs.json"),
               catalogue=Path(__file__).with_name("catalogue.json"))
