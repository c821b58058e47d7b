"""Claims, one package per source work and one module per part of its paper (see :mod:`theorylab.claims`).

``fedawe/`` (seed 000), ``thesis/`` (seed 001), ``performative/`` (seed 003); each module registers its claims
with :func:`theorylab.claims.claim` and is discovered by :func:`theorylab.registry.load_all`.
"""
