import numpy as np
import pytest
import torch

from helpers import draw_masks
from theorylab.participation.base import availability_bounds
from theorylab.participation.bernoulli import bernoulli
from theorylab.participation.cyclic import cyclic
from theorylab.participation.dynamics import Schedule, fedawe_base_probabilities, fedawe_recipe
from theorylab.participation.markov import markov
from theorylab.participation.uniform_k import uniform_k
from theorylab.registry import build


def test_paper_dynamics_formulas():
    """Digest 000 §5: p_i^t = clip(p_i f(t)); checked at hand-picked rounds."""
    base = np.array([0.2, 0.9])
    stair = Schedule(base, "staircase")
    assert np.allclose(stair(0), base) and np.allclose(stair(9), base)
    assert np.allclose(stair(10), 0.4 * base) and np.allclose(stair(19), 0.4 * base) and np.allclose(stair(20), base)
    sine = Schedule(base, "sine", gamma=0.3, period=20)
    assert np.allclose(sine(5), base) and np.allclose(sine(15), 0.4 * base) and np.allclose(sine(0), 0.7 * base)
    inter = Schedule(base, "interleaved_sine", gamma=0.3, period=20, delta0=0.1)
    assert np.allclose(inter(15), [0.0, 0.36])  # 0.2*0.4 = 0.08 < 0.1 is cut to zero
    assert np.allclose(inter(5), base)
    assert Schedule(np.array([1.0]), "stationary")(np.arange(3)).shape == (3, 1)


@pytest.mark.parametrize("dynamics", ["stationary", "staircase", "sine", "interleaved_sine"])
def test_bernoulli_frequencies_match_probabilities(dynamics):
    process = bernoulli([0.15, 0.5, 0.85], dynamics=dynamics)
    rounds, replicas = 40, 3000
    masks = draw_masks(process, rounds, replicas).double().mean(1).numpy()  # (rounds, m)
    p = np.stack([process.probabilities(t) for t in range(rounds)])
    se = np.sqrt(p * (1 - p) / replicas) + 1e-12
    assert np.all(np.abs(masks - p) <= 5 * se)


def test_bernoulli_is_independent_across_clients():
    masks = draw_masks(bernoulli([0.5, 0.5]), 200, 500).double()
    both = (masks[..., 0] * masks[..., 1]).mean().item()
    assert abs(both - 0.25) < 5 * np.sqrt(0.25 * 0.75 / masks[..., 0].numel())


def test_markov_law_and_spectrum():
    pi, lam = np.array([0.9, 0.1, 0.5]), np.array([0.0, 0.9, -0.5])
    process = markov(pi, lam)
    P = process.transition_matrices()
    assert np.allclose(P.sum(-1), 1.0)
    for Pi, p, l in zip(P, pi, lam):
        eig = np.sort(np.linalg.eigvals(Pi).real)
        assert np.allclose(eig, np.sort([1.0, l]))
        assert np.allclose(np.array([1 - p, p]) @ Pi, [1 - p, p])
    joint, rho = process.product_chain()
    moduli = np.sort(np.abs(np.linalg.eigvals(joint)))
    assert moduli[-1] == pytest.approx(1.0) and moduli[-2] == pytest.approx(process.lambda_bar)
    assert np.allclose(rho @ joint, rho)
    assert process.lambda_thesis == pytest.approx((0.9 + 1) / 2)


def test_markov_mixing_times_match_matrix_powers():
    process = markov([0.3, 0.6], [0.7, -0.4])
    for eps in (0.25, 0.01):
        for Pi, p, t_mix in zip(process.transition_matrices(), process.pi, process.mixing_times(eps)):
            d = [0.5 * np.abs(np.linalg.matrix_power(Pi, t) - [1 - p, p]).sum(1).max() for t in range(60)]
            assert t_mix == next(t for t, v in enumerate(d) if v <= eps)
        joint, rho = process.product_chain()
        d = [0.5 * np.abs(np.linalg.matrix_power(joint, t) - rho).sum(1).max() for t in range(60)]
        assert process.product_mixing_time(eps) == next(t for t, v in enumerate(d) if v <= eps)


