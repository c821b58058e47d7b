"""Federated partitions: coverage, determinism, the FedAWE slice formula, label skew, and availability."""

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from theorylab.testbeds.data.partitions import (dirichlet, dirichlet_per_class, fedawe_availability, iid, k_classes,
                                      label_proportions, partition)
from theorylab.participation.dynamics import PAPER_PHI_MAX

LABELS = np.random.default_rng(0).integers(0, 10, 3000)


def assert_partition_of(labels, parts, complete=True):
    flat = np.concatenate(parts)
    assert len(np.unique(flat)) == len(flat), "clients share a sample"
    if complete:
        assert np.array_equal(np.sort(flat), np.arange(len(labels)))
    assert min(len(p) for p in parts) > 0


@pytest.mark.parametrize("scheme", ["dirichlet", "dirichlet_per_class", "iid"])
def test_schemes_cover_every_sample_once_and_are_seeded(scheme):
    parts = partition(LABELS, 30, scheme, seed=1, alpha=0.3)
    assert_partition_of(LABELS, parts)
    again = partition(LABELS, 30, scheme, seed=1, alpha=0.3)
    other = partition(LABELS, 30, scheme, seed=2, alpha=0.3)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again))
    assert not all(np.array_equal(a, b) for a, b in zip(parts, other))


def test_dirichlet_gives_contiguous_class_slices_with_the_rounding_formula():
    # digest 000 §6.1: client n holds samples round(N_c S_{n-1}/S) .. round(N_c S_n/S) of class c, in dataset order
    m, alpha, seed = 20, 0.1, 3
    parts = dirichlet(LABELS, m, alpha, seed)
    nu = np.random.Generator(np.random.PCG64([seed, 0])).dirichlet(np.full(10, alpha), size=m)
    for c in range(10):
        members = np.flatnonzero(LABELS == c)
        pieces = [p[LABELS[p] == c] for p in parts]
        assert np.array_equal(np.concatenate(pieces), members)  # slices in client order tile the class in order
        bounds = np.round(len(members) * np.cumsum(nu[:, c]) / nu[:, c].sum())
        assert np.array_equal(np.cumsum([len(p) for p in pieces]), bounds)


def test_smaller_alpha_means_more_label_skew():
    def skew(alpha):
        props = label_proportions(LABELS, dirichlet(LABELS, 30, alpha, seed=0), 10)
        return props.max(1).mean()
    assert skew(0.05) > skew(0.5) > skew(50.0)
    assert skew(50.0) < 0.3  # nearly uniform labels


def test_per_class_dirichlet_respects_min_size():
    parts = dirichlet_per_class(LABELS, 50, alpha=0.1, seed=0, min_size=10)
    assert_partition_of(LABELS, parts)
    assert min(len(p) for p in parts) >= 10
    with pytest.raises(ValueError, match="min_size"):
        dirichlet_per_class(LABELS, 50, alpha=0.1, seed=0, min_size=100)


def test_k_classes_per_client():
    parts = k_classes(LABELS, 25, classes_per_client=2, seed=0)
    assert_partition_of(LABELS, parts)
    assert all(len(np.unique(LABELS[p])) == 2 for p in parts)
    holders = np.bincount(np.concatenate([np.unique(LABELS[p]) for p in parts]), minlength=10)
    assert np.array_equal(holders, np.full(10, 5))  # 25 clients x 2 classes spread evenly over 10 classes
    few = k_classes(LABELS, 3, classes_per_client=2, seed=0)  # 6 of 10 classes used
    assert_partition_of(LABELS, few, complete=False)


def test_iid_sizes_and_errors():
    sizes = [len(p) for p in iid(LABELS, 7, seed=0)]
    assert max(sizes) - min(sizes) <= 1
    with pytest.raises(ValueError, match="partition scheme"):
        partition(LABELS, 5, "shards")
    with pytest.raises(ValueError, match="alpha"):
        dirichlet(LABELS, 5, 0.0, seed=0)
    with pytest.raises(ValueError, match="n_clients"):
        iid(LABELS, 4000, seed=0)
    with pytest.raises(ValueError, match="classes_per_client"):
        k_classes(LABELS, 5, 11, seed=0)


@settings(max_examples=25, deadline=None)
@example(n=20, m=1, alpha=0.0625, seed=20)  # numpy's Dirichlet returned an all-zero class column here
@given(n=st.integers(20, 400), m=st.integers(1, 20), alpha=st.floats(0.05, 5.0), seed=st.integers(0, 10**6))
def test_dirichlet_property(n, m, alpha, seed):
    labels = np.random.default_rng(seed).integers(0, 10, n)
    try:
        parts = dirichlet(labels, m, alpha, seed)
    except ValueError as err:  # only allowed when no draw can leave every client non-empty
        assert "non-empty" in str(err)
        return
    assert len(parts) == m
    assert_partition_of(labels, parts)


def test_fedawe_availability_is_label_weighted_phi():
    labels = np.array([0, 0, 1, 5, 6, 7, 9, 9])
    parts = [np.array([0, 1]), np.array([2, 3]), np.array([4, 5, 6, 7])]
    p = fedawe_availability(labels, parts, seed=11)
    phi = np.random.Generator(np.random.PCG64(11)).uniform(0.0, np.asarray(PAPER_PHI_MAX))
    assert p == pytest.approx([phi[0], (phi[1] + phi[5]) / 2, (phi[6] + phi[7] + 2 * phi[9]) / 4])
    assert p[2] <= 0.5  # a client holding only classes 5..9 has p_i <= Phi_c = 0.5
