"""Gossip topologies: mixing matrices W over the clients, with the spectral quantity rho = ||W - J||_2.

Seed 002 Assumption 4.5 / D.2 (digest 002 §1.8).  Modules: ``matrix`` (the validated :class:`Topology`, the
validator ``check_mixing``, ``contraction`` = ||W - J||_2 and the torch ``gossip`` step), ``ring`` (ring, sub-ring,
torus), ``complete`` (J and W_lambda = lambda I + (1 - lambda) J), ``random_graphs`` (Erdos-Renyi with
Metropolis-Hastings weights, Sinkhorn-balanced matrices), ``clusters`` (CAFGA's block-diagonal W).  Every factory is
registered under the registry kind "topology" and returns a validated :class:`Topology`.
"""
