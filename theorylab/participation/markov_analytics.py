r"""Analytics of finite availability chains: stationary law, spectrum, mixing constants and times.

Seed 001 (thesis) App. F.A-F.C and Lemma B.16; digest 001 §3.1-3.3, §7.2.  Pure numpy functions over a
transition matrix :math:`\mathbf P` (rows sum to one) or over the two-state parameters :math:`(\pi, \lambda_2)`.

**Spectrum (A.208)-(A.209).**  :math:`\bar\lambda_2(\mathbf P)` is the second largest eigenvalue modulus and the
thesis' mixing parameter is :math:`\lambda(\mathbf P) = (\bar\lambda_2(\mathbf P) + 1)/2`.

**Two-state chain (A.216)-(A.218).**  States 0 (inactive) and 1 (active);

.. math::
    \mathbf P = \begin{pmatrix} 1-(1-\lambda)\pi & (1-\lambda)\pi \\ (1-\lambda)(1-\pi) & \lambda+(1-\lambda)\pi
    \end{pmatrix},\qquad \pi = \frac{1-p_0}{2-p_0-p_1},\quad \lambda = p_0 + p_1 - 1,

stochastic iff :math:`\max\{1-1/\pi, 1-1/(1-\pi)\} \le \lambda < 1` with :math:`\pi\in(0,1)`.  Exactly
:math:`\mathbf P^t = \mathbf 1\boldsymbol\pi^\top + \lambda^t(\mathbf I - \mathbf 1\boldsymbol\pi^\top)`, so the
worst-start total variation is :math:`d(t) = |\lambda|^t\max(\pi, 1-\pi)`; the lag-:math:`k` autocorrelation of
the stationary activity indicator is :math:`\lambda^k`; the mean inactive sojourn (hitting time of "active" from
"inactive") is :math:`1/((1-\lambda)\pi)` (the thesis' "expected hitting time", Ch. 2 §2.5.2).

**Product chain (Def. F.1, Props F.1-F.4).**  Independent clients move by :math:`\bigotimes_i\mathbf P_i` with
stationary law :math:`\bigotimes_i\boldsymbol\pi^{(i)}`, spectrum the products of the factors' eigenvalues, and
:math:`\bar\lambda_2 = \max_i\bar\lambda_2(\mathbf P_i)`, :math:`\lambda(\mathbf P) = \max_i\lambda(\mathbf P_i)`
(A.214).

**Geometric mixing (2.5), Lemma B.16.**  :math:`\max_{ij}|[\mathbf P^t]_{ij}-\rho_j| \le C_P\lambda(\mathbf P)^t`
for :math:`t \ge T_P` with, for the Jordan form :math:`\mathbf P = \mathbf U\mathbf J\mathbf U^{-1}` with blocks of
sizes :math:`n_1 = 1` (eigenvalue 1), :math:`n_2, \dots, n_d`,

.. math::
    C_P = \Big(\sum_{i=2}^d n_i^2\Big)^{1/2}\|\mathbf U\|_F\|\mathbf U^{-1}\|_F \;\text{(A.136)},\qquad
    T_P = \max\Big\{\max_i\Big\lceil\frac{2n_i(n_i-1)(\ln(2n_i/r) - 1)}{(n_i+1)\,r}\Big\rceil, 0\Big\},\;
    r = \ln\frac{\lambda(\mathbf P)}{\bar\lambda_2(\mathbf P)} \;\text{(A.137, as printed)}.

:math:`C_P` depends on how :math:`\mathbf U` is scaled (the bound holds for every Jordan basis); we use unit-norm
columns, numpy's convention, under which the basis of a product chain is the Kronecker product of the factors' bases
and :math:`\ln C_P = \tfrac12\ln(M-1) + \sum_i\ln(\|\mathbf U_i\|_F\|\mathbf U_i^{-1}\|_F)` (digest §3.2; computed
in log space because :math:`C_P` overflows for 100 clients).  A diagonalizable chain (every two-state chain and
their products) has all :math:`n_i = 1`, so :math:`T_P = 0` and :math:`C_P = \sqrt{M-1}\|\mathbf U\|_F
\|\mathbf U^{-1}\|_F`; for two states this is :math:`2\sqrt2\sqrt{\pi^2+(1-\pi)^2}`.

**Mixing times (App. F.A; Levin-Peres-Wilmer Thms 12.4-12.5).**  :math:`d(t) = \max_a\|[\mathbf P^t]_{a\cdot}-
\boldsymbol\rho\|_{TV}`, :math:`t_{\rm mix}(\varepsilon) = \min\{t: d(t)\le\varepsilon\}`,
:math:`t_{\rm rel} = 1/(1-\bar\lambda_2)`, and for reversible chains
:math:`(t_{\rm rel}-1)\ln\frac1{2\varepsilon} \le t_{\rm mix}(\varepsilon) \le \ln\frac1{\varepsilon\rho_{\min}}
t_{\rm rel}`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

MAX_JORDAN_STATES = 8  # exact (sympy) Jordan forms of non-diagonalizable chains are limited to this many states
_CLUSTER = 1e-6  # eigenvalues closer than this count as one (a Jordan block of size n splits by ~eps^(1/n))


# ----- two-state chains --------------------------------------------------------------------------------------------
def lambda_range(pi: float) -> tuple[float, float]:
    """Feasible :math:`[\\lambda_{\\min}, 1)` of the two-state chain with stationary activity ``pi``."""
    return max(1.0 - 1.0 / pi, 1.0 - 1.0 / (1.0 - pi)), 1.0


def check_two_state(pi, lam) -> tuple[np.ndarray, np.ndarray]:
    """``(pi, lam)`` as float arrays of one shape, or a ValueError naming the first entry out of its range."""
    pi, lam = np.atleast_1d(np.asarray(pi, dtype=np.float64)), np.atleast_1d(np.asarray(lam, dtype=np.float64))
    if pi.shape != lam.shape:
        raise ValueError(f"pi and lam must have the same shape (one entry per chain); got {pi.shape} and {lam.shape}")
    for i, (p, l) in enumerate(zip(pi.ravel(), lam.ravel())):
        if not (np.isfinite(p) and 0 < p < 1):
            raise ValueError(f"pi[{i}] = {p:g} is outside the allowed range (0, 1)")
        low, high = lambda_range(p)
        if not (np.isfinite(l) and low - 1e-12 <= l < high):
            raise ValueError(f"lam[{i}] = {l:g} is outside the feasible range [{low:g}, 1) for pi[{i}] = {p:g}")
    return pi, lam


def two_state_matrix(pi, lam) -> np.ndarray:
    """``(..., 2, 2)`` transition matrices (A.216) of the chains with activity ``pi`` and eigenvalue ``lam``."""
    pi, lam = check_two_state(pi, lam)
    a = (1 - lam) * pi  # P(0 -> 1)
    b = (1 - lam) * (1 - pi)  # P(1 -> 0)
    return np.stack([np.stack([1 - a, a], -1), np.stack([b, 1 - b], -1)], -2)


def two_state_parameters(P) -> tuple[np.ndarray, np.ndarray]:
    """``(pi, lam)`` of two-state matrices by (A.217)-(A.218): ``pi = (1-p0)/(2-p0-p1)``, ``lam = p0+p1-1``."""
    P = np.asarray(P, dtype=np.float64)
    p0, p1 = P[..., 0, 0], P[..., 1, 1]
    return (1 - p0) / (2 - p0 - p1), p0 + p1 - 1


def two_state_tv(pi, lam, t) -> np.ndarray:
    """Worst-start total variation :math:`d(t) = |\\lambda|^t \\max(\\pi, 1-\\pi)` (``t`` broadcasts)."""
    pi, lam = np.asarray(pi, dtype=np.float64), np.asarray(lam, dtype=np.float64)
    return np.abs(lam) ** np.asarray(t) * np.maximum(pi, 1 - pi)


def two_state_mixing_time(pi, lam, eps: float = 0.25) -> np.ndarray:
    """Exact :math:`t_{\\rm mix}(\\varepsilon)` of each two-state chain (``inf`` for a periodic one)."""
    pi, lam = np.atleast_1d(pi).astype(np.float64), np.atleast_1d(lam).astype(np.float64)
    out = np.empty(len(pi))
    for i, (p, l) in enumerate(zip(pi, lam)):
        d0 = max(p, 1 - p)
        if d0 <= eps:
            out[i] = 0
        elif l == 0:
            out[i] = 1
        elif abs(l) >= 1:
            out[i] = math.inf
        else:
            t = math.ceil(math.log(eps / d0) / math.log(abs(l)) - 1e-12)
            out[i] = t if abs(l) ** t * d0 <= eps else t + 1
    return out


def two_state_c_p(pi) -> np.ndarray:
    """:math:`C_P = 2\\sqrt2\\sqrt{\\pi^2+(1-\\pi)^2}` of a two-state chain (unit-norm eigenvectors, any λ ≠ 1)."""
    pi = np.asarray(pi, dtype=np.float64)
    return 2 * math.sqrt(2) * np.sqrt(pi ** 2 + (1 - pi) ** 2)


def activation_time(pi, lam) -> np.ndarray:
    """Mean inactive sojourn :math:`1/((1-\\lambda)\\pi)`: expected rounds to become active from inactive."""
    pi, lam = check_two_state(pi, lam)
    return 1.0 / ((1 - lam) * pi)


# ----- general finite chains ---------------------------------------------------------------------------------------
def check_stochastic(P, name: str = "P", atol: float = 1e-12) -> np.ndarray:
    """``P`` as a square float matrix with entries in [0, 1] and unit row sums, or a ValueError saying what fails."""
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] < 1:
        raise ValueError(f"{name} must be a square matrix; got shape {P.shape}")
    if not np.all(np.isfinite(P)) or P.min() < -atol or P.max() > 1 + atol:
        raise ValueError(f"{name} must have entries in [0, 1]; got range [{np.nanmin(P):g}, {np.nanmax(P):g}]")
    worst = float(np.abs(P.sum(1) - 1).max())
    if worst > 1e-9:
        raise ValueError(f"{name}'s rows must sum to 1; the worst row is off by {worst:g}")
    return P


def stationary_law(P) -> np.ndarray:
    """The law :math:`\\boldsymbol\\rho` with :math:`\\boldsymbol\\rho^\\top\\mathbf P = \\boldsymbol\\rho^\\top`,
    :math:`\\sum\\rho = 1` (least squares; unique for an irreducible chain)."""
    P = check_stochastic(P)
    M = len(P)
    system = np.vstack([P.T - np.eye(M), np.ones((1, M))])
    rhs = np.zeros(M + 1)
    rhs[-1] = 1.0
    return np.linalg.lstsq(system, rhs, rcond=None)[0]


def spectrum(P) -> np.ndarray:
    """Eigenvalues of ``P`` by decreasing modulus (ties: larger real part first)."""
    eig = np.linalg.eigvals(check_stochastic(P))
    return eig[np.lexsort((-eig.real, -np.abs(eig)))]


def second_modulus(P) -> float:
    """:math:`\\bar\\lambda_2(\\mathbf P)`: the second largest eigenvalue modulus (A.209)."""
    return float(np.abs(spectrum(P))[1]) if len(P) > 1 else 0.0


def thesis_lambda(lambda_bar2) -> float:
    """The thesis' :math:`\\lambda(\\mathbf P) = (\\bar\\lambda_2 + 1)/2` (A.209)."""
    return (float(lambda_bar2) + 1.0) / 2.0


