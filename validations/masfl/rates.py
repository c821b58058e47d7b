r"""Seed 004 Theorems 3.1 and 4.1: the rates in :math:`T` of MasFL and AdaMasFL with the theorems' own parameters,
MasFL's against App. C's explicit bound (digest 004 §3.2–3.3, §5.2 checks 7 and 9; calculators in
:mod:`theorylab.bounds.masfl`).

With :math:`\beta = \sqrt{SK/T}`, :math:`\gamma = \beta/(4L)` and :math:`\eta = \eta_{\max}/2`, the time average
:math:`\frac1T\sum_t\|\nabla f(\theta^t)\|^2` is bounded by App. C's
:math:`\kappa\big(\frac{4L\Delta+26\sigma^2}{\sqrt{SKT}}+\frac{200e^2S\sigma^2}{T}+\frac{8L^2\sigma^2}{NKT}\big)`,
which is order-level ("≲"): its constants are the proof's, so the comparison is reported with its tightness.  The
:math:`T^{-1/2}` exponent is asymptotic ("for sufficiently large :math:`T`"): it is the bound's only while
:math:`\frac{4L\Delta+26\sigma^2}{\sqrt{SKT}}` dominates :math:`\frac{200e^2S\sigma^2}{T}`, i.e. for
:math:`T\ge T_\star = \big(200e^2S\sigma^2\sqrt{SK}/(4L\Delta+26\sigma^2)\big)^2`; below it the slope test has no power.
Theorem 4.1 gives no number for "sufficiently large": our reading is the horizon :math:`T_{\rm cross}` from which
crossing the initial distance at AdaMasFL's largest server step takes at most :data:`CROSSING_SHARE` of the run.

Horizons (:mod:`theorylab.regime`, issue 25 item 3): a slope is fitted only over three powers of two from the
threshold on, spaced by 4 (:math:`2^{15}, 2^{17}, 2^{19}` for both claims), which full mode affords
(:data:`LIMIT`); quick mode runs :math:`T\le2048`, fits no slope, and reports the horizons and projected cost
of a decisive test (:func:`theorylab.regime.out_of_reach`).

Testbed: the heterogeneous quadratic with Gaussian noise of exact variance :math:`\sigma^2`
(:mod:`theorylab.validations.masfl.trajectory`), exact :math:`L`, :math:`\Delta` and :math:`\nabla f`.  The time average
:math:`\frac1T\sum_{t<T}` is the trapezoid sum with its end correction (:func:`theorylab.figures.fedawe_rate.time_average`) on
a grid of :math:`\lfloor\sqrt T\rfloor/16` rounds (every round up to :math:`T=1023`), fine enough for the transient,
which lasts :math:`\sim\sqrt T` rounds.  (A mean over 64 evenly spaced rounds weights round 0 by 1/64 instead of
:math:`1/T`: at :math:`T\ge2^{15}` that alone floors the estimate near :math:`\|\nabla f(\theta^0)\|^2/64` and
flattens the slope.)  Synchronous uniform sampling of :math:`S` clients (:math:`\tau_{\max}=0`, Mode B
with :math:`M_c = S`) keeps the horizons affordable.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures.fedawe_rate import recording_step, time_average
from theorylab.figures.masfl_curves import async_quadratic
from theorylab.bounds.masfl import appc_bound, steps_thm31, steps_thm41
from theorylab.checks import at_most, ours, slope_check
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.regime import horizons_in_regime, out_of_reach, seconds_per_round
from theorylab.registry import build
from theorylab.threads import one_thread

N, S, K, SIGMA = 10, 2, 2, 1.0
LIMIT = (2048, 2 ** 19)  # largest horizon (quick, full); full: ~4 min per claim at 32 replicas
PILOT = (128, 512, 2048)  # horizons run when the regime is out of reach
CROSSING_SHARE = 0.1  # thm41: our reading of 'sufficiently large T' (module docstring)


def synchronous_fields() -> dict:
    """The quadratic of :func:`theorylab.figures.masfl_curves.async_quadratic` with S of N clients sampled uniformly per step."""
    fields = async_quadratic(N, S, S, sigma=SIGMA)
    fields.pop("clock")
    return {**fields, "participation": {"name": "uniform_k", "n_clients": N, "k": S}}


def leading_from(L: float, Delta: float, sigma2: float, s: int = S, k: int = K) -> float:
    r""":math:`T_\star`: from here on App. C's :math:`T^{-1/2}` term is at least its :math:`T^{-1}` noise term
    (at ``s`` clients per step and ``k`` local steps)."""
    return (200 * np.e ** 2 * s * sigma2 * np.sqrt(s * k) / (4 * L * Delta + 26 * sigma2)) ** 2


def crossing_from(distance: float) -> float:
    r""":math:`T_{\rm cross}=\big(\|\theta^0-\theta^\star\|/(c\,(SK)^{1/4})\big)^4`, :math:`c=`
    :data:`CROSSING_SHARE`: from here on the initial distance takes at most a share :math:`c` of the :math:`T` steps
    at the largest server step :math:`\gamma=(SK)^{1/4}/T^{3/4}` (since :math:`\gamma T=(SK)^{1/4}T^{1/4}`)."""
    return (distance / (CROSSING_SHARE * (S * K) ** 0.25)) ** 4


def _regime_or_pilot(ctx, threshold: float) -> tuple[tuple[int, ...], bool]:
    """The horizons this mode runs: three in the regime when it affords them (:data:`LIMIT`), else :data:`PILOT`."""
    horizons = horizons_in_regime(threshold, ctx.pick(*LIMIT))
    return (horizons, True) if horizons else (PILOT, False)


@claim("masfl.thm31_rate", "seed 004 Thm 3.1, App. C; digest 004 §3.2, §5.2 check 7", "With Theorem 3.1's beta, "
       "gamma, eta, MasFL's (1/T) sum_t E||grad f(theta^t)||^2 is O(1/sqrt(SKT)), below App. C's explicit expression.",
       kind="statement", expect="inconclusive", where="§3.2, Theorem 3.1 and the sentence after it; App. C (end)",
       quote=r"Theorem 3.1 demonstrates that MasFL achieves a convergence rate of  $\mathcal{O}\left(\frac{1}"
             r"{\sqrt{SKT}}\right)$  in terms of  $\mathbb{E} \|\nabla f\left(\boldsymbol{\theta}\right)\|^2$  for "
             r"sufficiently large T.",
       because="OUT OF REACH in quick mode: App. C's 1/sqrt(SKT) term dominates its 1/T term only from T* ~ 21,700 "
               "on, and quick mode runs T <= 2048, so no slope is fitted; the check names the horizons 2^15, 2^17, "
               "2^19 that full mode runs and their projected cost. App. C's explicit expression (written with '<~') "
               "holds at every quick horizon, 52 to 195 times above the measurement. In full mode the slope decides "
               "over 2^15..2^19: measured -0.501 (bootstrap [-0.502, -0.500]) contains -1/2, so it stays "
               "inconclusive (a tight exponent), and App. C holds 14 to 21 times above the measurement",
       defence="The authors would say the rate is asymptotic; we agree, and fit no slope below the regime that App. "
               "C's own constants define. Inconclusive stands in quick mode because no quick horizon reaches it; "
               "App. C's expression, being '<~', is shown as our reading of a bound, not as the theorem's relation.",
       checks=("7",))
@one_thread
def thm31_rate(ctx) -> Evidence:
    fields = synchronous_fields()
    problem = build("testbed", fields["problem"])
    L, sigma2 = problem.L, problem.sigma2
    Delta = float(problem.value(problem.x_init) - problem.f_star)
    t_star, replicas = leading_from(L, Delta, sigma2), ctx.pick(8, 32)
    horizons, reached = _regime_or_pilot(ctx, t_star)
    samples, checks, traces = [], [], []
    for T in horizons:
        beta, gamma, eta = steps_thm31(S, K, T, L, 0.0, eta_fraction=0.5)
        cfg = RunConfig(algorithm={"name": "masfl", "beta": beta, "gamma": gamma, "eta": eta, "local_steps": K},
                        rounds=T, replicas=replicas, seed=ctx.seed, every=recording_step(T), **fields)
        traces.append(ctx.run(cfg))
        avg = time_average(traces[-1].rounds, traces[-1].metrics["server.gradnorm2"])
        samples.append(avg)
        checks.append(ours(at_most(f"T = {T}: (1/T) sum ||grad f||^2 vs App. C", float(avg.mean()),
                                   appc_bound(S, K, T, N, L, sigma2, Delta, 0.0, eta), basis="monte_carlo",
                                   samples=avg),
                           "App. C's last display is '<~' (up to constants); read with its printed constants"))
    name = "exponent of the time average in T"
    checks.append(slope_check(name, horizons, np.array(samples).T, -0.5, "at_most",
                              note=f"every T >= T* = {t_star:.0f}") if reached else
                  out_of_reach(name, t_star, max(horizons), seconds_per_round(traces), replicas,
                               regime="App. C's 1/sqrt(SKT) term >= its 1/T term (module docstring)"))
    means = ", ".join(f"T = {T}: {v.mean():.4g}" for T, v in zip(horizons, samples))
    return Evidence(checks, notes=[f"N = {N}, S = {S}, K = {K}, sigma = {SIGMA}, L = {L:.4g}, Delta = {Delta:.4g}, "
                                   "eta = eta_max / 2; uniform sampling of S clients per step.",
                                   f"Time-averaged ||grad f||^2: {means}."],
                    deviations=["tau_max = 0: synchronous uniform sampling instead of the paper's Mode B clock, "
                                f"to afford T up to {ctx.pick(*LIMIT)} ({'quick' if ctx.quick else 'full'} mode)."])


@claim("masfl.thm41_rate", "seed 004 Thm 4.1, Table 1; digest 004 §3.3, §5.2 check 9", "With Theorem 4.1's "
       "problem-free beta, gamma, eta, AdaMasFL's (1/T) sum_t E||grad f(theta^t)|| decays like (SKT)^{-1/4} for "
       "sufficiently large T.", kind="statement", expect="inconclusive",
       where="§4.2, Theorem 4.1 and the sentence after it",
       quote=r"Theorem 4.1 demonstrates that AdaMasFL achieves a convergence rate of  $\mathcal{O}\left(\frac{1}"
             r"{(SKT)^{1/4}}\right)$  in terms of  $\mathbb{E} \|\nabla f(\theta)\|$ .",
       because="OUT OF REACH in quick mode: the rate is asymptotic ('for sufficiently large T') and the theorem gives "
               "no number; our reading, T >= T_cross ~ 24,600 (crossing the initial distance at the largest server "
               "step gamma = (SK)^{1/4} / T^{3/4} takes at most 10% of the run), is beyond quick mode's T <= 2048, "
               "so no slope is fitted. Full mode fits it over 2^15, 2^17, 2^19 as our criterion (shown, never "
               "accusing), since only our reading says those T are sufficiently large: measured -0.242 (bootstrap "
               "[-0.244, -0.240]), a shade shallower than -1/4 while the crossing still takes 9% to 5% of the run",
       defence="The authors would say that a finite-T slope cannot test an asymptotic rate; we agree: below our "
               "threshold no slope is fitted, and above it the slope is shown as our reading. Inconclusive is the "
               "honest verdict: no horizon is shown by the theorem itself to be 'sufficiently large'.", checks=("9",))
@one_thread
def thm41_rate(ctx) -> Evidence:
    fields = synchronous_fields()
    problem = build("testbed", fields["problem"])
    distance = float(np.linalg.norm(np.asarray(problem.x_init, dtype=np.float64) - problem.x_star))
    t_cross, replicas = crossing_from(distance), ctx.pick(8, 32)
    horizons, reached = _regime_or_pilot(ctx, t_cross)
    samples, traces = [], []
    for T in horizons:
        steps = steps_thm41(S, K, T)._asdict()
        traces.append(ctx.run(RunConfig(algorithm={"name": "adamasfl", **steps, "local_steps": K}, rounds=T,
                                        replicas=replicas, seed=ctx.seed, every=recording_step(T), **fields)))
        samples.append(time_average(traces[-1].rounds, np.sqrt(traces[-1].metrics["server.gradnorm2"])))
    means = ", ".join(f"T = {T}: {v.mean():.4g}" for T, v in zip(horizons, samples))
    share = ", ".join(f"{distance / (steps_thm41(S, K, T).gamma * T):.0%} at T = {T}" for T in horizons)
    regime = (f"the initial distance ||theta^0 - theta*|| = {distance:.3g} takes at most {CROSSING_SHARE:.0%} of "
              "the steps at the largest server step gamma")
    name = "exponent of (1/T) sum ||grad f|| in T"
    check = (ours(slope_check(name, horizons, np.array(samples).T, -0.25, "at_most", note=f"every T >= T_cross = "
                              f"{t_cross:.0f}"),
                  "T >= T_cross is our reading of 'sufficiently large T', which the theorem leaves unquantified")
             if reached else out_of_reach(name, t_cross, max(horizons), seconds_per_round(traces), replicas,
                                          regime=f"our reading of 'sufficiently large T': {regime}"))
    return Evidence([check],
                    notes=[f"Time-averaged ||grad f||: {means}; N = {N}, S = {S}, K = {K}, "
                           f"sigma = {SIGMA}.", f"Share of the steps the initial distance needs at the largest "
                           f"server step: {share}.", "The digest's regime for the leading term, T >~ (SK)^3 = "
                           f"{(S * K) ** 3} (constants dropped), is met by every horizon; it does not bound the "
                           "transient, so it does not make these T 'sufficiently large'."],
                    deviations=["tau_max = 0 (synchronous uniform sampling), as in masfl.thm31_rate."])
