"""Topologies (theorylab.topology): rho against closed forms, Sinkhorn's output, the validator's refusals, gossip."""

import math

import numpy as np
import pytest
import torch

from theorylab.registry import build, entries
from theorylab.topology.matrix import check_mixing, contraction, gossip, make_topology
from theorylab.topology.random_graphs import metropolis_hastings, sinkhorn
from theorylab.topology.ring import ring_matrix, ring_spectrum


def topo(name, **params):
    return build("topology", {"name": name, **params})


def test_every_factory_is_listed():
    assert {"ring", "complete", "torus", "erdos_renyi", "random_doubly_stochastic", "block_diagonal", "subring",
            "interpolated"} <= set(entries("topology"))


@pytest.mark.parametrize("n", [3, 4, 5, 10, 17, 50])
def test_ring_rho_is_the_circulant_eigenvalue(n):
    assert topo("ring", n=n).rho == pytest.approx(max(abs(1 / 3 + 2 / 3 * math.cos(2 * math.pi * k / n))
                                                      for k in range(1, n)), abs=1e-12)
    assert np.sort(np.linalg.eigvalsh(ring_matrix(n))) == pytest.approx(np.sort(ring_spectrum(n)), abs=1e-12)


def test_paper_values_of_the_ring():
    assert topo("ring", n=50).rho == pytest.approx(0.99474, abs=5e-6)
    assert topo("ring", n=10).rho == pytest.approx(0.87268, abs=5e-6)
    assert topo("ring", n=2).W == pytest.approx(np.array([[1 / 3, 2 / 3], [2 / 3, 1 / 3]]))
    assert topo("ring", n=2).rho == pytest.approx(1 / 3)


@pytest.mark.parametrize("a,b", [(2, 3), (4, 5), (5, 5)])
def test_torus_spectrum_is_the_product_of_ring_spectra(a, b):
    t = topo("torus", a=a, b=b)
    products = np.sort(np.outer(ring_spectrum(a), ring_spectrum(b)).ravel())
    assert np.sort(np.linalg.eigvalsh(t.W)) == pytest.approx(products, abs=1e-12)
    assert t.rho == pytest.approx(max(topo("ring", n=a).rho, topo("ring", n=b).rho), abs=1e-12)


def test_complete_and_interpolated():
    assert topo("complete", n=7).rho == pytest.approx(0.0, abs=1e-15)
    for lam in (0.0, 0.2, 0.9):
        assert topo("interpolated", n=9, lam=lam).rho == pytest.approx(lam, abs=1e-12)


def test_random_topologies_are_seeded_and_valid():
    a, b = topo("erdos_renyi", n=20, p=0.3, seed=4), topo("erdos_renyi", n=20, p=0.3, seed=4)
    assert np.array_equal(a.W, b.W) and not np.array_equal(a.W, topo("erdos_renyi", n=20, p=0.3, seed=5).W)
    assert np.allclose(a.W, a.W.T) and 0 < a.rho < 1
    # symmetric: rho is the largest |eigenvalue| except the one at 1
    eig = np.sort(np.abs(np.linalg.eigvalsh(a.W)))
    assert a.rho == pytest.approx(eig[-2], abs=1e-12)
    s = topo("random_doubly_stochastic", n=12, seed=3)
    assert np.abs(s.W.sum(0) - 1).max() <= 1e-13 and np.abs(s.W.sum(1) - 1).max() <= 1e-13
    assert (s.W > 0).all()
    # not symmetric: rho is the top singular value on 1-perp, i.e. sqrt(lambda_2(W^T W))
    assert s.rho == pytest.approx(math.sqrt(np.sort(np.linalg.eigvalsh(s.W.T @ s.W))[-2]), abs=1e-12)


def test_sinkhorn_output_is_doubly_stochastic():
    W = sinkhorn(np.random.default_rng(0).random((30, 30)) + 1e-3)
    assert np.abs(W.sum(0) - 1).max() <= 1e-13 and np.abs(W.sum(1) - 1).max() <= 1e-13
    with pytest.raises(ValueError, match="positive"):
        sinkhorn(np.zeros((3, 3)))


def test_metropolis_hastings_weights():
    A = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)  # path 0-1-2: degrees 1, 2, 1
    W = metropolis_hastings(A)
    assert W == pytest.approx(np.array([[2 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 1 / 3], [0, 1 / 3, 2 / 3]]))


def test_block_diagonal_and_subring():
    t = topo("block_diagonal", sizes=[10, 5, 3])
    assert t.clusters == (tuple(range(10)), tuple(range(10, 15)), (15, 16, 17))
    assert t.rho_max == pytest.approx(topo("ring", n=10).rho) and t.rho == pytest.approx(1.0)
    seeded = topo("block_diagonal", sizes=[4, 4], inner={"name": "random_doubly_stochastic", "seed": 1})
    assert not np.array_equal(seeded.W[:4, :4], seeded.W[4:, 4:])
    assert topo("block_diagonal", sizes=[6], inner={"name": "complete"}).rho == pytest.approx(0.0, abs=1e-15)
    s = topo("subring", members=[5, 1, 3, 7], n=8)
    assert s.W[np.ix_([5, 1, 3, 7], [5, 1, 3, 7])] == pytest.approx(ring_matrix(4))
    assert s.W[0, 0] == 1.0 and s.rho_max == pytest.approx(topo("ring", n=4).rho)


