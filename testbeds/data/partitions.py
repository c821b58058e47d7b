r"""Federated label partitions (seeded; every client non-empty) and label-correlated availability.

A partition of ``N`` labelled samples over ``m`` clients is a list of ``m`` disjoint index arrays
covering the samples it uses.  Schemes:

``dirichlet`` (FedAWE's code, digest 000 §6.1, ``util.partition``)
    Draw :math:`\nu_n \sim \mathrm{Dir}(\alpha\mathbf 1_C)` for every client (an ``(m, C)`` matrix).
    For class :math:`c` with :math:`N_c` samples in dataset order, client :math:`n` receives the
    contiguous slice from :math:`\mathrm{round}(N_c\sum_{n'<n}\nu_{n'c}/\sum_{n'}\nu_{n'c})` to
    :math:`\mathrm{round}(N_c\sum_{n'\le n}\nu_{n'c}/\sum_{n'}\nu_{n'c})`.  Every sample is used once.
    The official code does not guard against an empty client; here a draw that leaves one empty is
    replaced by the next draw of the same generator (at most ``MAX_REDRAWS`` times).  The draw of
    class proportions per client is the per-client Dirichlet over classes of Hsu et al. 2019
    (deps_and_data §3); splitting each class in proportion to them is FedAWE's.
``dirichlet_per_class`` (per-class Dirichlet over clients: Wang et al. 2020, FedMA's "hetero-dir"; FedLab
    ``hetero_dir_partition``; deps_and_data §3)
    For every class, shuffle its samples and split them over clients with proportions
    :math:`q_c \sim \mathrm{Dir}(\alpha\mathbf 1_m)`, giving no further samples to clients that
    already hold :math:`N/m`; repeat the whole draw until every client holds at least ``min_size``.
``classes`` (pathological, thesis Ch. 4 after Achituve et al. 2021)
    Client :math:`n` holds ``k`` classes, :math:`\pi((nk + j) \bmod C)` for :math:`j<k` with a seeded
    permutation :math:`\pi`, so classes are spread evenly; each class's shuffled samples are split
    equally among the clients that hold it.  Classes held by no client (when :math:`mk < C`) go unused.
``iid``
    A seeded random permutation cut into ``m`` near-equal parts.

Availability (digest 000 §5): :math:`p_i = \langle\hat\nu_i, \phi\rangle` with :math:`\hat\nu_i` client
:math:`i`'s empirical label proportions, :math:`\phi_c\sim U(0,\Phi_c)`,
:math:`\Phi = (1,1,1,1,1,.5,.5,.5,.5,.5)` (:func:`theorylab.participation.dynamics.fedawe_base_probabilities`).
"""

from __future__ import annotations

import numpy as np

from theorylab.participation.dynamics import fedawe_base_probabilities

SCHEMES = ("dirichlet", "dirichlet_per_class", "classes", "iid")
MAX_REDRAWS = 1000


def _rng(seed: int, scheme: str) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64([int(seed), SCHEMES.index(scheme)]))


def _check(labels, n_clients: int) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer) or (labels.size and labels.min() < 0):
        raise ValueError("labels must be a 1-d array of non-negative integers")
    if int(n_clients) != n_clients or not 1 <= n_clients <= labels.size:
        raise ValueError(f"n_clients must be an integer in [1, {labels.size}] (one sample per client at least); "
                         f"got {n_clients}")
    return labels


def _positive(name: str, value: float) -> float:
    if not value > 0:
        raise ValueError(f"{name} must be > 0; got {value}")
    return float(value)


def dirichlet(labels, n_clients: int, alpha: float, seed: int) -> list[np.ndarray]:
    """FedAWE's contiguous-slice Dirichlet partition (see the module docstring)."""
    labels, alpha = _check(labels, n_clients), _positive("alpha", alpha)
    rng = _rng(seed, "dirichlet")
    classes = int(labels.max()) + 1
    by_class = [np.flatnonzero(labels == c) for c in range(classes)]
    for _ in range(MAX_REDRAWS):
        nu = rng.dirichlet(np.full(classes, alpha), size=n_clients)  # (m, C)
        if np.any(nu.sum(0) == 0):  # small alpha: numpy can return exact zeros, leaving a class's split undefined
            continue
        cuts = [np.round(len(idx) * np.cumsum(nu[:, c]) / nu[:, c].sum()).astype(np.int64)
                for c, idx in enumerate(by_class)]
        parts = [np.concatenate([idx[(cut[n - 1] if n else 0):cut[n]] for idx, cut in zip(by_class, cuts)])
                 for n in range(n_clients)]
        if min(len(p) for p in parts) > 0:
            return parts
    raise ValueError(f"no Dirichlet(alpha={alpha}) draw in {MAX_REDRAWS} left every one of {n_clients} clients "
                     "non-empty; use fewer clients or a larger alpha")


