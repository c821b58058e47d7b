r"""Thesis ch. 5 Theorem 5.3.1 and App. D Theorem D.4 (seed 001, (5.7), (D.49), (D.50)): Fed-CIS converges to
:math:`w^*_{\tilde\Lambda}` at rate :math:`O(1/(KT))`, under the bound (D.49), in "theory mode" and "paper mode"
(digest 001_thesis_ch4-6 §3.3, §6 C4, G2).

Setting: the nested linear testbed on the 7-node topology (4/2/1), 80-15-5 serving split, Serving Rate weights,
the §5.4.3 preset :math:`p=0.2`, equal data partition (1200 samples, one seeded dataset), :math:`K=5`, additive
Gaussian gradient noise with per-exit variances proportional to Table D.1's CIFAR10 row
(:math:`\sigma_{i,e}^2=0.05\,v_e/v_3` per coordinate).

* **Theory mode** (G2): plain local SGD, the theorem's steps :math:`2/(\mu(\gamma+(t-1)K+k+1))`, projection on the
  ball :math:`\|w\|\le3` (it holds every :math:`w^*`), :math:`\eta_s\sum_e\tilde\Lambda_e=1`.
* **Paper mode** (G2): the experiments' optimiser (§5.4.3): momentum 0.9, weight decay :math:`5\cdot10^{-4}`,
  cosine steps from 0.1, no projection; the theorem does not cover it and its numbers are reported beside the bound.

The exact mean :math:`\mathbb E[w^{(t)}]` comes from :func:`theorylab.cis.training.mean_fedcis` (Lemma D.2 and
linearity), the target :math:`w^*_{\tilde\Lambda}` from one linear solve.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from theorylab.testbeds.early_exit import THESIS_LIKE, ExitQuadratic, combine, exit_quadratics, layer_sizes, minimiser, \
    optimum_gap, population, sample_moments, smoothness
from theorylab.bounds.thesis_ch5 import READINGS, d49_bound, gamma_offset, opt_constant, theorem_lr
from theorylab.checks import across, at_most, in_interval, paired_difference, slope_check, trend
from theorylab.cis.aggregation import SAMPLING_READINGS, aggregation_weights
from theorylab.cis.rates import SEVEN_NODE, split_topology_rates
from theorylab.cis.sampling import preset
from theorylab.cis.strategies import serving_rate
from theorylab.cis.training import cosine_schedule, mean_fedcis, run_fedcis
from theorylab.claims import Evidence, claim
from theorylab.threads import one_thread
from theorylab.rng import Streams

SOURCE = "seed 001 Ch. 5 Thm 5.3.1 (5.7); App. D Thm D.4 (D.49), (D.50), (D.19); digest 001 ch4-6 §3.3, §6 C4, G2"
TABLE_D1_CIFAR10 = np.array([0.00374, 0.00224, 0.00101])  # printed per-exit gradient variances
RADIUS, LOCAL_STEPS = 3.0, 5
B_LABEL = {(r, f): f"B with G {'once' if r == 'corrected' else 'squared as printed'}, "
                   f"{'(1-p)/p as printed' if f == 'printed' else '1/p (Lemma D.3 repaired)'}"
           for r in READINGS for f in SAMPLING_READINGS}
DEVIATION = ("nested linear early-exit testbed with additive Gaussian gradient noise (per-exit variances in Table "
             "D.1's proportions) instead of ResNet-18 mini-batches on CIFAR10")


@lru_cache(maxsize=4)
def setting(seed: int) -> dict:
    """The module's problem: exit losses, p, alpha, the target, the constants of (D.49)-(D.50)."""
    exits = SEVEN_NODE[1]
    lam = split_topology_rates((80, 15, 5)).exit_rates
    sizes = layer_sizes(exits, (1 / 3, 1 / 3, 1 / 3), 1200)
    q = exit_quadratics(THESIS_LIKE, *(m[0] for m in sample_moments(THESIS_LIKE, sizes, Streams(seed, 1))))
    p = preset(exits, 0.2)
    alpha = aggregation_weights(p, sizes, serving_rate(lam))
    used = p > 0
    L, mu = smoothness(ExitQuadratic(q.hess[used], q.lin[used], q.const[used]))
    noise = np.sqrt(0.05 * TABLE_D1_CIFAR10 / TABLE_D1_CIFAR10[-1])[None, :] * np.ones(p.shape)
    objective = combine(q, alpha)
    target = minimiser(objective)
    gamma = float(optimum_gap(q, target)[used].max())  # (D.19) at w*_tilde (digest §7 item 8)
    sigma2 = THESIS_LIKE.dim * noise ** 2
    return dict(q=q, p=p, alpha=alpha, L=L, mu=mu, noise=noise, objective=objective, target=target, Gamma=gamma,
                sigma2=sigma2, serving_opt=minimiser(combine(population(THESIS_LIKE), lam)),
                B={(r, f): opt_constant(alpha, p, sigma2, L, gamma, LOCAL_STEPS, 2 * RADIUS, r, f)
                   for r in READINGS for f in SAMPLING_READINGS})


