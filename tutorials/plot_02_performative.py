r"""
Performative stability versus performative optimality
=====================================================

**Learning goal.** When a deployed model changes the data it is later trained on, "the best model" splits into
two notions.  After this tutorial you can define both, compute them in closed form on the Gaussian-mean testbed
of the Performative FL paper, say why they differ exactly when clients react to the model differently, and check
that P-FedAvg (federated averaging on performative data) converges to the *stable* point and not to the *optimal*
one.

**Source.** Performative FL paper (seed 003) §2, eqs. (1)-(2), §4.1 and Appendix C; the testbed
:mod:`theorylab.testbeds.gaussian_mean`, the solvers of :mod:`theorylab.performative.solvers`, the exact
P-FedAvg moments of :mod:`theorylab.exact.pfedavg_moments`; the claims :claim:`performative.ps_closed_form`,
:claim:`performative.po_closed_form` and :claim:`performative.exact_moments`.

Two solution concepts
---------------------

Client :math:`i` (weight :math:`p_i`) sees data that depend on the model :math:`\tilde\theta` it deployed,
:math:`Z\sim\mathcal D_i(\tilde\theta)=\mathcal N(m_i+\epsilon_i\tilde\theta,\sigma^2)`, and the loss is
:math:`\ell(\theta;z)=\tfrac12(\theta-z)^2`.  The *decoupled risk* separates the model we evaluate from the
model that shaped the data:

.. math::
    f(\theta;\tilde\theta)=\sum_ip_i\,\mathbb E_{Z\sim\mathcal D_i(\tilde\theta)}\ell(\theta;Z)
    =\sum_ip_i\Big[\tfrac12\big(\theta-m_i-\epsilon_i\tilde\theta\big)^2+\tfrac{\sigma^2}2\Big].

* Retraining on the data the current model induced is the map
  :math:`\Phi(\tilde\theta)=\arg\min_\theta f(\theta;\tilde\theta)=\bar m+\bar\epsilon\,\tilde\theta`, with
  :math:`\bar m=\sum_ip_im_i`, :math:`\bar\epsilon=\sum_ip_i\epsilon_i`.  A **performatively stable** point is a
  fixed point of it, :math:`\theta^{PS}=\arg\min_\theta f(\theta;\theta^{PS})`:

  .. math:: \theta^{PS}=\frac{\bar m}{1-\bar\epsilon}.

  Repeated risk minimisation :math:`\theta_{k+1}=\Phi(\theta_k)` contracts with factor :math:`|\bar\epsilon|`.
* A **performatively optimal** point minimises the risk *after* the data have reacted,
  :math:`\mathrm{PR}(\theta)=f(\theta;\theta)`.  With :math:`a_i=1-\epsilon_i`,
  :math:`\mathrm{PR}'(\theta)=\sum_ip_ia_i(a_i\theta-m_i)`, so

  .. math:: \theta^{PO}=\frac{\sum_ip_i(1-\epsilon_i)m_i}{\sum_ip_i(1-\epsilon_i)^2}.

The stability condition sets the plain average of the client gradients :math:`g_i(\theta)=a_i\theta-m_i` to zero;
optimality sets their :math:`a_i`-weighted average to zero.  Writing :math:`\bar a=1-\bar\epsilon`,
:math:`V=\mathrm{Var}_p(\epsilon)` and :math:`C=\mathrm{Cov}_p(\epsilon,m)`, a line of algebra gives

.. math::
    \theta^{PS}-\theta^{PO}=\frac{\bar m\,V+\bar a\,C}{\bar a\,(\bar a^2+V)},

which vanishes when every client has the same sensitivity (:math:`V=C=0`) and can be large otherwise.  On the
paper's instance (:math:`N=25`, :math:`\bar\epsilon=0.9`, :math:`\bar m=10`, :math:`\mathrm{Var}(\epsilon)=0.1`)
the stable point is 100 and the optimal point is below 10.

P-FedAvg (§2.4) runs :math:`E` local SGD steps per round on every client, each step drawing a fresh sample at the
client's *current* model, then averages (all clients, or :math:`K` sampled ones by Scheme I or II).  The paper
proves it converges to :math:`\theta^{PS}` (Theorems 3.1-3.3); nothing pulls it toward :math:`\theta^{PO}`.

**Checks that must hold:** the closed forms equal independent numerical solutions (repeated risk minimisation,
a root finder, multi-start minimisation of PR); the gap formula above; :math:`\theta^{PS}` is optimal on the data
it induces while :math:`\theta^{PO}` has the lower performative risk; the exact P-FedAvg moments go to
:math:`\theta^{PS}` under all three participation schemes; a Monte Carlo run of the kernel matches them.
"""