def product_second_modulus(lam) -> float:
    """:math:`\\bar\\lambda_2(\\bigotimes_i\\mathbf P_i) = \\max_i|\\lambda_i|` for two-state factors (A.214)."""
    return float(np.abs(np.asarray(lam, dtype=np.float64)).max())


def product_chain(matrices, laws=None) -> tuple[np.ndarray, np.ndarray]:
    """Joint matrix :math:`\\bigotimes_i\\mathbf P_i` (A.210) and its law :math:`\\bigotimes_i\\boldsymbol\\pi^{(i)}`
    (Prop. F.1; ``laws``: the factors' stationary laws when known in closed form); the state index reads the
    clients' states as digits, client 0 most significant."""
    laws = [stationary_law(Pi) for Pi in matrices] if laws is None else laws
    P, rho = np.ones((1, 1)), np.ones(1)
    for Pi, law in zip(matrices, laws):
        P, rho = np.kron(P, Pi), np.kron(rho, law)
    return P, rho


def worst_tv(P, rounds: int, rho=None) -> np.ndarray:
    """:math:`d(t)` for ``t = 0 .. rounds-1`` by powering ``P`` (``rho``: its stationary law, computed if omitted)."""
    P = check_stochastic(P)
    rho = stationary_law(P) if rho is None else np.asarray(rho, dtype=np.float64)
    out, Pt = np.empty(rounds), np.eye(len(P))
    for t in range(rounds):
        out[t] = 0.5 * np.abs(Pt - rho).sum(1).max()
        Pt = Pt @ P
    return out


