"""Gossip topologies: mixing matrices W over the clients, with the spectral quantity rho = ||W - J||_2."""
