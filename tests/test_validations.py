"""The quick claim suite gives the verdicts its closed forms predict (a regression net for the engine)."""

import pytest

from theorylab.claims import Context, evaluate, select

EXPECTED = {
    "fedawe.example1.fedavg_all": "holds",
    "fedawe.example1.fedavg_active": "holds",
    "fedawe.example1.fedavg_known_p": "holds",
    "fedawe.fig2": "holds",
    "fedawe.prop1": "holds",
    "fedawe.mixing": "holds",
    "fedawe.lemma4": "holds",
    "fedawe.lemma1": "holds",
    "fedawe.lemma2": "holds",
    "fedawe.example1.fedawe": "holds",
    "fedawe.aux_recursion": "holds",
    "fedawe.prop2": "holds",
    "fedawe.lemma6": "holds",
    "fedawe.lemma3": "holds",
    "fedawe.lemma5": "holds",
    "fedawe.thm1.bound": "holds",
    # the fitted exponents (1.00, 1.99, -1.05) have 99% CIs that contain the bound's (1, 2, -1): without a slack a
    # one-sided test cannot confirm a tight exponent
    "fedawe.thm1.scaling": "inconclusive",
    "fedawe.cor1.rate": "holds",
    # T = 2^10 << (sm)^3: the slopes in s (gradient -0.43, consensus +0.15) lie above -1/2 where the statement is silent
    "fedawe.cor1.speedup": "inconclusive",
    "fedawe.baselines": "holds",
    "thesis.thm2_3_2": "holds",
    "thesis.thm2_3_4": "holds",
    # seed 003 (performative FL); 'violated' where the paper's statement is wrong on the testbed (see each claim's errata)
    "performative.ps_closed_form": "holds",
    "performative.po_closed_form": "holds",
    "performative.prop2_8": "holds",
    "performative.ps_existence": "violated",  # a repelling PS exists for eps_bar > 1
    "performative.example2_7": "violated",  # the example's gradients are theta/2, 3theta/2, theta
    "performative.prop2_9": "holds",
    "performative.sampling_variance": "holds",
    "performative.exact_moments": "holds",
    "performative.digest_tables": "violated",  # Table E prints 1.26 where the exact value is 1.25495 (Table B: 1.255)
    "performative.thm3_1": "holds",
    "performative.thm3_2": "holds",
    "performative.thm3_3": "holds",
    "performative.theorem_scope": "violated",  # the experiments' eta_0 = 0.01 lies far outside Thms B.4/C.5
    "performative.consensus": "holds",
    "performative.scheme_ordering": "violated",  # full participation, not Scheme II, is fastest in expectation
    "performative.effect_of_E": "violated",  # per local iteration the error grows monotonically with E
    "performative.effect_of_K": "violated",  # Scheme II's error decreases monotonically in K
    "performative.heterogeneity": "holds",
    "performative.constant_step": "holds",
    "performative.scheme2_unequal_p": "holds",
    "performative.released_full_path": "holds",
    "performative.delta0_zero": "holds",
    "performative.credit_convergence": "holds",
    "performative.batch_size": "holds",
}


@pytest.mark.parametrize("claim_id", sorted(EXPECTED))
def test_quick_verdict(claim_id, tmp_path):
    (c,) = select([claim_id])
    result = evaluate(c, Context(quick=True, figure_dir=tmp_path))
    assert result.error is None, result.error
    assert result.verdict == EXPECTED[claim_id], [(ch.name, ch.verdict) for ch in result.evidence.checks]
    if result.evidence.figure:
        assert (tmp_path / f"{result.evidence.figure.split('/')[-1]}").exists()