def mixing_time(P, eps: float = 0.25, rho=None, max_rounds: int = 100_000) -> int:
    """Exact worst-start :math:`t_{\\rm mix}(\\varepsilon)` by powering ``P``."""
    P = check_stochastic(P)
    rho = stationary_law(P) if rho is None else np.asarray(rho, dtype=np.float64)
    Pt = np.eye(len(rho))
    for t in range(max_rounds + 1):
        if 0.5 * np.abs(Pt - rho).sum(1).max() <= eps:
            return t
        Pt = Pt @ P
    raise RuntimeError(f"chain not mixed to {eps} within {max_rounds} rounds")


def max_entry_gap(P, rounds: int, rho=None) -> np.ndarray:
    """:math:`\\max_{ij}|[\\mathbf P^t]_{ij} - \\rho_j|` for ``t = 0 .. rounds-1``: the left side of (2.5)."""
    P = check_stochastic(P)
    rho = stationary_law(P) if rho is None else np.asarray(rho, dtype=np.float64)
    out, Pt = np.empty(rounds), np.eye(len(P))
    for t in range(rounds):
        out[t] = np.abs(Pt - rho).max()
        Pt = Pt @ P
    return out


def relaxation_time(lambda_bar2) -> np.ndarray:
    """:math:`t_{\\rm rel} = 1/(1-\\bar\\lambda_2)` (``inf`` when :math:`\\bar\\lambda_2 = 1`)."""
    with np.errstate(divide="ignore"):
        return 1.0 / (1.0 - np.asarray(lambda_bar2, dtype=np.float64))


