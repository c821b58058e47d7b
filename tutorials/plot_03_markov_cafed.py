r"""
Markov availability and CA-Fed's bias-variance trade-off
========================================================

**Learning goal.** Clients that come and go in *bursts* are modelled by two-state Markov chains.  After this
tutorial you can read a chain's availability :math:`\pi` and correlation :math:`\lambda` off its transition
matrix, tell which of them decides *where* a weighted federated scheme converges (:math:`\pi`) and which decides
*how fast* (:math:`\lambda`), and explain why dropping a rarely available, strongly correlated client can pay off
for a while: the trade-off between an optimisation error and a bias that CA-Fed's hyper-parameter
:math:`\bar\kappa^2` arbitrates.

**Source.** The thesis (seed 001), Chapter 2: eqs. (2.2)-(2.4), Theorems 2.3.2-2.3.4, §2.4 (CA-Fed, Algorithm
3) and App. F.C (the two-state chain, eqs. (A.216)-(A.218)); :mod:`theorylab.participation.markov_analytics`,
the exact engine :mod:`theorylab.exact.markov_moments` and the kernel :mod:`theorylab.kernels.cafed`; the
claims :claim:`thesis.markov.two_state`, :claim:`thesis.cafed.markov_limit`, :claim:`thesis.thm2_3_4` and
:claim:`thesis.cafed.kappa_limits`.

A client's availability chain
-----------------------------

Client :math:`i` is active (:math:`a_t=1`) or not, and the state is a Markov chain with

.. math::
    P_i=\begin{pmatrix}1-(1-\lambda_i)\pi_i & (1-\lambda_i)\pi_i\\
    (1-\lambda_i)(1-\pi_i) & \lambda_i+(1-\lambda_i)\pi_i\end{pmatrix},
    \qquad \text{stationary law } (1-\pi_i,\ \pi_i),\quad \text{eigenvalues } \{1,\lambda_i\}.

Since :math:`P_i=\mathbf 1\rho^\top+\lambda_i(I-\mathbf 1\rho^\top)` with :math:`\rho=(1-\pi_i,\pi_i)`, its
powers are :math:`P_i^k=\mathbf 1\rho^\top+\lambda_i^k(I-\mathbf 1\rho^\top)`: the chain forgets its state
geometrically, the lag-:math:`k` autocorrelation of :math:`a_t` is :math:`\lambda_i^k`, and an absent client
stays away :math:`1/((1-\lambda_i)\pi_i)` rounds on average.  :math:`\lambda_i=0` is Bernoulli availability.

Where the weighted scheme converges
-----------------------------------

The generic scheme (2.2)-(2.3) adds the active clients' updates with fixed weights :math:`q_i`,
:math:`w^{t+1}=w^t+\sum_{i\in\mathcal A^t}q_i\Delta_i^t`.  Over a long horizon client :math:`i` contributes in a
fraction :math:`\pi_i` of the rounds, so the iterates minimise the *biased* objective

.. math::
    F_B=\sum_ip_iF_i,\qquad p_i=\frac{\pi_iq_i}{\sum_j\pi_jq_j},

whatever the correlations; the unbiased weights :math:`q_i=\alpha_i/\pi_i` give :math:`p=\alpha` and
:math:`F_B=F`.  The error splits (Theorem 2.3.2) into an optimisation error and a bias,

.. math::
    F(w)-F^\star\le2\kappa^2\big(\underbrace{F_B(w)-F_B^\star}_{\epsilon_{\rm opt}}
    +\underbrace{F(w_B^\star)-F^\star}_{\epsilon_{\rm bias}}\big),\qquad
    \epsilon_{\rm bias}\le4\kappa^2\,d_{TV}^2(\alpha,p)\,\Gamma'\quad\text{(Theorem 2.3.4)},

with :math:`\kappa=L/\mu` and :math:`\Gamma'=\max_i F_i(w_B^\star)-F_i^\star`.  Correlation enters the
optimisation error only (Theorem 2.3.3, through :math:`\ln(1/\lambda(P))`): a client that is away for long
stretches and then returns with the large weight :math:`\alpha_i/\pi_i` makes the iterates jump.

The trade-off
-------------

Dropping such a client (:math:`q_i=0`) removes those jumps, so :math:`\epsilon_{\rm opt}` falls faster, but it
moves :math:`p` away from :math:`\alpha` and leaves a bias :math:`\epsilon_{\rm bias}>0` that never vanishes.
For a short training budget the exclusion wins, for a long one the unbiased scheme does, and the more correlated
the client, the later the crossover.  CA-Fed (Algorithm 3) makes this choice every round: it visits clients by
decreasing :math:`\lambda_i`, then increasing :math:`\pi_i`, and drops one when that lowers its estimate

.. math::
    \hat\epsilon(q)=\big\langle\hat F-\hat F^\star,\,p(q)\big\rangle
    +4\bar\kappa^2\,d_{TV}^2\big(\alpha,p(q)\big)\,\hat\Gamma'
    \qquad (2.25)

of the error.  A small :math:`\bar\kappa^2` weighs the bias lightly and excludes more clients; as
:math:`\bar\kappa^2\to\infty` no exclusion is ever accepted and CA-Fed *is* the unbiased scheme.

**Checks that must hold:** the chain's matrix, stationary law, spectrum and powers match the closed forms; a
simulation of the participation process has the right availability and autocorrelation; the exact moments of the
scheme converge to :math:`x^\star` with unbiased weights and to :math:`w_B^\star` with an excluded client, whose
error tends to the closed-form :math:`\epsilon_{\rm bias}` (below Theorem 2.3.4's bound); the exclusion is ahead
early and behind late, with a crossover that comes later for a more correlated client; CA-Fed with a huge
:math:`\bar\kappa^2` equals the unbiased scheme bit for bit and keeps more clients than with a small one.
"""