# %%
# The paper's instance and its two points
# ---------------------------------------
# ``gaussian_mean_paper`` draws the clients' :math:`m_i, \epsilon_i, p_i` with the authors' generator (seed 0).
import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy.optimize import brentq

import theorylab
from theorylab.performative.solvers import multistart_minimise, repeated_risk_minimisation
from theorylab.testbeds.gaussian_mean import gaussian_mean_paper

torch.set_num_threads(1)  # tiny tensors: one intra-op thread is the fastest on a shared CPU (theorylab.threads)
g = gaussian_mean_paper(weights="random")
theta_ps, theta_po = g.theta_ps, g.theta_po
print(f"N = {g.n_clients}, m_bar = {g.m_bar:.4f}, eps_bar = {g.eps_bar:.4f}")
print(f"theta_PS = m_bar / (1 - eps_bar) = {theta_ps:.6f}")
print(f"theta_PO = sum p(1-eps)m / sum p(1-eps)^2 = {theta_po:.6f}")
assert abs(theta_ps - g.m_bar / (1 - g.eps_bar)) < 1e-9

# %%
# Independent solutions of the two definitions
# --------------------------------------------
# * repeated risk minimisation iterates :math:`\Phi` from 0; its measured step ratios estimate the contraction
#   factor, which must be :math:`|\bar\epsilon|`;
# * a root finder solves the stability condition :math:`\sum_ip_ig_i(\theta)=0`;
# * L-BFGS from four starts minimises :math:`\mathrm{PR}`.
rrm = repeated_risk_minimisation(g.phi, 0.0, tol=1e-12, max_iter=5000)
root = brentq(lambda th: float(g.client_gradients(th) @ g.p), -1e4, 1e4, xtol=1e-13)
found = multistart_minimise(lambda th: float(g.performative_risk(th[0])),
                            lambda th: np.atleast_1d(g.client_gradients(th[0]) @ (g.p * (1 - g.eps))),
                            [[-500.0], [0.0], [100.0], [500.0]], gtol=1e-12)
print(f"RRM: {float(rrm.theta[0]):.9f} after {rrm.iterations} steps, step ratios {rrm.ratios[:3].round(12)}")
print(f"root of the stability condition: {root:.9f}; minimiser of PR: {float(found.best[0]):.9f}")
assert rrm.converged and abs(float(rrm.theta[0]) - theta_ps) < 1e-9
assert np.abs(rrm.ratios[:50] - abs(g.eps_bar)).max() < 1e-9  # Phi is affine: every step shrinks by |eps_bar|
assert abs(root - theta_ps) < 1e-8
assert abs(float(found.best[0]) - theta_po) < 1e-6

# %%
# Why they differ: the heterogeneity of the sensitivities
# -------------------------------------------------------
# The gap formula is checked against the two closed forms, and with every :math:`\epsilon_i` set to
# :math:`\bar\epsilon` (same :math:`m_i, p_i`) the two points coincide.
from theorylab.testbeds.gaussian_mean import GaussianMean

a_bar = 1 - g.eps_bar
V = float(g.p @ (g.eps - g.eps_bar) ** 2)
C = float(g.p @ ((g.eps - g.eps_bar) * (g.m - g.m_bar)))
gap = (g.m_bar * V + a_bar * C) / (a_bar * (a_bar ** 2 + V))
print(f"Var_p(eps) = {V:.4f}, Cov_p(eps, m) = {C:.4f}: predicted gap {gap:.6f}, "
      f"theta_PS - theta_PO = {theta_ps - theta_po:.6f}")
assert abs(gap - (theta_ps - theta_po)) < 1e-9

same_eps = GaussianMean(g.m, np.full(g.n_clients, g.eps_bar), g.p, sigma=g.sigma)
print(f"homogeneous sensitivities: theta_PS = {same_eps.theta_ps:.6f}, theta_PO = {same_eps.theta_po:.6f}")
assert abs(same_eps.theta_ps - same_eps.theta_po) < 1e-9

# %%
# Each point wins its own game
# ----------------------------
# :math:`\theta^{PS}` minimises the decoupled risk on the distribution it induces, so no retraining moves it; but
# :math:`\theta^{PO}` has the lower risk once the data have reacted.
theta = np.linspace(-20.0, 140.0, 801)
decoupled_at_ps = g.decoupled_risk(theta, theta_ps)
assert np.all(decoupled_at_ps >= g.decoupled_risk(theta_ps, theta_ps) - 1e-9)
assert g.performative_risk(theta_po) < g.performative_risk(theta_ps)
print(f"PR(theta_PO) = {float(g.performative_risk(theta_po)):.3f} < PR(theta_PS) = "
      f"{float(g.performative_risk(theta_ps)):.3f}")

