r"""FedAWE's implicit-gossip mixing matrix :math:`W^{(t)}`, its mean :math:`M^{(t)}` and the spectral gap.

Seed 000 eq. (4), Lemmas 1 and 4; digest 000 §2.2.  With :math:`\mathcal A` the active set,

.. math::
    W_{ij} = \begin{cases} 1/|\mathcal A| & i, j\in\mathcal A\\ 1 & i = j\notin\mathcal A\\
    0 & \text{otherwise,}\end{cases}

the orthogonal projection that averages the active block (:math:`W = W^\top = W^2`, :math:`W\mathbf 1 =
\mathbf 1`; :math:`W = I` for an empty set).  Hence :math:`M^{(t)} = \mathbb E[(W^{(t)})^2] = \mathbb E[W^{(t)}]`,
and under independent Bernoulli(:math:`p_j`) availability, with :math:`S_{-J}` the number of active
clients outside :math:`J`,

.. math::
    M_{jj'} = \mathbb E\Big[\frac{\mathbb 1\{j,j'\in\mathcal A\}}{|\mathcal A|}\Big] \ (j\ne j'),\qquad
    M_{jj} = (1-p_j) + \mathbb E\Big[\frac{\mathbb 1\{j\in\mathcal A\}}{|\mathcal A|}\Big],

whose expectations are the exact quadratures of :func:`theorylab.exact.poisson_binomial.inverse_count_moments`.
:math:`\rho(t) = \lambda_2(M^{(t)})` (second-largest eigenvalue; :math:`M\succeq 0`), :math:`\rho = \max_t\rho(t)`,
and Lemma 4 bounds :math:`\rho \le 1 - \delta^4(1-(1-\delta)^m)^2/8` under A1 (:math:`p_i^t\ge\delta`).
:math:`\delta, \delta_{\max}` of a process are :func:`theorylab.participation.base.availability_bounds`.

Lemma 1's contraction :math:`\mathbb E\|B(\prod_{r\le t}W^{(r)}-\mathbf J)\|_F^2` is exact by the
superoperator :math:`\Phi(X) = \mathbb E[WXW]` (enumeration over the :math:`2^m` active sets):
with :math:`P_t = W^{(1)}\cdots W^{(t)}`, :math:`\mathbb E[P_tP_t^\top] = \Phi^{(1)}\circ\cdots\circ\Phi^{(t)}(I)`
and :math:`\|B(P_t-\mathbf J)\|_F^2 = \mathrm{tr}(B(P_tP_t^\top-\mathbf J)B^\top)` because :math:`P_t\mathbf J = \mathbf J`.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import torch

from theorylab.exact.poisson_binomial import inverse_count_moments, subset_probabilities, subsets

MAX_ENUMERATION_CLIENTS = 12
MAX_RATIONAL_CLIENTS = 10


def mixing_matrix(active) -> torch.Tensor:
    """:math:`W` of eq. (4) for a batch of active sets ``active`` of shape ``(..., m)`` (bool); out ``(..., m, m)``."""
    a = torch.as_tensor(active, dtype=torch.bool)
    af = a.to(torch.float64)
    count = af.sum(-1, keepdim=True).clamp(min=1.0)
    block = (af / count).unsqueeze(-1) * af.unsqueeze(-2)  # 1/|A| on A x A
    return block + torch.diag_embed((~a).to(torch.float64))


def expected_mixing(p) -> np.ndarray:
    """Exact :math:`M = \\mathbb E[W] = \\mathbb E[W^2]` under independent Bernoulli(``p``), by quadrature."""
    p = _probabilities(p)
    first, pair = inverse_count_moments(p, 1)
    M = pair.copy()
    np.fill_diagonal(M, (1.0 - p) + first)
    return M


def _all_sets(p) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities ``(2^m,)`` and mixing matrices ``(2^m, m, m)`` of every active set (``m <= 12``)."""
    p = _probabilities(p)
    if len(p) > MAX_ENUMERATION_CLIENTS:
        raise ValueError(f"enumeration is limited to m <= {MAX_ENUMERATION_CLIENTS} clients; got m = {len(p)}")
    masks = subsets(len(p))
    return subset_probabilities(p, masks), mixing_matrix(torch.as_tensor(masks)).numpy()


def enumerate_mixing(p) -> tuple[np.ndarray, np.ndarray]:
    """:math:`(\\mathbb E[W], \\mathbb E[W^2])` by summing over all :math:`2^m` active sets (``m <= 12``)."""
    prob, W = _all_sets(p)
    return np.einsum("s,sij->ij", prob, W), np.einsum("s,sij,sjk->ik", prob, W, W)


def enumerate_mixing_exact(p) -> np.ndarray:
    """:math:`\\mathbb E[W]` in exact rational arithmetic over all :math:`2^m` sets (``m <= 10``), rounded once.

    Each :math:`p_i` is taken as the exact rational value of its binary float, so this is the exact :math:`M` of
    the given law; floating-point enumeration instead accumulates ~1e-15..1e-14 of rounding over :math:`2^m` terms.
    """
    p = _probabilities(p)
    m = len(p)
    if m > MAX_RATIONAL_CLIENTS:
        raise ValueError(f"rational enumeration is limited to m <= {MAX_RATIONAL_CLIENTS} clients; got m = {m}")
    q = [Fraction(float(v)) for v in p]
    M = [[Fraction(0)] * m for _ in range(m)]
    for active in itertools.product((False, True), repeat=m):
        prob = Fraction(1)
        for a, qi in zip(active, q):
            prob *= qi if a else 1 - qi
        members = [i for i in range(m) if active[i]]
        for i in range(m):
            if not active[i]:
                M[i][i] += prob
        share = prob / len(members) if members else 0
        for i in members:
            for j in members:
                M[i][j] += share
    return np.array([[float(v) for v in row] for row in M])