# %%
# The two-state chain in closed form
# ----------------------------------
import matplotlib.pyplot as plt
import numpy as np
import torch

import theorylab
from theorylab.participation import markov_analytics as ma

torch.set_num_threads(1)  # tiny tensors: one intra-op thread is the fastest on a shared CPU (theorylab.threads)
pi, lam = 0.1, 0.9
P = ma.two_state_matrix([pi], [lam])[0]  # one chain: a 2 x 2 matrix
rho = np.array([1 - pi, pi])
print("P =\n", P)
assert np.allclose(P.sum(1), 1.0, atol=1e-15)  # rows sum to one
assert np.allclose(rho @ P, rho, atol=1e-15)  # stationary law (1 - pi, pi)
assert np.allclose(np.sort(np.linalg.eigvals(P).real), [lam, 1.0], atol=1e-12)  # spectrum {1, lambda}
for k in (1, 5, 50):
    closed = np.outer(np.ones(2), rho) + lam ** k * (np.eye(2) - np.outer(np.ones(2), rho))
    assert np.allclose(np.linalg.matrix_power(P, k), closed, atol=1e-12)
print(f"pi = {pi}, lambda = {lam}: mean absence 1/((1-lambda) pi) = {float(ma.activation_time([pi], [lam])[0]):.0f} "
      f"rounds, mixing time t_mix(1/4) = {int(ma.two_state_mixing_time(pi, lam)[0])} rounds")

# %%
# Simulated availability paths
# ----------------------------
# The participation process ``markov`` draws the masks that the kernels see, from the run's per-replica random
# streams.  Over 200 replicas x 2000 rounds (stationary start) the share of active rounds must match
# :math:`\pi_i` (inside the t-interval of the per-replica shares) and the pooled lag-:math:`k` autocorrelation
# :math:`\lambda_i^k` up to a tolerance of 0.02.  That tolerance is ours: it covers the estimator's bias from
# centring each replica at its own mean (about :math:`(1+\lambda)/((1-\lambda)T)\approx0.01` at
# :math:`\lambda=0.9`) plus a few of its standard errors (about 0.005).
from theorylab.checks import in_interval
from theorylab.participation.estimators import observe
from theorylab.participation.markov import markov
from theorylab.rng import Streams