@lru_cache(maxsize=4)
def runs(seed: int, quick: bool) -> tuple[tuple[int, ...], dict, dict]:
    """Theory-mode and paper-mode Monte Carlo runs: ``(record, theory {t: w}, paper {t: w})``."""
    s = setting(seed)
    replicas, record = (100, (25, 50, 100, 200)) if quick else (400, (25, 50, 100, 200, 400, 800))
    start = np.zeros((replicas, THESIS_LIKE.dim))
    args = (s["q"].hess, s["q"].lin, s["noise"], s["p"], s["alpha"], start, record[-1], LOCAL_STEPS)
    theory = run_fedcis(*args, theorem_lr(s["mu"], s["L"] / s["mu"], LOCAL_STEPS), Streams(seed, replicas),
                        record=record, ball=(np.zeros(THESIS_LIKE.dim), RADIUS))
    paper = run_fedcis(*args, cosine_schedule(0.1, record[-1]), Streams(seed, replicas), record=record,
                       momentum=0.9, weight_decay=5e-4)
    return record, theory, paper


@claim("thesis.ch5.fixed_point", SOURCE,
       "With the theorem's diminishing steps and eta_s sum_e Lambda~_e = 1, Fed-CIS converges to w*_Lambda~, the "
       "minimiser of F_{D,Lambda~} (exact linear solve).", kind="statement",
       where="§5.3.3 (the objective Algorithm 6 minimises); App. D Theorem D.4",
       quote=r"We can see from our aggregation rule that Algorithm 6 is minimizing $F_{D,\tilde{\Lambda}}(\mathbf{w}) "
             r"\triangleq", checks=("C4",))
@one_thread
def fixed_point(ctx) -> Evidence:
    s = setting(ctx.seed)
    record, theory, _ = runs(ctx.seed, ctx.quick)
    lr = theorem_lr(s["mu"], s["L"] / s["mu"], LOCAL_STEPS)
    horizon = ctx.pick(2000, 20000)
    mean = mean_fedcis(s["q"].hess, s["q"].lin, s["alpha"], np.zeros(THESIS_LIKE.dim), horizon, LOCAL_STEPS, lr,
                       record=record)
    dist = [float(np.linalg.norm(mean[t] - s["target"])) for t in (*record, horizon)]
    other = float(np.linalg.norm(s["serving_opt"] - s["target"]))
    checks = [trend("||E w^(t) - w*_Lambda~|| over t = " + ", ".join(map(str, (*record, horizon))), dist,
                    bool(np.all(np.diff(dist) < 0)), "strictly decreasing", 0.0, basis="enumeration",
                    note="exact mean by Lemma D.2 and linearity of local GD on quadratics; the residual is the "
                         "client-drift bias, O(step)"),
              trend(f"||E w^(T) - w*_Lambda~|| < ||E w^(T) - w*_Lambda|| at T = {horizon}", dist[-1],
                    dist[-1] < float(np.linalg.norm(mean[horizon] - s["serving_opt"])), "<",
                    float(np.linalg.norm(mean[horizon] - s["serving_opt"])), basis="closed_form",
                    note=f"w*_Lambda: the population optimum with the serving rates, {other:.4g} away from "
                         "w*_Lambda~; the limit is w*_Lambda~, not this other candidate")]
    last = record[-1]
    points = {"first": (record[0], s["target"]), "last": (last, s["target"]), "serving": (last, s["serving_opt"])}
    near = {name: np.sum((theory[t] - point) ** 2, 1) for name, (t, point) in points.items()}
    checks += [paired_difference(f"iterates: ||w^(t) - w*_Lambda~||^2 at t = {record[0]} minus at t = {last}",
                                 near["first"], near["last"], note="per replica; the iterates themselves approach "
                                                                   "w*_Lambda~, not only their mean"),
               paired_difference(f"iterates at T = {last}: ||w - w*_Lambda||^2 - ||w - w*_Lambda~||^2",
                                 near["serving"], near["last"], note="per replica: closer to w*_Lambda~")]
    checks += [in_interval(f"Monte Carlo E[w^(T)]_{j} at T = {last} = exact mean", theory[last][:, j], mean[last][j],
                           note=f"{len(theory[last])} replicas, projected on ||w|| <= {RADIUS:g}; the exact mean is "
                                "unprojected, so this also tests that the projection stayed inactive")
               for j in range(THESIS_LIKE.dim)]
    return Evidence(checks, notes=["||E w - w*|| = " + ", ".join(f"{d:.3g}" for d in dist)],
                    deviations=[DEVIATION])


