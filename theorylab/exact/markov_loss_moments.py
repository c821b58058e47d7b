r"""Exact mean of pseudo-gradient aggregation under Gilbert–Elliott (Markov) uplink losses, scalar quadratics.

Setting (seed 001 Ch. 4's aggregators, eq. (4.5), outside Assumption 14's independence; the channel is
:mod:`theorylab.channels.gilbert_elliott`): clients :math:`F_i(w)=\frac{a_i}2(w-c_i)^2`, every client selected,
:math:`K` local gradient steps of a constant :math:`\eta` without noise, so client :math:`i` returns
:math:`\Delta_i = m_i(c_i-w)` with :math:`m_i = 1-(1-\eta a_i)^K`; the server applies
:math:`w^{(t+1)} = w^{(t)} + \sum_i\beta_i\xi_i^{(t)}\Delta_i^{(t)}` (UPGA-PL: :math:`\beta_i=\alpha_i/(1-q_i)`;
the naive PGA-PL: :math:`\beta_i=\alpha_i`).  Client :math:`i`'s uplink is in state :math:`s_i^{(t)}\in\{G,B\}`, a
Markov chain started stationary, and delivers with probability :math:`1-e_{s_i}`.

Given the joint state :math:`s^{(t)}` the round's deliveries are fresh, independent of :math:`w^{(t)}`; so with
:math:`\mu_s^{(t)} = \mathbb E[w^{(t)}\mathbb 1\{s^{(t)}=s\}]` over the :math:`2^N` joint states,

.. math::
    \mu^{(t+1)}_{s'} = \sum_sP(s,s')\big(\bar A_s\,\mu_s^{(t)}+\bar b_s\,\pi_s\big),\qquad
    \bar A_s = 1-\sum_i\beta_i(1-e_{s_i})m_i,\quad \bar b_s = \sum_i\beta_i(1-e_{s_i})m_ic_i,

and :math:`\mathbb Ew^{(t)}=\sum_s\mu_s^{(t)}`; the limit solves :math:`\mu = P^\top(\bar A\mu+\bar b\pi)`.  With
independent rounds (:math:`P` of rank one) it reduces to :math:`\mathbb Ew^{(\infty)} =
\sum_i\beta_i(1-\bar q_i)m_ic_i/\sum_i\beta_i(1-\bar q_i)m_i`, which UPGA-PL's weights make
:math:`\sum_i\alpha_im_ic_i/\sum_i\alpha_im_i` (:math:`w^*` for equal curvatures).
"""

from __future__ import annotations

import itertools

import numpy as np

from theorylab.channels.gilbert_elliott import stationary_bad


def _chain(links: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint states ``(S, N)`` (1 = bad), their transition matrix ``(S, S)`` and stationary law ``(S,)``."""
    states = np.array(list(itertools.product((0, 1), repeat=len(links))))
    P, pi = np.ones((len(states), len(states))), np.ones(len(states))
    for i, link in enumerate(links):
        one = np.array([[1 - link["to_bad"], link["to_bad"]], [link["to_good"], 1 - link["to_good"]]])
        P *= one[states[:, i][:, None], states[:, i][None, :]]
        bad = stationary_bad(link["to_bad"], link["to_good"])
        pi *= np.where(states[:, i] == 1, bad, 1 - bad)
    return states, P, pi


def pga_mean(beta, curvatures, centers, steps: int, lr: float, links: list[dict], w0: float,
             rounds: int) -> tuple[np.ndarray, float]:
    """``(E w^t for t = 0..rounds, E w^infinity)`` of the pseudo-gradient aggregation above; ``links[i]`` holds
    client ``i``'s uplink ``{to_bad, to_good, good, bad}`` (module docstring)."""
    beta, a, c = (np.asarray(v, dtype=np.float64) for v in (beta, curvatures, centers))
    if not (len(beta) == len(a) == len(c) == len(links)) or len(links) > 12:
        raise ValueError(f"need one weight, curvature, centre and link per client (at most 12 clients: 2^N states); "
                         f"got {len(beta)}, {len(a)}, {len(c)}, {len(links)}")
    m = 1.0 - (1.0 - lr * a) ** steps
    states, P, pi = _chain(links)
    good, bad = (np.array([link[k] for link in links], dtype=np.float64) for k in ("good", "bad"))
    delivered = 1.0 - np.where(states == 1, bad, good)  # (S, N)
    A = 1.0 - delivered @ (beta * m)
    b = delivered @ (beta * m * c)
    mu, means = w0 * pi, [float(w0)]
    for _ in range(rounds):
        mu = P.T @ (A * mu + b * pi)
        means.append(float(mu.sum()))
    limit = np.linalg.solve(np.eye(len(pi)) - P.T * A[None, :], P.T @ (b * pi))
    return np.array(means), float(limit.sum())