pis, lams = np.array([0.9, 0.6, 0.3, 0.1]), [0.0, 0.5, 0.9, 0.9]
masks = np.stack([m.numpy() for _, m in observe(markov(pis, lams), 2000, Streams(0, 200))]).astype(float)
for i in range(len(pis)):
    check = in_interval(f"client {i}: share of active rounds", masks[:, :, i].mean(0), pis[i])
    acf = ma.autocorrelation(masks[:, :, i], [1, 3]).mean(1)
    print(f"client {i}: pi = {pis[i]}, share {check.measured:.4f} ({check.verdict}); lambda = {lams[i]}, "
          f"autocorrelation at lags 1, 3: {acf.round(3).tolist()} vs {lams[i]}, {lams[i] ** 3:.3f}")
    assert check.verdict == "holds"
    assert np.all(np.abs(acf - lams[i] ** np.array([1, 3])) < 0.02)

fig, ax = plt.subplots(figsize=(6.5, 2.2), constrained_layout=True)
ax.imshow(masks[:200, 0, :].T, aspect="auto", cmap="Greys", interpolation="nearest")
ax.set(yticks=range(4), yticklabels=[f"pi={p}, lambda={l}" for p, l in zip(pis, lams)], xlabel="round",
       title="availability of one replica (black: active)")
plt.show()

# %%
# Where the scheme goes, and how fast: exact moments
# --------------------------------------------------
# A 4-client quadratic with gradient noise and the availabilities :math:`\pi` above; the first three clients
# are Bernoulli (:math:`\lambda=0`), the last, rare client has correlation :math:`\lambda_4`.  Two weightings:
# the unbiased :math:`q=\alpha/\pi`, and the same with the rare client excluded (:math:`q_4=0`), whose limit
# is the closed-form :math:`w_B^\star=\arg\min\sum_ip_iF_i`.
# :func:`~theorylab.exact.markov_moments.markov_moments` propagates :math:`\mathbb E w^t` and
# :math:`\mathbb E w^tw^{t\top}` exactly over the :math:`2^4` joint availability states (two local steps per
# round, :math:`\eta_t=0.5/(1+t/50)`), so :math:`\mathbb E F(w^t)-F^\star` is exact.
from theorylab.exact.markov_moments import markov_moments
from theorylab.kernels.aggregation import unbiased_weights
from theorylab.participation.markov import TwoStateMarkov
from theorylab.testbeds.heterogeneity import gamma_prime, total_variation
from theorylab.testbeds.quadratic import random_quadratic

problem = random_quadratic(4, 2, seed=7, mu=0.3, L=1.0, spread=2.0, sigma=0.2)
q_unbiased = unbiased_weights(problem.alpha, pis)
q_excluded = np.where(np.arange(4) == 3, 0.0, q_unbiased)
p_excluded = pis * q_excluded / (pis @ q_excluded)
w_b = problem.optimum(p_excluded)
eps_bias = float(problem.value(w_b) - problem.f_star)
kappa2 = (problem.L / problem.mu) ** 2
bound = 4 * kappa2 * total_variation(problem.alpha, p_excluded) ** 2 * gamma_prime(problem, p_excluded)
print(f"excluding client 4: p = {p_excluded.round(4).tolist()}, eps_bias = F(w_B*) - F* = {eps_bias:.5f} "
      f"<= Theorem 2.3.4's bound {bound:.3f}")
assert 0 < eps_bias <= bound

LAMBDAS, ROUNDS = (0.5, 0.9, 0.97), 20_000
lr = {"name": "inverse", "lr0": 0.5, "t0": 50}
cases = [(TwoStateMarkov(pis, [0.0, 0.0, 0.0, l4]), q_unbiased) for l4 in LAMBDAS]
cases.append((TwoStateMarkov(pis, [0.0, 0.0, 0.0, 0.9]), q_excluded))  # client 4's chain no longer matters
*unbiased, excluded = markov_moments(problem, cases, lr, 2, ROUNDS, 10)
rounds = excluded.rounds
gap_excluded = excluded.metrics(problem)["server.gap"]
print(f"excluded: |E w^T - w_B*| = {np.abs(excluded.mean[-1] - w_b).max():.1e}, "
      f"E F(w^T) - F* = {gap_excluded[-1]:.5f} vs eps_bias {eps_bias:.5f}")
