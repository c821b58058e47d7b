"""Small shared helpers for the tests."""

from theorylab.rng import Streams


def draw_masks(process, rounds, replicas=1, seed=0):
    """Masks of ``rounds`` consecutive draws, stacked to ``(rounds, replicas, m)``."""
    import torch

    streams = Streams(seed, replicas)
    state = process.init(replicas, streams)
    masks = []
    for t in range(rounds):
        state, mask = process.draw(state, t, streams)
        masks.append(mask)
    return torch.stack(masks)


def drive(algorithm, problem, schedule, replicas=1, seed=0):
    """Run ``algorithm`` on ``problem`` through hand-built asynchronous steps: ``schedule`` is a list of
    ``(arrived, staleness, dispatched)`` per server step, each a length-m list (bools / ints), the same for every
    replica.  Returns the state after the last step."""
    import numpy as np
    import torch

    from theorylab.kernels.algorithm import Arrivals, Round

    streams = Streams(seed, replicas)
    state = algorithm.init(problem, problem.initial_point(replicas, streams))
    m = problem.n_clients
    for t, (arrived, staleness, dispatched) in enumerate(schedule):
        rows = [torch.tensor(v).expand(replicas, m).clone() for v in (arrived, staleness, dispatched)]
        arr = Arrivals(rows[0].bool(), rows[1].to(torch.int64), rows[2].bool(), torch.full((replicas,), float(t), dtype=torch.float64))
        state = algorithm.step(state, Round(t, arr.arrived, np.full(m, 0.5), streams, arrivals=arr), problem)
    return state


def tiny_figure(path) -> str:
    """A 2 x 1.5 inch line plot saved at ``path`` (a figure for report and notebook rendering tests)."""
    from theorylab.plotting import pyplot, save

    fig, ax = pyplot().subplots(figsize=(2, 1.5))
    ax.plot([0, 1], [1, 0])
    return str(save(fig, path))