def levin_peres_bounds(t_rel, eps: float, rho_min) -> tuple[np.ndarray, np.ndarray]:
    """:math:`((t_{\\rm rel}-1)\\ln\\frac1{2\\varepsilon},\\ \\ln\\frac1{\\varepsilon\\rho_{\\min}} t_{\\rm rel})`;
    the upper bound needs a reversible chain."""
    if not 0 < eps < 0.5:
        raise ValueError(f"eps must lie in (0, 1/2); got {eps}")
    t_rel, rho_min = np.asarray(t_rel, dtype=np.float64), np.asarray(rho_min, dtype=np.float64)
    return (t_rel - 1) * math.log(1 / (2 * eps)), np.log(1 / (eps * rho_min)) * t_rel


# ----- the constants of Lemma B.16 ---------------------------------------------------------------------------------
class MixingConstants(NamedTuple):
    c_p: float  # (A.136)
    t_p: int  # (A.137)
    blocks: tuple[int, ...]  # Jordan block sizes n_2, ..., n_d (the eigenvalue-1 block left out)
    lam: float  # lambda(P) = (lambda_bar2 + 1) / 2


def t_p_formula(blocks, lambda_bar2: float) -> int:
    """(A.137) as printed, for Jordan block sizes ``blocks``; 0 when every block has size one."""
    blocks = [int(n) for n in blocks]
    if all(n == 1 for n in blocks):
        return 0
    if not 0 < lambda_bar2 < 1:
        raise ValueError(f"(A.137) needs 0 < lambda_bar2 < 1 when a Jordan block is larger than one; got {lambda_bar2}")
    r = math.log(thesis_lambda(lambda_bar2) / lambda_bar2)
    steps = [math.ceil(2 * n * (n - 1) * (math.log(2 * n / r) - 1) / ((n + 1) * r)) for n in blocks]
    return max(max(steps), 0)


def _unit_basis(P: np.ndarray) -> np.ndarray | None:
    """Unit-norm right eigenvectors of ``P`` as columns, or None when ``P`` is defective: some cluster of ``k``
    (numerically) equal eigenvalues has fewer than ``k`` singular values of ``P - mu I`` near zero."""
    w, U = np.linalg.eig(P)
    done = np.zeros(len(w), dtype=bool)
    for k in range(len(w)):
        close = ~done & (np.abs(w - w[k]) < _CLUSTER)
        done |= close
        if close.sum() > 1:
            _, sv, vh = np.linalg.svd(P - w[close].mean() * np.eye(len(P)))
            if (sv < _CLUSTER * max(1.0, sv[0])).sum() < close.sum():
                return None
            # numpy's eigenvectors of a repeated eigenvalue may be (nearly) dependent: use an orthonormal basis
            # of the eigenspace instead, the right singular vectors of its smallest singular values
            U = U.astype(np.result_type(U, vh))
            U[:, close] = vh[-int(close.sum()):].conj().T
    return U


