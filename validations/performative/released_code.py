"""The authors' public code (tsy19/PerformativeFedAvg @ ccccffb; digest 003 §0 [R], §4.1.2, §4.2.4, §8 V15, V17): two
places where it does not run the P-FedAvg of seed 003 §2.4.  Each is emulated by a switch of our kernel or testbed
(never a default) and the consequence is decided against the paper's algorithm.
"""

from __future__ import annotations

import numpy as np

from theorylab.figures import performative_batch, performative_fig5
from theorylab.testbeds.credit_data import credit_deviations
from theorylab.testbeds.gaussian_mean import gaussian_mean_paper
from theorylab.checks import auxiliary, equal, paired_difference, printed
from theorylab.claims import Evidence, claim
from theorylab.performative.experiments import THETA_PS, algorithm_spec, exact, gaussian_spec
from theorylab.threads import one_thread
from theorylab.validations.performative.common import credit_problem


@claim("performative.released_full_path", "authors' code [R] 'full_' path; digest 003 §4.1.2, §6, §8 V17",
       "The released code's full-participation path aggregates with the paper's weights, theta = sum_j p_j w_j "
       "(§2.4), so on the Fig. 1 instance with random p it converges to theta_PS = 100.", kind="code",
       expect="violated", severity="reference code",
       where="tsy19/PerformativeFedAvg, Gausian_mean_estimation/Gaussian_Performative_FedAvg_with.py (aggregation "
             "theta = sum(local_theta[i] for i in sample_ls)/K)",
       quote="in \"full_\" mode $p$ is random but averaging is uniform ($1/N$). Those dynamics converge to the PS of "
             "the *uniform*-weighted problem, which is **80.23, not 100**",
       because="the 'full_' path averages the 25 local models uniformly while the objective weights them by the random "
               "p: its exact limit is the uniform-weight PS mean(m)/(1 - mean(eps)) = 80.23, 19.8 away from "
               "theta_PS = 100",
       defence="The authors may not have produced Fig. 1's full-participation curve with this path, or with random "
               "p. The finding is about the released code, not the paper: as released, its full-participation mode "
               "does not implement the paper's full participation for unequal p, and a user reproducing Fig. 1 with "
               "it converges to the wrong point.", checks=("V17",))
def released_full_path(ctx) -> Evidence:
    problem = gaussian_mean_paper(weights="random")
    uniform_ps = float(problem.m.mean() / (1 - problem.eps.mean()))
    moments = exact(gaussian_spec(weights="random"), algorithm_spec("full_uniform"), ctx.pick(1_000_000, 4_000_000))
    limit = float(moments.mean[-1])
    checks = [equal("exact E theta_bar of the 'full_' path at the horizon vs theta_PS", limit, THETA_PS, 1.0,
                    basis="enumeration",
                    note=f"exact engine, scheme 'full_uniform' (aggregation 1/N), {len(moments.mean) - 1} local "
                         f"steps: {float(moments.mean[len(moments.mean) // 2]):.4f} at half the horizon, "
                         f"{limit:.4f} at the end; tolerance 1 (the distance to PS the figures resolve)"),
              auxiliary(equal("the same limit vs the uniform-weight PS mean(m)/(1 - mean(eps))", limit, uniform_ps,
                              0.05, basis="closed_form", note="the fixed point of uniform averaging (digest §4.1.2); "
                                                              "tolerance for the 1/t tail at the horizon")),
              printed("uniform-weight PS", uniform_ps, "80.23", basis="digest")]
    return Evidence(checks, deviations=["Emulates a bug of the released code (scheme 'full_uniform'); it is never used "
                                        "as a default."])


@claim("performative.released_credit_eps", "authors' code [R] credit P-FedAvg; digest 003 §4.2.4 item 1, §8 V15",
       "The released credit code's local steps sample from D_i(theta_i^t), i.e. best-respond with the client's eps_i "
       "(§2.4), so its P-FedAvg runs end nearer theta_PS than the regularised theta_ERM.", kind="code",
       expect="violated", severity="reference code",
       where="tsy19/PerformativeFedAvg, Credit_score/credit_package/performative.py, perf_fed_avg: "
             "best_response(X, theta, 0, strat_features)",
       quote="**`perf_fed_avg` calls `best_response(X, theta, 0, strat_features)`: $\\epsilon=0$ during local "
             "training.**",
       because="with the released eps = 0 in local training the runs end nearer theta_ERM than theta_PS on every seed: "
               "P-FedAvg as released targets the regularised ERM, which the paper's Fig. 5 cannot tell from PS "
               "(digest: |theta_ERM - theta_PS| = 0.0998, the order of the logged final distances)",
       defence="The paper's figures may come from another version of the code, and theta_PS itself is computed with "
               "the eps_i. But as released the client's eps is read and unused in local training, so the code's "
               "P-FedAvg is not the paper's performative algorithm, and its runs converge to theta_ERM, not theta_PS.",
       checks=("V15",))
@one_thread
def released_credit_eps(ctx) -> Evidence:
    problem, source = credit_problem(ctx)
    spec = {"name": "credit", "source": source, "batch": 4, "released_code_local_eps_zero": True}
    bug = performative_fig5.credit_run(ctx, spec, "full", None, performative_batch.SEEDS)
    gap = float(np.linalg.norm(problem.theta_erm - problem.theta_ps))
    checks = [paired_difference("released eps = 0: final |theta - theta_ERM| - |theta - theta_PS| (ends nearer PS, as "
                                "the paper's P-FedAvg does)", bug["erm_dist"][:, -1], np.sqrt(bug["dist2"][:, -1]),
                                f"full participation, batch 4, {performative_batch.SEEDS} seeds; |theta_ERM - "
                                f"theta_PS| = {gap:.3g} on the {source} data")]
    return Evidence(checks, deviations=credit_deviations(source) + [
        "Emulates the released code's local eps = 0 (testbed switch released_code_local_eps_zero); the paper's "
        "algorithm is checked in performative.credit_convergence."])
