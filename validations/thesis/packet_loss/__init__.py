"""Thesis Ch. 4: packet loss, DMA-PL and UPGA-PL (seed 001 Ch. 4; digest 001_thesis_ch4-6.md §2, §6 U1-U10, G1-G2).

* :mod:`.setting` — the chapter's quadratic setting shared by its claims.
* :mod:`.aggregators` — all aggregators coincide without loss, unbiasedness, Lemma A.1 (U1-U3).
* :mod:`.theory` — Theorem 4.3.1 against the exact gap, loss sensitivity, Remark 1.3.1, theory vs paper mode
  (U4, U5, G1, G2).
* :mod:`.moments` — DMA-PL's biased fixed point, the constant-step floor, the homogeneous case (U6, U8, U9).
* :mod:`.udma` — UDMA-PL's instability by its exact second moment (U7).
* :mod:`.images` — UPGA-PL against DMA-PL on images at small scale (U10).
* :mod:`.bursty` — beyond Assumption 14: UPGA-PL's constant-step bias under bursty (Gilbert-Elliott) losses.
"""
