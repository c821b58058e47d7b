"""Availability estimators: counters and estimates by hand, against an independent vectorised count, the exact
mean of the counts under a stationary chain, and FedAU's rule and limit."""

import numpy as np
import pytest
import torch

from helpers import draw_masks
from theorylab.participation import estimators as est
from theorylab.participation.bernoulli import bernoulli
from theorylab.participation.markov import markov

SEQUENCE = [1, 1, 0, 0, 0, 1, 1, 1, 0, 1]  # one client, ten rounds


def _counts(history):
    """Counters after feeding ``history`` (T, R, m) round by round."""
    history = torch.as_tensor(np.asarray(history, dtype=bool))
    counts = est.init_counts(*history.shape[1:])
    for mask in history:
        counts = est.update_counts(counts, mask)
    return counts


def test_counts_and_estimates_by_hand():
    counts = _counts(np.array(SEQUENCE)[:, None, None])
    n = {k: float(counts[f"avail_n{k}"]) for k in ("00", "01", "10", "11")}
    assert n == {"00": 2.0, "01": 2.0, "10": 2.0, "11": 3.0}  # 9 transitions
    assert float(counts["avail_rounds"]) == 10 and float(counts["avail_active"]) == 6
    assert float(est.pi_hat(counts)) == pytest.approx(7 / 12)
    assert float(est.pi_hat(counts, est.BetaPrior(2.0, 3.0))) == pytest.approx(8 / 15)
    p00, p11 = (float(v) for v in est.transition_hat(counts))
    assert (p00, p11) == (pytest.approx(3 / 6), pytest.approx(4 / 7))
    assert float(est.lambda_hat(counts)) == pytest.approx(3 / 6 + 4 / 7 - 1)
    assert float(est.pi_hat_stationary(counts)) == pytest.approx((1 - 3 / 6) / (2 - 3 / 6 - 4 / 7))
    q00, q11 = (float(v) for v in est.transition_hat(counts, variant="repository"))
    assert (q00, q11) == (pytest.approx(3 / 12), pytest.approx(4 / 12))  # divided by t + a + b, t = 10


def test_counts_match_a_vectorised_count():
    history = draw_masks(markov([0.3, 0.8, 0.5], [0.6, 0.1, -0.5]), 200, 5, seed=2).numpy()
    counts = _counts(history)
    prev, nxt = history[:-1], history[1:]
    for key, (a, b) in {"00": (0, 0), "01": (0, 1), "10": (1, 0), "11": (1, 1)}.items():
        np.testing.assert_array_equal(counts[f"avail_n{key}"].numpy(), ((prev == a) & (nxt == b)).sum(0))
    np.testing.assert_array_equal(counts["avail_active"].numpy(), history.sum(0))


def test_estimators_are_consistent_and_the_repository_variant_is_not():
    pi, lam = np.array([0.9, 0.1, 0.5]), np.array([0.9, 0.5, -0.5])
    counts = _counts(draw_masks(markov(pi, lam), 20000, 4, seed=7).numpy())
    np.testing.assert_allclose(est.pi_hat(counts).mean(0).numpy(), pi, atol=0.03)
    np.testing.assert_allclose(est.lambda_hat(counts).mean(0).numpy(), lam, atol=0.03)
    np.testing.assert_allclose(est.pi_hat_stationary(counts).mean(0).numpy(), pi, atol=0.03)
    _, prior = est.prior_from_parameters(pi, lam)
    repo = est.lambda_hat(counts, prior, variant="repository").mean(0).numpy()
    np.testing.assert_allclose(repo, est.repository_lambda_limit(pi, lam), atol=0.03)
    # exact mean of the counts under the stationary start: E[n_11] = (t-1) pi P_11, E[n_00] = (t-1)(1-pi) P_00
    p11, p00 = lam + (1 - lam) * pi, 1 - (1 - lam) * pi
    assert np.allclose(est.repository_lambda_limit(pi, lam), pi * p11 + (1 - pi) * p00 - 1)


def test_fedau_rule_by_hand():
    """K = 3; activity 1 0 0 0 0 1 0 1: intervals close at rounds 0 (1), 3 (cut-off 3), 5 (2), 7 (2)."""
    state = est.init_fedau(1, 1)
    weights = []
    for a in [1, 0, 0, 0, 0, 1, 0, 1]:
        weights.append(float(est.fedau_weights(state)))
        state = est.update_fedau(state, torch.tensor([[bool(a)]]), cutoff=3)
    assert weights == pytest.approx([1, 1, 1, 1, 2, 2, 2, 2])
    assert float(est.fedau_weights(state)) == pytest.approx((1 + 3 + 2 + 2) / 4)


def test_fedau_limit_matches_a_simulation():
    p, K = np.array([0.5, 0.1, 0.03]), 30
    state = est.init_fedau(20, 3)
    for mask in draw_masks(bernoulli(p), 6000, 20, seed=4):
        state = est.update_fedau(state, mask, K)
    omega = est.fedau_weights(state).mean(0).numpy()
    np.testing.assert_allclose(omega, est.fedau_limit(p, K), rtol=0.02)
    assert est.fedau_limit(0.03, K) < 0.65 / 0.03  # biased low when 1/p ~ K


@pytest.mark.parametrize("call, message", [
    (lambda c: est.lambda_hat(c, variant="joint"), "variant must be one of"),
    (lambda c: est.pi_hat(c, est.BetaPrior(-1.0, 1.0)), "pseudo-counts"),
    (lambda c: est.transition_hat(c, est.TransitionPrior(est.BetaPrior(0.0, 0.0))), "prior.stay0"),
    (lambda c: est.update_fedau(est.init_fedau(1, 1), torch.tensor([[True]]), 0), "cutoff K"),
    (lambda c: est.fedau_limit([0.0], 5), r"p must lie in \(0, 1\]"),
])
def test_bad_inputs_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call(est.init_counts(1, 1))