@claim("thesis.ch5.rate", SOURCE,
       "Fed-CIS's optimisation error E[F_{D,Lambda~}(w^(T))] - F* decays as O(1/(KT)): log-log slope -1 in the "
       "number of local steps.", kind="digest", expect="inconclusive",
       where="digest 001_thesis_ch4-6 §6 C4 (the thesis' (5.7) states the upper bound O(B/(KT)), tested with its "
             "explicit constant (D.49) by thesis.ch5.d49_bound)",
       quote="Rate $O(1/(KT))$; slope $-1$ in total local steps",
       because="the measured slope is -1.11 in quick mode, and its bootstrap interval contains -1: a rate at least "
               "as fast as 1/(KT) and a slightly slower one both fit the 4 recorded rounds (25-200)",
       defence="The digest reads (5.7)'s O(B/(KT)) as a log-log slope of -1. A slope over a finite window is our "
               "reading: an O(1/(KT)) bound allows a shallower pre-asymptotic slope, so this claim tests the digest, "
               "not the thesis, whose explicit bound (D.49) holds at every recorded T (thesis.ch5.d49_bound). It "
               "stays inconclusive because the interval cannot place the slope on either side of -1", checks=("C4",))
@one_thread
def rate(ctx) -> Evidence:
    s = setting(ctx.seed)
    record, theory, _ = runs(ctx.seed, ctx.quick)
    samples = np.stack([optimum_gap(s["objective"], theory[t]) for t in record], axis=1)
    offset = gamma_offset(s["L"] / s["mu"], LOCAL_STEPS)
    return Evidence([slope_check("slope of E[F - F*] in gamma + KT", offset + LOCAL_STEPS * np.asarray(record),
                                 samples, -1.0, "at_most",
                                 note=f"theory mode: theorem steps, projection, plain SGD; x = gamma + KT, the "
                                      f"variable of (D.49) (gamma = {offset:.4g})")],
                    notes=["E[F - F*] = " + ", ".join(f"{t}: {v:.3g}" for t, v in zip(record, samples.mean(0)))],
                    deviations=[DEVIATION])


@claim("thesis.ch5.d49_bound", SOURCE,
       "Theorem D.4 (D.49)-(D.50): E[F_{D,Lambda~}(w^(T))] - F* <= kappa/(gamma+KT) (2B/mu + mu(gamma+1)/2 "
       "||w^(1) - w*||^2), in theory mode; paper mode reported beside it.", kind="statement",
       where="App. D, Theorem D.4, eqs. (D.49)-(D.53)",
       quote=r"\frac{\kappa}{\gamma + JT} \left(\frac{2B}{\mu} + \frac{\mu(\gamma + 1)}{2} \mathbb{E} "
             r"\left[\mathbf{w}^{(1)} - \mathbf{w}_{\tilde{\Lambda}}^* \right] \right), \quad (\text{D.49})",
       checks=("C4", "G2"))
@one_thread
def d49(ctx) -> Evidence:
    s = setting(ctx.seed)
    record, theory, paper = runs(ctx.seed, ctx.quick)
    dist2 = float(s["target"] @ s["target"])  # w^(1) = 0
    bound = {key: {t: d49_bound(b, s["L"], s["mu"], LOCAL_STEPS, t + 1, dist2) for t in record}
             for key, b in s["B"].items()}
    checks = [across(f"theory mode, T = {t}: E[F(w) - F*] <= (D.49)",
                     {B_LABEL[key]: at_most(f"T = {t}, {B_LABEL[key]}", None, bound[key][t], basis="monte_carlo",
                                            samples=optimum_gap(s["objective"], theory[t]),
                                            note="model after T rounds = w^(T+1), so the bound is taken at T+1")
                      for key in bound}) for t in record]
    bound = bound[("corrected", "printed")]
    paper_gap = {t: float(optimum_gap(s["objective"], paper[t]).mean()) for t in record}
    return Evidence(checks, notes=[
        f"L = {s['L']:.4g}, mu = {s['mu']:.4g} (ridge), kappa = {s['L'] / s['mu']:.4g}, Gamma (D.19 at w*_Lambda~) "
        f"= {s['Gamma']:.4g}, diam W = {2 * RADIUS:g}, B: "
        + ", ".join(f"{B_LABEL[key]} {b:.5g}" for key, b in s["B"].items()),
        "paper mode (momentum 0.9, wd 5e-4, cosine from 0.1, no projection; outside the theorem): E[F - F*] = "
        + ", ".join(f"T={t}: {v:.3g} (bound {bound[t]:.3g})" for t, v in paper_gap.items()),
        "theory mode: E[F - F*] = " + ", ".join(f"T={t}: {optimum_gap(s['objective'], theory[t]).mean():.3g}"
                                               for t in record)],
        deviations=[DEVIATION],
        errata=["(D.49) is printed with '=' and an unsquared norm; read as '<=' with ||w^(1) - w*||^2 (digest §7 8)",
                "(D.50)'s 8(J-1)^2 G^2 squares G_ie twice; the corrected reading uses G (both are decided)",
                "(D.50)'s last term inherits Lemma D.3's (1-p)/p, which needs 1/p for arbitrary updates "
                "(thesis.ch5.lemma_d3_bound); both are decided"])