def test_gossip_preserves_the_average_and_matches_numpy():
    t = topo("erdos_renyi", n=12, p=0.4, seed=0)
    X = torch.randn(5, 12, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = gossip(t.tensor(), X)
    assert torch.allclose(Y.mean(1), X.mean(1), atol=1e-14)
    assert np.allclose(Y.numpy(), np.einsum("ij,rjd->rid", t.W, X.numpy()))
    per_replica = gossip(t.tensor().expand(5, 12, 12), X)
    assert torch.equal(per_replica, Y)
    with pytest.raises(ValueError, match="shape"):
        gossip(t.tensor(), X[0])
    with pytest.raises(ValueError, match="shape"):
        gossip(torch.eye(3, dtype=torch.float64), X)


@pytest.mark.parametrize("W,match", [
    (np.ones((2, 3)) / 3, "square"),
    (np.array([[0.5, np.nan], [0.5, 0.5]]), "finite"),
    (np.array([[1.5, -0.5], [-0.5, 1.5]]), "non-negative"),
    (np.array([[0.6, 0.5], [0.4, 0.5]]), "row 0"),
    (np.array([[0.5, 0.5], [0.6, 0.4]]), "column 0"),
    (np.eye(3), "connected"),
    (ring_matrix(6, 0.0), "contract"),
])
def test_bad_matrices_are_refused_with_the_property(W, match):
    with pytest.raises(ValueError, match=match):
        check_mixing(W)


def test_clusters_are_validated():
    W = topo("block_diagonal", sizes=[3, 3]).W
    with pytest.raises(ValueError, match="connected within cluster 0"):
        check_mixing(W)
    assert check_mixing(W, [range(3), range(3, 6)]) is not None
    with pytest.raises(ValueError, match="block-diagonal"):
        check_mixing(topo("ring", n=6).W, [range(3), range(3, 6)])
    with pytest.raises(ValueError, match="partition"):
        make_topology("x", W, [range(3)])


@pytest.mark.parametrize("name,params,match", [
    ("ring", {"n": 0}, "n must be"), ("ring", {"n": 5, "self_weight": 1.5}, "self_weight"),
    ("torus", {"a": 2, "b": 2.5}, "b must be"), ("erdos_renyi", {"n": 5, "p": 0.0}, "p must"),
    ("erdos_renyi", {"n": 5, "p": 0.5, "seed": -1}, "seed"), ("interpolated", {"n": 5, "lam": 1.0}, "lam"),
    ("subring", {"members": [0, 0], "n": 4}, "members"), ("block_diagonal", {"sizes": []}, "sizes"),
    ("block_diagonal", {"sizes": [3], "inner": {"name": "ring", "n": 3}}, "inner"),
    ("erdos_renyi", {"n": 30, "p": 0.001}, "too small for a connected graph"),
    ("erdos_renyi", {"n": 100, "p": 0.02}, "no connected graph"),
    ("ring", {"n": 6, "self_weight": 0.0}, "self_weight must be > 0"), ("torus", {"a": 3, "b": 3, "self_weight": 1.0},
                                                                        "self_weight must be < 1"),
    ("ring", {"n": 10**6}, "n must be"), ("block_diagonal", {"sizes": [1500, 1500]}, "totalling"),
])
def test_bad_parameters_are_refused(name, params, match):
    with pytest.raises(ValueError, match=match):
        topo(name, **params)


def test_contraction_of_unvalidated_matrices():
    assert contraction(ring_matrix(8, 0.0)) == pytest.approx(1.0, abs=1e-12)  # bipartite: eigenvalue -1
    assert contraction(ring_matrix(9, 0.0)) == pytest.approx(math.cos(math.pi / 9), abs=1e-12)
    with pytest.raises(ValueError, match="square"):
        contraction(np.ones(3))


def test_an_erdos_renyi_p_too_small_for_connectivity_is_refused_at_once():
    import time

    started = time.monotonic()
    with pytest.raises(ValueError, match=r"p = 1e-09 is too small .* n - 1 = 1999 edges"):
        build("topology", {"name": "erdos_renyi", "n": 2000, "p": 1e-9})
    assert time.monotonic() - started < 5  # refused by the binomial tail, not after 1000 draws of 2000 x 2000
    assert build("topology", {"name": "erdos_renyi", "n": 5, "p": 0.3}).rho < 1  # a small p that can connect


@pytest.mark.parametrize("W", [[[1, 0], [0]], "abc", [["a", "b"], ["c", "d"]]])
def test_a_ragged_or_textual_W_is_named(W):
    with pytest.raises(ValueError, match="W must be a square matrix of numbers"):
        make_topology("explicit W", W)
