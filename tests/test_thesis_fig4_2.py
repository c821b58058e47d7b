"""Thesis Fig. 4.2's step tuning (figures/thesis_fig4_2.py): each method's step from the thesis' grid, chosen on
held-out runs by the lowest final training loss, then used for that method alone."""

import numpy as np

from theorylab.claims import Context
from theorylab.figures import thesis_fig4_2 as fig
from theorylab.figures.thesis_fig4_1 import METHODS


def test_each_method_runs_at_its_own_tuned_step(monkeypatch):
    original = fig.setup
    monkeypatch.setattr(fig, "setup", lambda ctx: {**original(ctx), "rounds": 4, "replicas": 2})
    monkeypatch.setattr(fig, "STEPS", (1e-3, 1e-1))
    monkeypatch.setattr(fig, "TUNING_REPLICAS", 2)
    ctx = Context(quick=True)
    s = fig.setup(ctx)
    steps = fig.tuned_steps(ctx, s)
    assert set(steps) == set(METHODS) and set(steps.values()) <= {1e-3, 1e-1}
    # the rule, recomputed from the tuning runs themselves: the chosen step's mean final training loss is the lower
    seed = ctx.seed + fig.TUNING_SEED
    for label, chosen in steps.items():
        loss = {step: fig.curves(ctx, fig._problem(s, seed), step, s["rounds"], fig.TUNING_REPLICAS, seed, "float32",
                                 "cpu", fig.losses())[label].metrics["server.train_loss"][:, -fig.WINDOW:].mean()
                for step in fig.STEPS}
        assert loss[chosen] == min(loss.values())
    runs, used = fig.compute(ctx)
    assert used["steps"] == steps
    for label, traces in runs.items():
        assert all(t.config["algorithm"]["lr"] == steps[label] for t in traces)
        assert all(np.isfinite(t.metrics["server.train_loss"]).all() for t in traces)
