r"""Exact mean and second moment of P-FedAvg on the Gaussian-mean testbed (digest 003 §5.2).

State :math:`x_t=(\theta_1^t,\dots,\theta_N^t)`.  A local step of client :math:`i` with gradient scale
:math:`q_i` (:math:`Np_i` for the rescaled Scheme II, else 1) draws :math:`Z\sim\mathcal D_i(\theta_i^t)` and is
affine in the state and the noise:

.. math::
    \theta_i\leftarrow a_{t,i}\theta_i+\eta_tq_im_i+\eta_tq_i\sigma_d\xi,\qquad a_{t,i}=1-\eta_tq_i(1-\epsilon_i).

The digest writes the recursion for :math:`(\mu,S)=(\mathbb Ex,\mathbb Exx^\top)`:
:math:`\mu\leftarrow A_t\mu+\eta_tm`, :math:`S\leftarrow A_tSA_t+\eta_t(A_t\mu m^\top+m\mu^\top A_t)+\eta_t^2mm^\top+\eta_t^2\sigma_d^2I`,
and at aggregation (:math:`x\leftarrow\mathbf 1a^\top x`, :math:`a` independent of :math:`x`)
:math:`\mu\leftarrow\mathbf 1\,\bar a^\top\mu`, :math:`S\leftarrow\mathrm{tr}(\Omega S)\mathbf 1\mathbf 1^\top` with
:math:`(\bar a,\Omega)` from :func:`theorylab.performative.schemes.weight_moments`.

We propagate it in factored form.  After each broadcast every client holds the same random
:math:`X` (:math:`c=\mathbb EX`, :math:`s=\mathbb EX^2`); :math:`j` local steps later
:math:`\theta_i=\alpha_iX+\beta_i+\nu_i` with deterministic :math:`\alpha_i,\beta_i` and independent noise of
variance :math:`v_i` (:math:`\alpha\leftarrow a\alpha`, :math:`\beta\leftarrow a\beta+\eta qm`,
:math:`v\leftarrow a^2v+\eta^2q^2\sigma_d^2`), so :math:`S_{ij}=\alpha_i\alpha_js+(\alpha_i\beta_j+\beta_i\alpha_j)c+\beta_i\beta_j+\delta_{ij}v_i`
and one round is the scalar recursion

.. math::
    c'=\bar a^\top(\alpha c+\beta),\qquad s'=\alpha^\top\Omega\alpha\,s+2\alpha^\top\Omega\beta\,c+\beta^\top\Omega\beta+\textstyle\sum_i\Omega_{ii}v_i.

This is exact (no truncation) and costs :math:`O(TN)`; the literal :math:`N\times N` recursion is the
independent check in ``tests/test_pfedavg_moments.py``.  Outputs at every local iteration :math:`t`:
:math:`\mathbb E\bar\theta^t`, :math:`\mathbb E(\bar\theta^t)^2` for the virtual average
:math:`\bar\theta^t=\sum_ip_i\theta_i^t`, and the consensus error :math:`\sum_ip_i\mathbb E(\theta_i^t-\bar\theta^t)^2`.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from theorylab.config import RunConfig
from theorylab.exact.models import GaussianMeanModel, require
from theorylab.kernels.pfedavg import pfedavg_params
from theorylab.kernels.schedules import schedule_values
from theorylab.performative.schemes import gradient_scales, weight_moments
from theorylab.registry import build

BLOCK = 2048  # rounds per cached block of the local pass
CACHE_BYTES = 128 * 2 ** 20  # the blocks kept per process, least recently used dropped first
_CACHE: OrderedDict = OrderedDict()


@dataclass
class PFedAvgMoments:
    local_steps: int
    t: np.ndarray  # (T+1,) local iterations 0..T
    mean: np.ndarray  # E[theta_bar^t]
    second: np.ndarray  # E[(theta_bar^t)^2]
    consensus: np.ndarray  # sum_i p_i E(theta_i^t - theta_bar^t)^2

    def dist2(self, target: float) -> np.ndarray:
        """:math:`\\mathbb E(\\bar\\theta^t-y)^2` for a fixed point :math:`y` (e.g. :math:`\\theta^{PS}`)."""
        return self.second - 2.0 * target * self.mean + target * target


def step_sizes(lr, horizon: int) -> np.ndarray:
    """:math:`\\eta_t` for local iterations :math:`t=0..T-1` from a schedule spec (see :mod:`theorylab.kernels.schedules`)."""
    return schedule_values(lr, np.arange(horizon))


def propagate(problem: GaussianMeanModel, local_steps: int, lr, scheme: str = "full", k: int | None = None,
              rounds: int = 1) -> PFedAvgMoments:
    """Exact moments of ``rounds`` P-FedAvg rounds (``rounds * local_steps`` local iterations)."""
    require(problem, GaussianMeanModel, "exact P-FedAvg moments")
    E = int(local_steps)
    if E != local_steps or E < 1 or int(rounds) != rounds or rounds < 1:
        raise ValueError(f"local_steps and rounds must be integers >= 1; got {local_steps}, {rounds}")
    rounds = int(rounds)
    p = problem.p
    abar, omega = weight_moments(scheme, p, k)
    q = gradient_scales(scheme, p)
    slope, drift, noise = q * (1.0 - problem.eps), q * problem.m, (q * problem.sigma) ** 2
    alpha, beta, v, inside = _local_pass(slope, drift, noise, p, lr, E, rounds)
    A, B = alpha @ abar, beta @ abar
    alpha_omega = alpha @ omega
    P, Q = (alpha_omega * alpha).sum(1), 2.0 * (alpha_omega * beta).sum(1)
    C = ((beta @ omega) * beta).sum(1) + v @ np.diag(omega)
    c, s = [float(problem.theta0)], [float(problem.theta0) ** 2]
    for a_r, b_r, p_r, q_r, c_r in zip(A.tolist(), B.tolist(), P.tolist(), Q.tolist(), C.tolist()):  # floats: fast
        s.append(p_r * s[-1] + q_r * c[-1] + c_r)
        c.append(a_r * c[-1] + b_r)
    c, s = np.array(c), np.array(s)

    T = rounds * E
    mean, second, consensus = np.empty(T + 1), np.empty(T + 1), np.zeros(T + 1)
    mean[::E], second[::E] = c, s
    c0, s0 = c[:-1], s[:-1]  # each round's broadcast moments
    for j, (pa, pb, pv2, a2, ab, b2, vq) in enumerate(inside, start=1):  # virtual average and consensus error
        mean[j::E], second[j::E] = pa * c0 + pb, pa * pa * s0 + 2 * pa * pb * c0 + pb * pb + pv2
        consensus[j::E] = a2 * s0 + 2 * ab * c0 + b2 + vq
    return PFedAvgMoments(E, np.arange(T + 1), mean, second, consensus)


def _local_pass(slope, drift, noise, p, lr, E: int, rounds: int):
    """Every round's ``alpha``, ``beta``, ``v`` after its ``E`` local steps ``(rounds, N)``, and :func:`_spread`'s sums
    after each of its steps ``1..E-1`` (one tuple of ``(rounds,)`` arrays per step).  They depend on the clients'
    constants and the step sizes only, not on the aggregation scheme, so they come in blocks of :data:`BLOCK` rounds
    cached per process (:data:`CACHE_BYTES`): runs that differ only in the scheme, its ``k`` or the horizon share
    them (the performative claims compare schemes on common steps; 2.8M rounds asked in the quick suite, 0.9M
    distinct).  A block is always computed whole, so its floats do not depend on which runs came first."""
    schedule = json.dumps(lr, sort_keys=True, default=float)  # numpy scalars too
    key = (slope.tobytes(), drift.tobytes(), noise.tobytes(), p.tobytes(), schedule, E)
    parts = [_block(key, slope, drift, noise, p, lr, E, b) for b in range(-(-rounds // BLOCK))]
    alpha, beta, v = (np.concatenate([part[i] for part in parts])[:rounds] for i in range(3))
    inside = [tuple(np.concatenate([part[3][j][i] for part in parts])[:rounds] for i in range(7)) for j in range(E - 1)]
    return alpha, beta, v, inside


def _block(key: tuple, slope, drift, noise, p, lr, E: int, b: int):
    """Block ``b`` (rounds ``b * BLOCK`` to ``(b + 1) * BLOCK - 1``) of :func:`_local_pass`, from the cache or computed:
    one pass over the local steps, every round of the block at once, ``alpha``, ``beta``, ``v`` updated in place."""
    hit = _CACHE.get((key, b))
    if hit is not None:
        _CACHE.move_to_end((key, b))
        return hit
    eta = schedule_values(lr, np.arange(b * BLOCK * E, (b + 1) * BLOCK * E)).reshape(BLOCK, E)
    shape = (BLOCK, len(p))
    alpha, beta, v = np.ones(shape), np.zeros(shape), np.zeros(shape)
    lost = np.zeros(shape)  # 1 - alpha, kept apart: at small steps alpha - 1 cancels (see _spread)
    inside = []  # step j = 1..E-1: _spread's sums (they do not involve the round's broadcast moments)
    for j in range(E):
        if j:
            inside.append(_spread(lost, beta, v, p))
        a = 1.0 - eta[:, j, None] * slope
        alpha *= a
        lost *= a
        lost += eta[:, j, None] * slope
        beta *= a
        beta += eta[:, j, None] * drift
        v *= a * a
        v += eta[:, j, None] ** 2 * noise
    value = _CACHE[(key, b)] = (alpha, beta, v, inside)
    while sum(_nbytes(entry) for entry in _CACHE.values()) > CACHE_BYTES and len(_CACHE) > 1:
        _CACHE.popitem(last=False)
    return value


def _nbytes(entry) -> int:
    alpha, beta, v, inside = entry
    return alpha.nbytes + beta.nbytes + v.nbytes + sum(a.nbytes for sums in inside for a in sums)


def _spread(lost: np.ndarray, beta: np.ndarray, v: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, ...]:
    r"""Per round, the p-weighted sums that give the virtual average's moments and the consensus error
    :math:`\sum_ip_i\mathbb E(\theta_i-\bar\theta)^2 = a_2s + 2a_{\alpha\beta}c + b_2 + \sum_ip_i(1-p_i)v_i` from the
    broadcast moments :math:`(c, s)`: :math:`p^\top\alpha`, :math:`p^\top\beta`, :math:`\sum_ip_i^2v_i` and the
    centred :math:`a_2=\sum_ip_i(\alpha_i-p^\top\alpha)^2`, :math:`a_{\alpha\beta}`, :math:`b_2` (with
    :math:`\sum_ip_i=1`; centring first keeps the consensus error free of the cancellation of
    :math:`\sum_ip_i\mathbb E\theta_i^2-\mathbb E\bar\theta^2`, whose rounding swamped it at small steps).
    ``lost`` is :math:`1-\alpha`, updated as :math:`a(1-\alpha)+\eta q_i(1-\epsilon_i)`: :math:`\alpha` itself is
    :math:`1-O(\eta)`, so its spread would lose :math:`\log_{10}(1/\eta)` digits."""
    lost_bar, pb = lost @ p, beta @ p
    pa = 1.0 - lost_bar
    da, db = lost_bar[:, None] - lost, beta - pb[:, None]
    return pa, pb, v @ (p * p), (da * da) @ p, (da * db) @ p, (db * db) @ p, v @ (p * (1.0 - p))


def pfedavg_moments(config: RunConfig) -> PFedAvgMoments:
    """Exact moments of the P-FedAvg run described by ``config`` (``config.rounds`` rounds)."""
    spec = config.algorithm
    if spec.get("name") != "pfedavg":
        raise ValueError(f"exact P-FedAvg moments need the 'pfedavg' algorithm; got {spec.get('name')!r}")
    prm = pfedavg_params(**{key: value for key, value in spec.items() if key != "name"})
    return propagate(build("testbed", config.problem), rounds=config.rounds, **prm)
