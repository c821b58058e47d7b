"""The AFGA Figs. 3-5 stand-in (figures/afga_curves.py): it draws exactly the Tables 1-3 claim's runs, and renders
(on a tiny version of the claim's quick setup)."""

import dataclasses

import pytest

from theorylab.claims import Context
from theorylab.figures import afga_curves, afga_images
from theorylab.registry import lookup

TINY = dataclasses.replace(afga_images.QUICK, rounds=2, every=1, window=1, replicas=2)


class Recording:
    """A context that records the configuration of every run (everything else is the wrapped context's)."""

    def __init__(self, ctx):
        self.ctx, self.configs = ctx, []

    def __getattr__(self, name):
        return getattr(self.ctx, name)

    def run(self, config):
        self.configs.append(config.key())
        return self.ctx.run(config)


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setattr(afga_curves, "QUICK", TINY)
    return afga_curves.curves(Context(quick=True))


def test_the_figure_draws_the_claims_runs(monkeypatch):
    """The configurations the figure runs are those the claim afga.cnn_tables1_3 runs (recorded from the claim
    itself), each once: two settings x two step-size choices x three methods, one run per seed."""
    monkeypatch.setattr(afga_curves, "QUICK", TINY)
    monkeypatch.setattr("theorylab.validations.afga.images.QUICK", TINY)
    claimed, drawn = Recording(Context(quick=True)), Recording(Context(quick=True))
    lookup("claim", "afga.cnn_tables1_3").obj.check(claimed)
    grouped = afga_curves.curves(drawn)
    # per setting and seed: FedAMSGrad (the same under both choices), AFGA and CAFGA under each choice
    assert set(drawn.configs) == set(claimed.configs) and len(set(drawn.configs)) == 2 * 5 * len(TINY.seeds)
    assert list(grouped) == [(s, c) for s in ("Setting 1", "Setting 2") for c in afga_images.STEP_CHOICES]
    for methods in grouped.values():
        assert list(methods) == list(afga_curves.METHODS) and all(len(r) == len(TINY.seeds) for r in methods.values())


def test_caption_names_the_stand_in(tiny):
    traces = [t for methods in tiny.values() for runs in methods.values() for t in runs]
    text = afga_curves.caption(traces)
    assert "digits" in text and "logistic" in text and "R = 2 rounds" in text and "ConvMixer" in text


def test_figure_renders_on_tiny_runs(tiny, tmp_path):
    path = afga_curves.draw(tiny, tmp_path / "afga-figs3-5.png")
    assert path.exists() and path.stat().st_size > 10_000
