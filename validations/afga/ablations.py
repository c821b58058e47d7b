r"""AFGA's components, CAFGA, heterogeneity and the noiseless limit (seed 002 §6.2 Table 4, Remark 4.9, Thm D.3;
digest 002 §1.5, §5 V16-V18, V20).

* V16, Table 4 (component ablation on CIFAR-10): accuracy +Gossip (77.39) < FedAMSGrad (79.59) < AFGA (80.02) <
  CAFGA (82.10).  Reproduced as an ordering of the time-averaged :math:`\|\nabla f(x_r)\|^2` (lower is better),
  paired over seeds; "+Gossip" is read as gossip over all :math:`N` clients on the ring with
  :math:`\mathcal S_{r,t} = \mathcal S_r` (the paper leaves its scope open, digest §1.5);
* V17, Remark 4.9: :math:`\sigma_g^2` enters AFGA's bound linearly (eq. (3) is affine in :math:`\sigma_g^2`, and
  so are :math:`\Delta f` and :math:`G^2` when the centres :math:`b_i` are scaled), so the log-log slope of the score
  against the exact :math:`\sigma_g^2 = \frac1N\sum_i\|A(b_i-\bar b)\|^2` is at most 1; FedAMSGrad is worse at large
  :math:`\sigma_g` with :math:`M/N = 0.2`;
* V18: CAFGA against AFGA at the same :math:`M` on rings: eq. (8)'s leading term is in :math:`1/\sqrt m` (worse) but
  :math:`\rho_{\max}<\rho` (better :math:`1/R` terms); the paper's tables say CAFGA is better;
* V20: noiseless and homogeneous (:math:`\sigma = \sigma_g = 0`): every variant converges to :math:`x^*`, and with
  :math:`W = J` AFGA's local phase is gradient descent with step :math:`\eta_lM/N`:
  :math:`\Delta_r = (I - \eta_l\frac MN A)^{\mathcal I}(x_r - x^*) - (x_r - x^*)`.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures import afga_ablation
from theorylab.figures.afga_ablation import K, TABLE4, cafga_score
from theorylab.figures.afga_sweeps import (DEVIATION, DIM, M, N, PAPER_LIKE, SAMPLER, TOPOLOGIES, VARIANTS, average_gradnorm,
                                 fedamsgrad, quadratic, setting, theory_steps)
from theorylab.checks import equal, paired_difference, slope_check
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.registry import build
from theorylab.threads import one_thread
from theorylab.validations.afga.paths import states

TABLE4_QUOTE = (r"FedAMSGrad Only  | $79.59 \pm 0.76$ | | +Gossip  | $77.39\pm0.01$ … Re-sampling (AFGA) … "
                r"$80.02\pm2.00$ … Clustered ( <b>CAFGA</b> ) | $82.10 \pm 0.67$")


@claim("afga.v16_table4_ablation", "seed 002 §6.2 Table 4; digest 002 §1.5, §3.2, §5 V16",
       "Table 4's ordering: +Gossip < FedAMSGrad < AFGA < CAFGA (accuracy), i.e. the reverse in ||grad f||^2.",
       kind="reproduction", where="§6.2, Table 4",
       quote=TABLE4_QUOTE, checks=("V16",))
@one_thread
def v16_table4_ablation(ctx) -> Evidence:
    data = afga_ablation.compute(ctx)
    score, rounds, order = data["score"], data["rounds"], list(TABLE4)
    replicas = len(score[order[0]])
    checks = [paired_difference(f"{worse} above {better} (Table 4: {TABLE4[worse]} < {TABLE4[better]} %)",
                                score[worse], score[better], note="avg ||grad f||^2, lower is better")
              for worse, better in zip(order, order[1:])]
    gossip_j = average_gradnorm(ctx, dict(PAPER_LIKE, **VARIANTS["+Gossip (J)"]), steps=afga_ablation.STEPS,
                                rounds=rounds, replicas=replicas)
    return Evidence(checks, figure=str(afga_ablation.draw(data, ctx.figure_path("afga-table4"))), notes=[
        setting(afga_ablation.STEPS, rounds, replicas, "eta_l = 0.05, eta = 0.003, eps = 1e-8; CAFGA: K = 4 clusters "
                "of 5, m = 1, ring(5) per cluster (rho_max = 0.539 vs 0.967)."),
        "means: " + ", ".join(f"{k}: {v.mean():.4g}" for k, v in score.items())
        + f", +Gossip (J): {gossip_j.mean():.4g}",
        "digest PROTOTYPE (N = 50): FedAMSGrad 2.16e-2, +Gossip(ring) 2.23e-2, +Gossip(J) 2.15e-2, AFGA(ring) 8.46e-3"],
        deviations=[DEVIATION, "ordering of a gradient-norm average on a quadratic, not CIFAR-10 accuracy; '+Gossip' "
                               "read as gossip over all N clients (scope unstated in the paper)"])


@claim("afga.v17_heterogeneity", "seed 002 Thm 4.6 eq. (3), Remark 4.9; digest 002 §2.7, §5 V17",
       "AFGA's averaged ||grad f||^2 grows at most linearly in sigma_g^2, and FedAMSGrad is worse at large sigma_g "
       "(M/N = 0.2).", kind="statement", where="§4, Remark 4.9",
       quote=r"the variance  $\sigma_g$  appears in  $O(\frac{1}{\sqrt{R\mathcal{I}M}})$  and smaller order terms "
             r"w.r.t. R,  $\mathcal{I}$ , and M for AFGA. … the dominant  $O(\frac{\sqrt{\mathcal{I}}}{\sqrt{RM}})$  "
             r"term directly relates to the variance  $\sigma_g$", checks=("V17",))
@one_thread
def v17_heterogeneity(ctx) -> Evidence:
    steps, rounds, replicas = 4, ctx.pick(100, 400), ctx.pick(32, 64)
    spreads = ctx.pick([0.5, 2.0, 4.0], [0.25, 0.5, 1.0, 2.0, 4.0, 8.0])
    sigma_g2, afga, fed = [], [], []
    for spread in spreads:
        problem = dict(quadratic(N, DIM, 1.0), spread=spread)
        testbed = build("testbed", problem)
        gaps = np.einsum("mij,mj->mi", testbed.A, testbed.u - testbed.x_star)
        sigma_g2.append(float((gaps ** 2).sum(1).mean()))
        afga.append(average_gradnorm(ctx, dict(theory_steps(steps, rounds), topology=TOPOLOGIES["ring"]), steps=steps,
                                     rounds=rounds, replicas=replicas, problem=problem))
        fed.append(average_gradnorm(ctx, dict(theory_steps(steps, rounds), **VARIANTS["FedAMSGrad"]), steps=steps,
                                    rounds=rounds, replicas=replicas, problem=problem))
    return Evidence([
        slope_check("AFGA (ring): slope of the averaged ||grad f||^2 in sigma_g^2", sigma_g2, np.stack(afga, 1), 1.0,
                    "at_most", note="sigma_g^2 exact (shared Hessian); centres b_i scaled by " + str(spreads)),
        paired_difference(f"FedAMSGrad above AFGA (ring) at sigma_g^2 = {sigma_g2[-1]:.3g}", fed[-1], afga[-1],
                          note="same theory step sizes")],
        notes=[setting(steps, rounds, replicas, "theory step sizes eta_l = 1/(I sqrt R), eta = 0.25 N sqrt(I/M), "
                                                 "eps = 1."),
               "sigma_g^2: " + ", ".join(f"{v:.3g}" for v in sigma_g2),
               "means AFGA: " + ", ".join(f"{v.mean():.3g}" for v in afga) + "; FedAMSGrad: "
               + ", ".join(f"{v.mean():.3g}" for v in fed), "digest: not run in the PROTOTYPE"],
        deviations=[DEVIATION])


@claim("afga.v18_cafga_vs_afga", "seed 002 Thm D.3 eq. (8), Tables 1-4; digest 002 §2.3, §5 V18",
       "At equal M on rings, CAFGA (rho_max of a ring of n) does at least as well as AFGA (ring of N), as the paper's "
       "tables report.", kind="reproduction", where="§6.1 (Results on CIFAR-10 and CIFAR-100), Tables 1-4",
       quote="We observe that AFGA shows improvement upon other baselines, and the proposed CAFGA achieves better "
             "performance than AFGA.", checks=("V18",))
@one_thread
def v18_cafga_vs_afga(ctx) -> Evidence:
    steps, rounds, replicas = 4, ctx.pick(200, 400), ctx.pick(16, 64)
    checks, notes = [], []
    for label, sizes in (("paper-like steps (eta = 0.003, eps = 1e-8)", PAPER_LIKE),
                         ("AFGA's theory steps for both", theory_steps(steps, rounds))):
        afga = average_gradnorm(ctx, dict(sizes, topology=TOPOLOGIES["ring"]), steps=steps, rounds=rounds,
                                replicas=replicas)
        cafga = cafga_score(ctx, sizes, steps, rounds, replicas)
        checks.append(paired_difference(f"{label}: AFGA above CAFGA", afga, cafga, note="avg ||grad f||^2"))
        notes.append(f"{label}: AFGA {afga.mean():.4g}, CAFGA {cafga.mean():.4g}")
    own = cafga_score(ctx, theory_steps(steps, rounds, m=M // K, n=N // K), steps, rounds, replicas)
    notes.append(f"CAFGA with its own Thm D.3 schedule (eta = 0.25 n sqrt(I/m), half of AFGA's): {own.mean():.4g} "
                 "(reported, not tested: as for V12 the comparison depends on the eta scaling)")
    return Evidence(checks, notes=[setting(steps, rounds, replicas, "CAFGA: K = 4 clusters of 5, m = 1; rho_max "
                                           "0.539 vs AFGA's rho 0.967.")] + notes, deviations=[DEVIATION])


@claim("afga.v20_noiseless", "seed 002 Alg. 1, eq. (12); digest 002 §1.3 consequence (c), §5 V20",
       "With sigma = sigma_g = 0 every variant converges to x*, and with W = J AFGA's local phase is gradient descent "
       "with step eta_l M / N.", kind="digest", where="digest 002 §1.3 consequence (c), §5 V20",
       quote=r"all methods converge to $\boldsymbol x^*$; with $W=J$, AFGA's local phase is GD with step $\eta_lM/N$",
       checks=("V20",))
@one_thread
def v20_noiseless(ctx) -> Evidence:
    steps, lr, rounds, replicas = 4, 0.2, ctx.pick(300, 1000), 1
    problem = dict(quadratic(N, DIM, 0.0), spread=0.0, x0=[1.0] * DIM)
    server = fedamsgrad(1.0, 1.0)
    variants = dict(VARIANTS, **{"AFGA (J)": dict(topology=TOPOLOGIES["J"]), "AFGA (a), ring of reporting clients":
                                 dict(topology=None, gossip_scope="reporting")})
    checks = []
    for name, switches in variants.items():
        config = RunConfig(problem=problem, participation=SAMPLER, rounds=rounds, replicas=replicas, seed=ctx.seed,
                           every=rounds, algorithm={"name": "afga", "local_steps": steps, "server": server,
                                                    "lr": lr if name == "FedAMSGrad" else lr * N / M, **switches})
        checks.append(equal(f"{name}: ||x_R - x*||^2", ctx.run(config).metrics["server.dist2"][:, -1].max(), 0.0,
                            1e-12, basis="closed_form", note="x* = b = 0; started at ||x_1 - x*||^2 = 5"))
    path = states(RunConfig(problem=problem, participation=SAMPLER, rounds=5, replicas=replicas, seed=ctx.seed,
                            algorithm={"name": "afga", "local_steps": steps, "lr": lr, "server": server,
                                       "topology": TOPOLOGIES["J"]}), ("x", "afga.delta"))
    A = build("testbed", problem).A[0]
    step = np.linalg.matrix_power(np.eye(DIM) - lr * M / N * A, steps) - np.eye(DIM)
    start = np.concatenate([np.ones((replicas, 1, DIM)), path["x"][:, :-1]], axis=1)  # x_r before each round
    checks.append(equal("W = J: max |Delta_r - ((I - eta_l (M/N) A)^I - I) x_r|",
                        np.abs(path["afga.delta"] - start @ step.T).max(), 0.0, 1e-14, basis="closed_form"))
    return Evidence(checks, notes=[f"homogeneous noiseless quadratic N = {N}, d = {DIM}, b_i = 0, x_1 = 1; "
                                   f"I = {steps}, eta_l = {lr} (FedAMSGrad) and {lr * N / M} = eta_l N/M (gossip "
                                   "variants, so that the average model moves alike), FedAMSGrad server eta = 1, "
                                   "eps = 1; tolerance 1e-12 on ||x_R - x*||^2 (R rounds of a linear contraction)"],
                    deviations=[DEVIATION])