def _jordan_exact(P: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Jordan basis (columns scaled to unit norm) and block sizes other than the eigenvalue-1 block, exactly
    (sympy, entries read as rationals)."""
    import sympy

    if len(P) > MAX_JORDAN_STATES:
        raise ValueError(f"P is not diagonalizable and has {len(P)} states; exact Jordan forms are limited to "
                         f"{MAX_JORDAN_STATES} states")
    U, J = sympy.Matrix(P.tolist()).applyfunc(lambda v: sympy.nsimplify(v, rational=True)).jordan_form()
    J = np.array(J.evalf(), dtype=np.complex128)
    sizes, start = [], 0
    while start < len(J):
        n = 1
        while start + n < len(J) and J[start + n - 1, start + n] != 0:
            n += 1
        if abs(J[start, start] - 1) > 1e-12:
            sizes.append(n)
        start += n
    U = np.array(U.evalf(), dtype=np.complex128)
    return U / np.linalg.norm(U, axis=0), sizes


def mixing_constants(P) -> MixingConstants:
    """:math:`C_P` (A.136), :math:`T_P` (A.137) and :math:`\\lambda(\\mathbf P)` of an irreducible aperiodic
    chain; a defective ``P`` goes through an exact Jordan form (at most :data:`MAX_JORDAN_STATES` states)."""
    P = check_stochastic(P)
    U = _unit_basis(P)
    blocks = [1] * (len(P) - 1) if U is not None else None
    if U is None:
        U, blocks = _jordan_exact(P)
    lb2 = second_modulus(P)
    c_p = math.sqrt(sum(n * n for n in blocks)) * np.linalg.norm(U) * np.linalg.norm(np.linalg.inv(U))
    return MixingConstants(float(c_p), t_p_formula(blocks, lb2), tuple(blocks), thesis_lambda(lb2))


def log_c_p_product(matrices) -> float:
    """:math:`\\ln C_P` of :math:`\\bigotimes_i\\mathbf P_i` for diagonalizable factors, in log space:
    :math:`\\tfrac12\\ln(M-1) + \\sum_i\\ln(\\|\\mathbf U_i\\|_F\\|\\mathbf U_i^{-1}\\|_F)` with
    :math:`M = \\prod_i M_i`."""
    log_states, log_norms = 0.0, 0.0
    for i, Pi in enumerate(matrices):
        U = _unit_basis(check_stochastic(Pi, f"matrices[{i}]"))
        if U is None:
            raise ValueError(f"matrices[{i}] is not diagonalizable; the log-space product rule needs eigenbases")
        log_states += math.log(len(U))
        log_norms += math.log(np.linalg.norm(U) * np.linalg.norm(np.linalg.inv(U)))
    if log_states == 0.0:
        raise ValueError("the product chain has a single state; C_P needs at least two")
    log_m_minus_1 = log_states + math.log1p(-math.exp(-log_states))
    return 0.5 * log_m_minus_1 + log_norms


# ----- samples -----------------------------------------------------------------------------------------------------
def autocorrelation(series, lags) -> np.ndarray:
    """Empirical lag-k autocorrelation of each series along axis 0 (``series``: ``(T, ...)``, e.g. the activity
    indicators of every replica and client), pooled mean and variance: shape ``(len(lags), ...)``.  A stationary
    two-state chain has autocorrelation :math:`\\lambda^k`."""
    x = np.asarray(series, dtype=np.float64)
    centred = x - x.mean(0)
    var = (centred ** 2).mean(0)
    out = []
    for k in lags:
        if not 0 <= int(k) < len(x):
            raise ValueError(f"lags must lie in [0, {len(x) - 1}] for {len(x)} rounds; got {k}")
        k = int(k)
        out.append((centred[: len(x) - k] * centred[k:]).mean(0) / var)
    return np.stack(out)


def inactive_sojourns(series) -> np.ndarray:
    """Lengths of the complete inactive runs (bounded by activity on both sides) of each activity series along
    axis 0 (``series``: ``(T, n)`` bool), pooled; their mean estimates :func:`activation_time`."""
    x = np.asarray(series, dtype=np.int8).reshape(len(series), -1)
    runs = []
    for column in x.T:
        edges = np.flatnonzero(np.diff(column))  # the last round before each change of state
        runs += [b - a for a, b in zip(edges[:-1], edges[1:]) if column[a + 1] == 0]
    return np.asarray(runs, dtype=np.int64)
