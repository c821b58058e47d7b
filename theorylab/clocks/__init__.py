"""Asynchronous clocks: discrete-event simulators on a seeded virtual clock that turn job delays into server steps.

A clock is an object with ``n_clients``, ``init(replicas, streams) -> state`` and
``draw(state, t, streams, available) -> (state, Arrivals)`` (:class:`theorylab.kernels.algorithm.Arrivals`), where
``available`` is the participation mask of the step.  Delays come from the ``delay`` stream; no wall-clock time is
read anywhere.  An optional ``metrics(state) -> {name: (R,) tensor}`` is recorded beside the model's metrics.
"""