def test_markov_relaxation_times_bracket_the_mixing_times():
    """Levin-Peres-Wilmer Thms 12.4-12.5 for reversible chains (two-state chains are):
    (t_rel - 1) log(1/(2 eps)) <= t_mix(eps) <= t_rel log(1/(eps pi_min)), with t_rel = 1/(1 - |lambda|)."""
    process = markov([0.3, 0.6, 0.9, 0.5], [0.7, -0.4, 0.95, 0.2])
    t_rel = process.relaxation_times()
    assert np.allclose(t_rel, 1 / (1 - np.abs(process.lam)))
    pi_min = np.minimum(process.pi, 1 - process.pi)
    for eps in (0.25, 0.01):
        t_mix = process.mixing_times(eps)
        assert np.all((t_rel - 1) * np.log(1 / (2 * eps)) <= t_mix)
        assert np.all(t_mix <= np.ceil(t_rel * np.log(1 / (eps * pi_min))))


def test_markov_simulation_matches_its_law():
    pi, lam = np.array([0.2, 0.7]), np.array([0.8, 0.3])
    process = markov(pi, lam, start=[1.0, 0.0])
    masks = draw_masks(process, 30, 4000).double().numpy()
    for t in (0, 1, 5, 29):
        expected = process.probabilities(t)
        assert np.all(np.abs(masks[t].mean(0) - expected) <= 5 * np.sqrt(expected * (1 - expected) / 4000) + 1e-9)
    prev, nxt = masks[:-1], masks[1:]
    stay_active = (prev * nxt).sum((0, 1)) / prev.sum((0, 1))  # estimates P(1 -> 1) = lam + (1 - lam) pi
    assert np.allclose(stay_active, lam + (1 - lam) * pi, atol=0.02)


def test_uniform_k_and_cyclic():
    masks = draw_masks(uniform_k(10, 3), 50, 20)
    assert torch.all(masks.sum(-1) == 3)
    freq = masks.double().mean((0, 1)).numpy()
    assert np.all(np.abs(freq - 0.3) < 5 * np.sqrt(0.21 / 1000))
    cyc = cyclic(5, 2)
    masks = draw_masks(cyc, 4, 2)
    assert masks[0, 0].tolist() == [True, True, True, False, False] and masks[1, 0].tolist() == [False] * 3 + [True] * 2
    assert np.array_equal(masks[2, 1].numpy(), cyc.probabilities(2) > 0)


def test_availability_bounds_and_recipe():
    process = bernoulli([0.2, 0.6], dynamics="sine")
    delta, delta_max = availability_bounds(process, 20)
    assert delta == pytest.approx(0.2 * 0.4) and delta_max == pytest.approx(0.6)
    p = fedawe_recipe(100, seed=3)
    assert p.shape == (100,) and np.all((0 <= p) & (p <= 1))
    nu = np.eye(10)[:2]
    assert np.all(fedawe_base_probabilities(nu, seed=0)[1:] <= 1.0)


@pytest.mark.parametrize("spec, message", [
    ({"name": "bernoulli", "p": [0.5, 1.2]}, r"p\[1\] = 1.2 is outside the allowed range \[0, 1\]"),
    ({"name": "bernoulli", "p": []}, "non-empty"),
    ({"name": "bernoulli", "p": [0.5], "dynamics": "cosine"}, "dynamics"),
    ({"name": "bernoulli", "p": [0.5], "dynamics": "sine", "gamma": 0.7}, "gamma"),
    ({"name": "markov", "pi": [0.5, 1.0], "lam": [0.1, 0.1]}, r"pi\[1\] = 1 is outside the allowed range \(0, 1\)"),
    ({"name": "markov", "pi": [0.9], "lam": [-0.5]}, r"lam\[0\] = -0.5 is outside the feasible range \[-0.111111, 1\) for pi\[0\] = 0.9"),
    ({"name": "markov", "pi": [0.2], "lam": [1.0]}, "feasible range"),
    ({"name": "uniform_k", "n_clients": 0, "k": 1}, "at least one client"),
    ({"name": "uniform_k", "n_clients": 4, "k": 5}, "k must be"),
    ({"name": "cyclic", "n_clients": 3, "groups": 0}, "groups"),
    ({"name": "bernoulli", "q": [0.5]}, "bad parameters"),
])
def test_bad_parameters_name_the_parameter_and_range(spec, message):
    with pytest.raises(ValueError, match=message):
        build("participation", spec)