def second_eigenvalue(M: np.ndarray) -> float:
    """:math:`\\lambda_2` of a symmetric matrix (second largest eigenvalue)."""
    return float(np.sort(np.linalg.eigvalsh(M))[-2])


def rho_of(p) -> float:
    """:math:`\\rho(t) = \\lambda_2(M^{(t)})` for the round law ``p``."""
    return second_eigenvalue(expected_mixing(p))


def rho_schedule(process, rounds: int) -> np.ndarray:
    """:math:`\\rho(t)` for ``t < rounds`` of a Bernoulli ``process`` (one eigen-solve per distinct law)."""
    if not getattr(process, "memoryless", False):
        raise ValueError("rho(t) is defined for independent (memoryless) availability, FedAWE's A1")
    cache: dict[bytes, float] = {}
    out = np.empty(rounds)
    for t in range(rounds):
        p = np.ascontiguousarray(process.probabilities(t), dtype=np.float64)
        key = p.tobytes()
        if key not in cache:
            cache[key] = rho_of(p)
        out[t] = cache[key]
    return out


def uniform_k_rho(m: int, k: int) -> float:
    """:math:`\\rho` when exactly ``k`` of ``m`` clients are active, uniformly at random (not A1: the indicators are
    dependent).  :math:`M = \\mathbb E[W] = aI + b\\mathbf 1\\mathbf 1^\\top` with :math:`b = \\frac{k-1}{m(m-1)}` and
    :math:`a+b = 1-\\frac km+\\frac1m`, so :math:`\\rho = a = 1-\\frac{k-1}{m-1}` (:math:`\\rho = 1` for ``k = 1``)."""
    if int(m) != m or m < 2 or int(k) != k or not 1 <= k <= m:
        raise ValueError(f"need integers m >= 2 and 1 <= k <= m; got m={m}, k={k}")
    return 1.0 - (k - 1) / (m - 1)


def lemma4_gap(delta: float, m: int) -> float:
    """Lemma 4's lower bound on the spectral gap, :math:`\\delta^4(1-(1-\\delta)^m)^2/8`."""
    if not 0.0 <= delta <= 1.0:
        raise ValueError(f"delta must lie in [0, 1]; got {delta}")
    if int(m) != m or m < 1:
        raise ValueError(f"m must be an integer >= 1; got {m}")
    return delta ** 4 * (1.0 - (1.0 - delta) ** m) ** 2 / 8.0


def lemma4_bound(delta: float, m: int) -> float:
    """Lemma 4: :math:`\\rho \\le 1 - \\delta^4(1-(1-\\delta)^m)^2/8`."""
    return 1.0 - lemma4_gap(delta, m)


def contraction_superoperator(p) -> np.ndarray:
    """:math:`\\Phi(X) = \\mathbb E[WXW]` as an :math:`m^2\\times m^2` matrix acting on row-major ``X.ravel()``:
    :math:`(WXW)_{ik} = \\sum_{jl}W_{ij}X_{jl}W_{lk}`."""
    prob, W = _all_sets(p)
    m = W.shape[-1]
    return np.einsum("s,sij,skl->ikjl", prob, W, W).reshape(m * m, m * m)


def consensus_radius(p) -> float:
    r"""Spectral radius of :math:`\Phi` restricted to the matrices :math:`X = (I-\mathbf J)X(I-\mathbf J)`.

    :math:`\Phi` maps that subspace into itself (:math:`(I-\mathbf J)W = W-\mathbf J = W(I-\mathbf J)`) and
    :math:`\mathbb E\|B(\prod_rW^{(r)}-\mathbf J)\|_F^2 = \mathrm{tr}\,\Phi^t((I-\mathbf J)B^\top B(I-\mathbf J))`
    for i.i.d. rounds, so this radius is the per-round decay rate of Lemma 1's left side.  :math:`\Phi` is symmetric
    for the Frobenius inner product (:math:`W = W^\top`), hence the restriction :math:`P\Phi P` with
    :math:`P = (I-\mathbf J)\otimes(I-\mathbf J)` has real eigenvalues."""
    m = len(_probabilities(p))
    centre = np.eye(m) - 1.0 / m
    P = np.kron(centre, centre)
    return float(np.abs(np.linalg.eigvalsh(P @ contraction_superoperator(p) @ P)).max())


def exact_contraction(B, laws) -> np.ndarray:
    """Exact :math:`\\mathbb E\\|B(\\prod_{r=1}^tW^{(r)}-\\mathbf J)\\|_F^2` for ``t = 1..len(laws)``; ``laws[r-1]`` is
    the law of round ``r``."""
    B = np.asarray(B, dtype=np.float64)
    m = B.shape[1]
    J = np.full((m, m), 1.0 / m)
    gram = B.T @ B
    # tr(G Phi_1(...Phi_t(I))) = tr(Phi_t(...Phi_1(G))) with G = B^T B, since each Phi is self-adjoint
    # (W symmetric): the operators are applied to G in round order.
    out, Y = [], gram
    for law in laws:
        Y = (contraction_superoperator(law) @ Y.ravel()).reshape(m, m)
        out.append(np.trace(Y) - np.trace(gram @ J))
    return np.asarray(out)


def _probabilities(p) -> np.ndarray:
    p = np.atleast_1d(np.asarray(p, dtype=np.float64))
    if p.ndim != 1 or p.size == 0 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"p must be a non-empty 1-d array of probabilities in [0, 1]; got {p!r}")
    return p
