"""Lossy channels: world models beside participation that draw a round's downlink and uplink delivery masks.

A channel is an object with ``n_clients``, ``init(replicas, streams) -> state`` and
``draw(state, t, streams) -> (state, Links)`` (:class:`theorylab.kernels.algorithm.Links`), drawn in round order from
the ``channel`` stream only, so adding a channel never changes the participation or gradient draws of a run.
"""
