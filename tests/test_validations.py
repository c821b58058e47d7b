"""Every claim of the quick suite gives the verdict its decorator expects (``@claim(..., expect=, because=)``):
a regression net for the engine, with each expectation and its reason kept beside the claim it describes."""

import pytest

from theorylab.claims import Context, evaluate, select

CLAIMS = {c.id: c for c in select()}


def test_every_claim_states_kind_expectation_and_reason():
    for c in CLAIMS.values():
        assert c.kind in ("statement", "reproduction", "scope"), c.id
        assert c.expect == "holds" or c.because.strip(), f"{c.id}: expected {c.expect} without a reason"


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_quick_verdict(claim_id, tmp_path):
    c = CLAIMS[claim_id]
    result = evaluate(c, Context(quick=True, figure_dir=tmp_path))
    assert result.error is None, result.error
    assert result.verdict == c.expect, (c.because, [(ch.name, ch.verdict) for ch in result.evidence.checks])
    if result.evidence.figure:
        assert (tmp_path / f"{result.evidence.figure.split('/')[-1]}").exists()
