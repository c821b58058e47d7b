"""Claims of seed 001 — Rodio's thesis on client heterogeneity (digests shared/spec/001_thesis_ch1-3.md and
001_thesis_ch4-6.md), one module per part of the thesis.

* :mod:`.error_decomposition` — ch. 2, Theorems 2.3.2 and 2.3.4: error = optimisation + bias (chi^2 and TV bounds).
"""