def dirichlet_per_class(labels, n_clients: int, alpha: float, seed: int, min_size: int = 1) -> list[np.ndarray]:
    """Per-class Dirichlet over clients with the size cap N/m and a minimum client size (module docstring)."""
    labels, alpha = _check(labels, n_clients), _positive("alpha", alpha)
    if int(min_size) != min_size or not 1 <= min_size <= labels.size // n_clients:
        raise ValueError(f"min_size must be an integer in [1, N/m = {labels.size // n_clients}]; got {min_size}")
    rng = _rng(seed, "dirichlet_per_class")
    classes, cap = int(labels.max()) + 1, labels.size / n_clients
    for _ in range(MAX_REDRAWS):
        parts: list[list[np.ndarray]] = [[] for _ in range(n_clients)]
        sizes = np.zeros(n_clients)
        for c in range(classes):
            idx = rng.permutation(np.flatnonzero(labels == c))
            raw = rng.dirichlet(np.full(n_clients, alpha))
            q = raw * (sizes < cap)
            q = q if q.sum() > 0 else raw
            cuts = (np.cumsum(q / q.sum()) * len(idx)).astype(np.int64)[:-1]
            for n, piece in enumerate(np.split(idx, cuts)):
                parts[n].append(piece)
                sizes[n] += len(piece)
        if sizes.min() >= min_size:
            return [np.sort(np.concatenate(p)) for p in parts]
    raise ValueError(f"no per-class Dirichlet(alpha={alpha}) draw in {MAX_REDRAWS} gave every client "
                     f">= {min_size} samples; use fewer clients, a larger alpha or a smaller min_size")


def k_classes(labels, n_clients: int, classes_per_client: int, seed: int) -> list[np.ndarray]:
    """Pathological partition: every client holds exactly ``classes_per_client`` classes (module docstring)."""
    labels = _check(labels, n_clients)
    classes = int(labels.max()) + 1
    k = classes_per_client
    if int(k) != k or not 1 <= k <= classes:
        raise ValueError(f"classes_per_client must be an integer in [1, {classes}]; got {k}")
    rng = _rng(seed, "classes")
    perm = rng.permutation(classes)
    held = [[int(perm[(n * k + j) % classes]) for j in range(k)] for n in range(n_clients)]
    parts: list[list[np.ndarray]] = [[] for _ in range(n_clients)]
    for c in range(classes):
        holders = [n for n in range(n_clients) if c in held[n]]
        idx = rng.permutation(np.flatnonzero(labels == c))
        if holders and len(idx) < len(holders):
            raise ValueError(f"class {c} has {len(idx)} samples for {len(holders)} clients; use fewer clients")
        for n, piece in zip(holders, np.array_split(idx, len(holders)) if holders else []):
            parts[n].append(piece)
    out = [np.sort(np.concatenate(p)) for p in parts]
    if min(len(p) for p in out) == 0:
        raise ValueError("a client received no samples (one of its classes is absent from the labels)")
    return out


def iid(labels, n_clients: int, seed: int) -> list[np.ndarray]:
    labels = _check(labels, n_clients)
    return [np.sort(p) for p in np.array_split(_rng(seed, "iid").permutation(labels.size), n_clients)]


def partition(labels, n_clients: int, scheme: str = "dirichlet", seed: int = 0, alpha: float = 0.1,
              classes_per_client: int = 2, min_size: int = 1) -> list[np.ndarray]:
    """Dispatch to a scheme of :data:`SCHEMES` with its parameters."""
    if scheme == "dirichlet":
        return dirichlet(labels, n_clients, alpha, seed)
    if scheme == "dirichlet_per_class":
        return dirichlet_per_class(labels, n_clients, alpha, seed, min_size)
    if scheme == "classes":
        return k_classes(labels, n_clients, classes_per_client, seed)
    if scheme == "iid":
        return iid(labels, n_clients, seed)
    raise ValueError(f"partition scheme must be one of {SCHEMES}; got {scheme!r}")


def label_proportions(labels, parts, classes: int) -> np.ndarray:
    """``(m, classes)``: row ``i`` is client ``i``'s empirical label distribution."""
    labels = np.asarray(labels)
    counts = np.stack([np.bincount(labels[p], minlength=classes) for p in parts]).astype(np.float64)
    return counts / counts.sum(1, keepdims=True)


def fedawe_availability(labels, parts, seed: int, classes: int = 10) -> np.ndarray:
    """FedAWE's base probabilities :math:`p_i = \\langle\\hat\\nu_i,\\phi\\rangle` from the partition's
    empirical label proportions (the official code's choice), :math:`\\phi` drawn from ``seed``."""
    return fedawe_base_probabilities(label_proportions(labels, parts, classes), seed)
