r"""
Staleness on a virtual clock, and MasFL's exact optimum
=======================================================

**Learning goal.** In asynchronous FL a client's update is computed from a model that is already a few server
steps old.  After this tutorial you can simulate that staleness on a seeded virtual clock, predict its mean
exactly from Little's law whatever the job-duration law, and see why MasFL's control variates make the exact
optimum a fixed point of asynchronous training with local steps, where FedBuff settles elsewhere.

**Source.** MasFL paper (seed 004) §3.1, §6, App. E.1 and Algorithms 1-2; the clocks of
:mod:`theorylab.clocks` (:mod:`~theorylab.clocks.buffered`, :mod:`~theorylab.clocks.statistics`), the kernel
:mod:`theorylab.kernels.masfl`; the claims :claim:`masfl.delay_sweep`, :claim:`masfl.delay_law_free` and
:claim:`masfl.exact_optimum`.

The FedBuff delay mechanism (Mode B)
------------------------------------

:math:`N` clients, :math:`M_c` jobs in flight, and the server steps whenever :math:`S` updates have arrived.  A job
takes a random time (the paper: :math:`\mathcal U(0,20)` s, drawn per job).  After server step :math:`t` idle
clients are started from :math:`\theta^{t+1}` until :math:`M_c` jobs run again (refill R2).  An update applied at
step :math:`t` that started from :math:`\theta^{v}` has staleness :math:`\tau=t-v`.  The simulation runs on a
virtual clock: no waiting, every replica pops its own earliest completions, all from seeded random streams.

**Little's law, exactly.**  Count, for every server step :math:`u<T`, the jobs in flight while its buffer fills.
Under R2 there are exactly :math:`M_c` of them at every step.  A job started from :math:`\theta^v` and applied at
step :math:`a` is counted at steps :math:`v,\dots,a`, i.e. :math:`\tau+1` times; one still running at :math:`T`
is counted :math:`T-v` times.  Summing both ways, per run,

.. math::
    \sum_{\text{applied}}(\tau+1)+\underbrace{\sum_{\text{in flight at }T}(T-v)}_{\text{residual}}=T\,M_c,
    \qquad\text{so}\qquad
    \bar\tau=\frac{M_c-S}{S}-\frac{\text{residual}}{TS}

over the :math:`TS` applied updates, whatever the law of the durations.  At the paper's :math:`M_c=20`,
:math:`S=10` the mean staleness is therefore 1 up to an :math:`O(1/T)` term.

MasFL's fixed point
-------------------

MasFL keeps a table of control variates :math:`c_i` (each client's last uploaded mean gradient), their mean
:math:`c`, and a server momentum :math:`g`; the server broadcasts :math:`u=\beta c+(1-\beta)g`.  A client runs
:math:`K` local steps from its (stale) snapshot along the corrected direction

.. math::
    g_i^{k}=\beta\big(\nabla f_i(\theta_i^{k})-c_i\big)+u,\qquad \theta_i^{k+1}=\theta_i^k-\eta\,g_i^k,

and the server steps :math:`\theta\leftarrow\theta-\gamma g` with
:math:`g\leftarrow\beta(\tfrac1S\sum_{i\in\mathcal S}\delta_i+c)+(1-\beta)g`.  Without gradient noise, at
:math:`\theta^\star` every :math:`c_i=\nabla f_i(\theta^\star)`, so :math:`c=\nabla f(\theta^\star)=0`,
:math:`g=u=0`, and every client's direction :math:`\beta(\nabla f_i(\theta)-c_i)+u` vanishes: clients do not move
however stale their snapshot, and :math:`\theta^\star` is a fixed point.  On quadratics
:math:`f_i(\theta)=\tfrac12(\theta-b_i)^\top A_i(\theta-b_i)` the optimum is
:math:`\theta^\star=\bar A^{-1}\tfrac1N\sum_iA_ib_i`.  FedBuff's :math:`K` plain local steps drift toward each
client's own :math:`b_i`; without delays and with every client in every step its fixed point is, with
:math:`M_i=(I-\eta_lA_i)^K`,

.. math:: \theta_{\rm fp}=(I-\bar M)^{-1}\tfrac1N\textstyle\sum_i(I-M_i)\,b_i\ne\theta^\star .

**Checks that must hold:** Little's identity holds run by run as an integer equation, for two delay laws; the
mean staleness equals :math:`(M_c-S)/S-\text{residual}/(TS)` to rounding; MasFL reaches :math:`\theta^\star` to
:math:`10^{-10}` under asynchrony; FedBuff stays a visible distance away, and synchronous FedBuff sits on the
closed-form :math:`\theta_{\rm fp}`.
"""

# %%
# Replaying the clock
# -------------------
# :func:`theorylab.clocks.schedule.clock_schedule` replays a run's participation process and clock without any
# model, so the staleness of every applied update can be counted.  The recipe behind
# ``theorylab figure masfl-staleness`` holds the paper's setting: :math:`N=100`, :math:`S=10`,
# :math:`\mathcal U(0,20)` per job, R2, every client available.
import matplotlib.pyplot as plt
import numpy as np
import torch

import theorylab
from theorylab.clocks.statistics import jobs_in_flight_total, steady_mean_staleness
from theorylab.figures.masfl_staleness import BUFFER, fedbuff_clock, replay, summary

