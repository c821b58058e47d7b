"""AFGA / CAFGA "(a)" (seed 002 §5 footnote 4, §6.3 Table 5; digest 002 §1.6) and the claim afga.table5_adapted:
the variants reduce to the originals and to FedAMSGrad where the algebra says they must, the claim's helpers, and
the claim in quick mode."""

import dataclasses

import numpy as np
import pytest

from theorylab.claims import Context, evaluate, select
from theorylab.config import RunConfig
from theorylab.figures.afga_sweeps import fedamsgrad, quadratic
from theorylab.runner import run
from theorylab.trace import Trace
from theorylab.validations.afga import table5

SERVER = fedamsgrad(0.05, 1e-2)


def _final(n, m, k, switches, steps=3, rounds=6, hessians="hetero"):
    """Server model after ``rounds`` of afga on a noisy quadratic (N = n, m of them reporting, K clusters), one
    Hessian per client unless ``hessians="shared"``."""
    participation = {"name": "cluster_uniform_k", "n_clients": n, "clusters": k, "k": m // k}
    config = RunConfig(problem=dict(quadratic(n, 3, 1.0), hessians=hessians), participation=participation,
                       rounds=rounds, replicas=3,
                       seed=4, algorithm={"name": "afga", "local_steps": steps, "lr": 0.1, "server": SERVER,
                                          **switches})
    return run(config).final["server"]


@pytest.mark.parametrize("pool", ["reporting", "all"])
@pytest.mark.parametrize("k", [1, 2])
def test_adapted_with_everyone_reporting_is_the_original(pool, k):
    """M = N: the ring over the reporting clients of each cluster is each cluster's ring, and both pools are the
    whole cluster, so (a) is AFGA on ring(N) (K = 1) or CAFGA on blockdiag(ring(n)) (K = 2), to rounding."""
    n = 8
    original = _final(n, n, k, table5.variant(n, n, k)[0])
    adapted = _final(n, n, k, table5.variant(n, n, k, pool)[0])
    np.testing.assert_allclose(adapted, original, rtol=0, atol=1e-12)


def test_adapted_is_not_the_original_under_partial_participation():
    """The equivalence above is not vacuous: with M < N the (a) ring differs from the ring over all N clients."""
    n, m = 8, 2
    assert np.abs(_final(n, m, 1, table5.variant(n, m, 1)[0])
                  - _final(n, m, 1, table5.variant(n, m, 1, "reporting")[0])).max() > 1e-6


@pytest.mark.parametrize("k", [1, 2])
def test_one_local_step_of_the_reporting_reading_is_fedamsgrad(k):
    """I = 1 with S_r,t = S_r: every reporting client takes one step from x_r, and the doubly stochastic ring among
    them keeps their average, so Delta_r = -eta_l mean_{S_r} g_i(x_r): FedAMSGrad's update (same noise, same S_r)."""
    n, m = 8, 4
    fed = _final(n, m, k, {"resample": False, "gossip": False}, steps=1)
    adapted = _final(n, m, k, {"resample": False, "gossip_scope": "reporting", "clusters": k}, steps=1)
    np.testing.assert_allclose(adapted, fed, rtol=0, atol=1e-12)
    two_steps = _final(n, m, k, {"resample": False, "gossip_scope": "reporting", "clusters": k}, steps=2)
    assert np.abs(two_steps - _final(n, m, k, {"resample": False, "gossip": False}, steps=2)).max() > 1e-6


def test_reporting_reading_is_fedamsgrad_on_a_shared_hessian():
    """With one Hessian A the gradients are affine in x with a common slope, so the mean over S_r of
    A(x_i - b_i) + noise is A(mean x_i - mean b_i) + mean noise: mixing among S_r never moves the reporting average,
    and (a) under S_r,t = S_r is FedAMSGrad for every I."""
    n, m = 8, 4
    fed = _final(n, m, 1, {"resample": False, "gossip": False}, steps=4, hessians="shared")
    adapted = _final(n, m, 1, {"resample": False, "gossip_scope": "reporting"}, steps=4, hessians="shared")
    np.testing.assert_allclose(adapted, fed, rtol=0, atol=1e-12)


def test_resampling_inside_the_reporting_set_is_no_resampling_in_a_round():
    """resample_pool='reporting' draws m of the cluster's m reporting clients: S_r,t = S_r (one round: later rounds'
    reporting sets follow the participation stream, which re-sampling also draws from)."""
    n, m, k = 8, 4, 2
    pooled = _final(n, m, k, table5.variant(n, m, k, "reporting")[0], rounds=1)
    fixed = _final(n, m, k, {"resample": False, "gossip_scope": "reporting", "clusters": k}, rounds=1)
    np.testing.assert_allclose(pooled, fixed, rtol=0, atol=1e-12)


def test_step_scales():
    assert list(table5.step_scales("all", 20, 4).values()) == [1.0]
    assert list(table5.step_scales("reporting", 20, 4).values()) == [1.0, 0.2]


def test_tolerance_is_table5s_largest_gap():
    assert table5.SIMILAR == pytest.approx(78.80 - 76.59)


def test_accuracy_at_a_horizon_averages_the_window_ending_there():
    acc = np.array([[0.1, 0.2, 0.4, 0.6, 0.8], [0.0, 0.3, 0.5, 0.7, 0.9]])
    trace = Trace({}, np.array([0, 5, 10, 15, 20]), {"server.test_acc": acc}, np.array([-1, -1]))
    np.testing.assert_allclose(table5.accuracy([trace], 10, 2), [30.0, 40.0])
    np.testing.assert_allclose(table5.accuracy([trace, trace], 20, 1), [80.0, 90.0, 80.0, 90.0])


def _gaps(shift, spread=0.1, n=20):
    noise = np.random.default_rng(0).normal(0.0, spread, n)
    return {"reading A": {"choice 1": shift + noise, "choice 2": shift - noise},
            "reading B": {"choice 1": shift + noise}}


@pytest.mark.parametrize("shift, upper, lower", [(0.0, "holds", "holds"), (5.0, "violated", "holds"),
                                                 (-5.0, "holds", "violated"), (2.21, "inconclusive", "holds")])
def test_similar_decides_both_sides_across_readings(shift, upper, lower):
    checks = [c.decide(0.999) for c in table5.similar("x", _gaps(shift))]
    assert [c.verdict for c in checks] == [upper, lower]


def test_similar_needs_every_reading_to_violate():
    gaps = _gaps(5.0)
    gaps["reading B"] = {"choice 1": gaps["reading B"]["choice 1"] - 5.0}
    assert table5.similar("x", gaps)[0].decide(0.999).verdict == "inconclusive"


def test_full_mode_image_path_runs_on_a_tiny_setup():
    """Full mode's configurations (image testbed, clients key, partition) on digits with two rounds."""
    tiny = dataclasses.replace(table5.FULL, problem={"name": "digits", "model": "logistic", "batch_size": 8,
                                                     "eval_train": None, "partition": "iid"},
                               local_steps=1, rounds=2, every=1, window=1, seeds=(0,), replicas=2, device="cpu")
    traces = table5.runs(Context(), tiny, 10, 4, 2, *table5.variant(10, 4, 2, "all"))
    assert table5.accuracy(traces, 2, 1).shape == (2,)


@pytest.mark.slow(reason="runs the claim at its quick budget (about 4 s); `make demo --check-expected` checks its "
                         "verdict too")
def test_claim_runs_in_quick_mode():
    claim = select(["afga.table5_adapted"])[0]
    result = evaluate(claim, Context(quick=True))
    assert result.error is None, result.error
    assert result.verdict == claim.expect
    assert len(result.evidence.checks) == 4