assert np.abs(excluded.mean[-1] - w_b).max() < 1e-3
assert abs(gap_excluded[-1] - eps_bias) < 0.05 * eps_bias  # the optimisation error left at T decays like eta_T

# %%
# The crossover
# -------------
# The unbiased scheme converges to :math:`x^\star` for every :math:`\lambda_4`, but the stronger the correlation,
# the longer the excluded scheme stays ahead.
crossover = {}
fig, ax = plt.subplots(figsize=(6.5, 3.8), constrained_layout=True)
for l4, moments in zip(LAMBDAS, unbiased):
    gap = moments.metrics(problem)["server.gap"]
    ahead = gap_excluded < gap
    crossover[l4] = int(rounds[np.nonzero(ahead)[0].max()])
    print(f"lambda_4 = {l4}: |E w^T - x*| = {np.abs(moments.mean[-1] - problem.x_star).max():.1e}, "
          f"E F(w^T) - F* = {gap[-1]:.5f}; exclusion ahead until round {crossover[l4]}")
    assert np.abs(moments.mean[-1] - problem.x_star).max() < 0.05
    assert gap[-1] < gap_excluded[-1]  # late: the unbiased scheme wins
    assert ahead[rounds == 100][0]  # early: the exclusion wins
    ax.loglog(rounds[1:], gap[1:], label=rf"unbiased, $\lambda_4$ = {l4}")
assert crossover[0.5] < crossover[0.9] < crossover[0.97]
ax.loglog(rounds[1:], gap_excluded[1:], "k", lw=2, label="client 4 excluded")
ax.axhline(eps_bias, color="k", ls=":", lw=1, label=r"$\epsilon_{\rm bias}$ (closed form)")
ax.set(xlabel="round t", ylabel=r"$\mathbb{E}F(w^t)-F^\star$ (exact)", title=r"$\pi$ = (0.9, 0.6, 0.3, 0.1)")
ax.legend(fontsize=8)
plt.show()

# %%
# CA-Fed chooses the exclusion online
# -----------------------------------
# The claims' setting: 8 quadratic clients, two per availability class of the thesis (:math:`\pi\in\{0.9,0.1\}`,
# correlated :math:`\lambda=0.9` or weakly correlated), oracle :math:`\pi,\lambda` and minima.  With
# :math:`\bar\kappa^2=10^6` CA-Fed never drops a client and its run equals the unbiased scheme's bit for bit
# (same seed, so the same masks and noise); smaller :math:`\bar\kappa^2` keeps fewer clients per round.
from theorylab.config import RunConfig
from theorylab.registry import build
from theorylab.validations.thesis.cafed import exclusion

base = RunConfig(problem=exclusion.HETERO, participation={"name": "markov", "pi": exclusion.PI, "lam": exclusion.LAM},
                 algorithm={"name": "cafed", "pi": exclusion.PI, "lam": exclusion.LAM, "local_steps": 2, "lr": 0.05},
                 rounds=150, replicas=24, seed=0, every=15)
huge = theorylab.run(base.replace(algorithm={**base.algorithm, "kappa2": 1e6}))
alpha = build("testbed", exclusion.HETERO).alpha
same = theorylab.run(base.replace(algorithm={"name": "fedavg", "aggregation": "all", "local_steps": 2, "lr": 0.05,
                                             "q": unbiased_weights(alpha, exclusion.PI).tolist()}))
difference = max(float(np.abs(huge.metrics[k] - same.metrics[k]).max()) for k in same.metrics)
print(f"kappa2 = 1e6 vs the unbiased scheme: largest metric difference {difference}")
assert difference == 0.0

kept = {k: float(exclusion.drive(base.replace(algorithm={**base.algorithm, "kappa2": k}))["kept"].mean())
        for k in (1e-2, 1.0, 1e2)}
print("mean clients kept per round (of 8):", {k: round(v, 2) for k, v in kept.items()})
assert kept[1e-2] < kept[1.0] < kept[1e2]

# %%
# The claims behind this tutorial
# -------------------------------
results = theorylab.validate("thesis.markov.two_state", "thesis.thm2_3_4", "thesis.cafed.kappa_limits")
print(results)
for result in results:
    assert result.verdict == result.claim.expect, (result.claim.id, result.verdict, result.claim.expect)