torch.set_num_threads(1)  # tiny tensors: one intra-op thread is the fastest on a shared CPU (theorylab.threads)
STEPS, REPLICAS = 300, 4
laws = {"uniform U(0, 20) per job": None, "exponential, mean 10": {"law": "exponential", "mean": 10.0}}
histograms = {}
for concurrency in (20, 30):
    for name, law in laws.items():
        s = summary(replay(fedbuff_clock(concurrency, delay=law), REPLICAS, seed=0, steps=STEPS))
        little = s["tau_sum"] + s["count"] + s["residual"]  # per run: sum(tau + 1) + residual
        predicted = steady_mean_staleness(concurrency, BUFFER) - s["residual"] / (STEPS * BUFFER)
        means = s["tau_sum"] / s["count"]
        print(f"M_c = {concurrency}, {name}: sum(tau + 1) + residual = {little.tolist()} "
              f"(T M_c = {jobs_in_flight_total(concurrency, BUFFER, 'R2', STEPS)}); mean staleness "
              f"{means.round(4).tolist()}, tau_max {int(s['tau_max'].max())}")
        assert np.all(little == jobs_in_flight_total(concurrency, BUFFER, "R2", STEPS))  # integers, exactly
        assert np.all(s["count"] == STEPS * BUFFER)
        assert np.allclose(means, predicted, rtol=0, atol=1e-12)
        histograms[concurrency, name] = s["histogram"].sum(0)

fig, axes = plt.subplots(1, 2, figsize=(8, 3), constrained_layout=True, sharey=True)
for ax, concurrency in zip(axes, (20, 30)):
    for shift, name in zip((-0.2, 0.2), laws):
        counts = histograms[concurrency, name]
        ax.bar(np.arange(len(counts)) + shift, counts / counts.sum(), width=0.4, label=name)
    ax.axvline(steady_mean_staleness(concurrency, BUFFER), color="k", ls="--", lw=1, label="(M_c - S)/S")
    ax.set(title=f"M_c = {concurrency}, S = {BUFFER}", xlabel="staleness tau")
axes[0].set_ylabel("share of applied updates")
axes[0].legend(fontsize=7)
plt.show()

# %%
# MasFL and FedBuff on a heterogeneous quadratic under asynchrony
# ---------------------------------------------------------------
# The claims' small setting: 10 clients in dimension 4 with rotated Hessians (spectra in [0.5, 2]) and centres
# spread widely, no gradient noise, Mode B with :math:`S=3`, :math:`M_c=6`, :math:`K=5` local steps, 300 server
# steps, 16 replicas (each its own clock).
from theorylab.config import RunConfig
from theorylab.figures.masfl_curves import async_quadratic, mode_b
from theorylab.registry import build
from theorylab.validations.masfl.optimum import FEDBUFF, MASFL, local_sgd_fixed_point

n, buffer, concurrency, rounds = 10, 3, 6, 300
base = RunConfig(algorithm=MASFL, rounds=rounds, replicas=16, seed=0, every=5,
                 **async_quadratic(n, buffer, concurrency))
problem = build("testbed", base.problem)
traces = {"MasFL": theorylab.run(base), "FedBuff": theorylab.run(base.replace(algorithm=FEDBUFF))}
distance = {name: np.sqrt(trace.metrics["server.dist2"][:, -1]) for name, trace in traces.items()}
print(f"MasFL: max over replicas of |theta^T - theta*| = {distance['MasFL'].max():.2e}")
print(f"FedBuff: mean |theta^T - theta*| = {distance['FedBuff'].mean():.3f}")
assert distance["MasFL"].max() < 1e-10
assert distance["FedBuff"].min() > 1e-3

# %%
# FedBuff's own fixed point
# -------------------------
# With :math:`M_c=S=N` every client runs in every step from the current model (no staleness), and FedBuff lands
# on the closed-form :math:`\theta_{\rm fp}`, whose distance to :math:`\theta^\star` is FedBuff's client drift.
sync = base.replace(algorithm=FEDBUFF, clock=mode_b(n, n, n), replicas=1)
theta_fp = local_sgd_fixed_point(problem, FEDBUFF["lr"], FEDBUFF["local_steps"])
final = theorylab.run(sync).final["server"][0]
print(f"synchronous FedBuff: |theta^T - theta_fp| = {np.abs(final - theta_fp).max():.2e}, "
      f"|theta_fp - theta*| = {np.linalg.norm(theta_fp - problem.x_star):.3f}")
assert np.abs(final - theta_fp).max() < 1e-10
assert np.linalg.norm(theta_fp - problem.x_star) > 1e-2

# %%
# Against server steps and against simulated time
# -----------------------------------------------
# Every trace records the clock's simulated time of each server step (``clock.time``), so a curve can be drawn
# against wall-clock time as well as against steps.
fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), constrained_layout=True, sharey=True)
for name, trace in traces.items():
    gap = np.sqrt(trace.metrics["server.dist2"]).mean(0)
    axes[0].semilogy(trace.rounds, np.maximum(gap, 1e-16), label=name)
    axes[1].semilogy(trace.metrics["clock.time"].mean(0), np.maximum(gap, 1e-16), label=name)
axes[0].set(xlabel="server step", ylabel=r"$\|\theta-\theta^\star\|$ (mean over replicas)")
axes[1].set(xlabel="simulated time (s)")
axes[0].legend()
plt.show()

# %%
# The claims behind this tutorial
# -------------------------------
results = theorylab.validate("masfl.delay_law_free", "masfl.exact_optimum")
print(results)
for result in results:
    assert result.verdict == result.claim.expect, (result.claim.id, result.verdict, result.claim.expect)