fig, ax = plt.subplots(figsize=(6, 3.6), constrained_layout=True)
ax.plot(theta, g.performative_risk(theta), label=r"performative risk PR$(\theta)=f(\theta;\theta)$")
ax.plot(theta, decoupled_at_ps, label=r"decoupled risk $f(\theta;\theta^{PS})$")
ax.axvline(theta_po, color="C0", ls=":", label=rf"$\theta^{{PO}}$ = {theta_po:.2f}")
ax.axvline(theta_ps, color="C1", ls=":", label=rf"$\theta^{{PS}}$ = {theta_ps:.0f}")
ax.set(xlabel=r"$\theta$", ylabel="risk", yscale="log", title="Gaussian-mean testbed, paper's instance")
ax.legend(fontsize=8)
plt.show()

# %%
# P-FedAvg converges to the stable point
# --------------------------------------
# The exact engine propagates :math:`\mathbb E\bar\theta^t` and :math:`\mathbb E(\bar\theta^t)^2` of P-FedAvg
# (no sampling, :math:`O(TN)`) with the authors' step :math:`\eta_t=100/(t+10^4)` over :math:`2\cdot10^5` local
# iterations, :math:`E=5`, from :math:`\theta^0=\bar m`.  Full participation and Scheme I use the random weights,
# Scheme II (uniform sampling without replacement, :math:`K=5`) the uniform ones, as in the authors' code.
from theorylab.performative.experiments import algorithm_spec, exact, gaussian_spec

HORIZON = 200_000
checkpoints = np.array([0, 10**3, 10**4, 10**5, HORIZON])
fig, ax = plt.subplots(figsize=(6, 3.6), constrained_layout=True)
for scheme, k, weights in (("full", None, "random"), ("I", 5, "random"), ("II", 5, "uniform")):
    problem = gaussian_mean_paper(weights=weights)
    moments = exact(gaussian_spec(weights=weights), algorithm_spec(scheme, k), HORIZON)
    to_ps, to_po = moments.dist2(problem.theta_ps), moments.dist2(problem.theta_po)
    separation = (problem.theta_ps - problem.theta_po) ** 2
    print(f"scheme {scheme:4s}: E(theta - theta_PS)^2 at t = {checkpoints.tolist()}: "
          + ", ".join(f"{v:.3g}" for v in to_ps[checkpoints])
          + f"; E(theta - theta_PO)^2 at the end: {to_po[-1]:.1f} (separation^2 {separation:.1f})")
    assert np.all(np.diff(to_ps[checkpoints]) < 0)  # the distance to PS keeps falling
    assert abs(moments.mean[-1] - problem.theta_ps) < 0.01 * abs(problem.theta_ps - problem.theta_po)
    assert to_po[-1] >= 0.99 * separation  # E(x - y)^2 >= (E x - y)^2: it stays a separation away from PO
    ax.loglog(moments.t[1:], to_ps[1:], label=f"scheme {scheme}" + (f", K = {k}" if k else ""))
ax.set(xlabel="local iteration t", ylabel=r"$\mathbb{E}(\bar\theta^t-\theta^{PS})^2$ (exact)",
       title=r"P-FedAvg, $\eta_t = 100/(t+10^4)$, E = 5")
ax.legend()
plt.show()

# %%
# The kernel agrees with the exact engine
# ---------------------------------------
# A short Monte Carlo run of the P-FedAvg kernel (Scheme I, data noise :math:`\sigma=1` and a faster step so that
# noise, drift and sampling all matter within 500 local iterations) against the exact mean at the same horizon.
from theorylab.checks import in_interval
from theorylab.performative.experiments import run_config

spec = gaussian_spec(weights="random", sigma=1.0)
algorithm = algorithm_spec("I", 5, 5, {"name": "inverse", "lr0": 0.05, "t0": 100})
trace = theorylab.run(run_config(spec, algorithm, 500, replicas=300, seed=0, points=1))
theory = float(exact(spec, algorithm, 500).mean[500])
check = in_interval("Scheme I: mean of theta at t = 500", trace.metrics["server.theta"][:, -1], theory)
print(f"Monte Carlo mean {check.measured:.4f}, interval {tuple(round(v, 4) for v in check.ci)}, exact {theory:.4f}"
      f" -> {check.verdict}")
assert check.verdict == "holds"

# %%
# The claims behind this tutorial
# -------------------------------
results = theorylab.validate("performative.ps_closed_form", "performative.po_closed_form")
print(results)
for result in results:
    assert result.verdict == result.claim.expect, (result.claim.id, result.verdict, result.claim.expect)
