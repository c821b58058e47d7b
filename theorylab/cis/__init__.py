r"""Fed-CIS: federated training of early-exit networks for cooperative inference systems (seed 001 Ch. 5).

One concept per module: :mod:`.rates` (the request-rate model and :math:`\Lambda_e`), :mod:`.sampling` (the
matrix :math:`p`, :math:`\mathcal C_e`, :math:`|D_{e,p}|`), :mod:`.aggregation` (Algorithm 6's server step and its
sampling variance), :mod:`.strategies` (exit weights :math:`\tilde\Lambda`), :mod:`.training` (Algorithm 6 on
quadratic exit losses) and :mod:`.summary` (from a topology to :math:`\Lambda_e`, the weights and the bound's
terms in one call).  Digest: shared/spec/001_thesis_ch4-6.md §3.
"""
