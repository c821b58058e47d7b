"""The baselines of seed 000 §7 (FedAU [55], MIFA [14], FedVARP [20], F3AST [44]) against FedAvg's bias on a
heterogeneous quadratic; digest 000 §2.4, §8 item 11."""

from __future__ import annotations

import numpy as np

from theorylab.checks import MC_LEVEL, Check, in_interval
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.exact.fedavg_moments import fedavg_mean_limit, fedavg_moments
from theorylab.registry import build
from theorylab.threads import one_thread

BASELINE_PROBLEM = {"name": "random_quadratic", "n_clients": 5, "dim": 3, "seed": 2, "mu": 0.3, "L": 1.0, "spread": 1.0}
BASELINE_P = (0.9, 0.6, 0.4, 0.25, 0.15)
BASELINE_LR = 0.1
BASELINES = {"fedau": {"name": "fedau", "cutoff": 50}, "mifa": {"name": "mifa"}, "fedvarp": {"name": "fedvarp"},
             "f3ast": {"name": "f3ast", "beta": 0.01}}
ROUNDING = 1e-12  # MIFA / FedVARP: every replica reaches x* to ~1e-16, so a CI there measures rounding, not sampling
EXACT_LIMIT = (f"allowance {ROUNDING:g} for rounding only: with s = 1 and exact gradients x* is the fixed point of the "
               "server update and every replica reaches it to ~1e-16, where the CI's width is rounding (with no "
               "allowance, differences of a few ulps would read as violations)")
ESTIMATED_WEIGHTS = {  # digest §8 item 11 expects only E[x^T] ~ x* from online weight estimates
    "fedau": "allowance {tol:.3g} (5% of FedAvg-active's bias): the weights are running means of observed gaps, cut "
             "at K = 50 (relative weight bias up to (1-p)^K = 3e-4 at p = 0.15) and unscaled before the first gap "
             "is seen, so the digest expects E[x^T] ~ x* only",
    "f3ast": "allowance {tol:.3g} (5% of FedAvg-active's bias): the weight 1/r_k uses an EMA of the participation "
             "rate whose relative variance beta(1-p)/((2-beta)p) is up to 2.8% here, so E[1/r_k] exceeds 1/p_k "
             "(Jensen) and the digest expects E[x^T] ~ x* only when the rates track p_k",
}


def _baseline_config(ctx, algorithm: dict, dynamics: str = "stationary") -> RunConfig:
    rounds = ctx.pick(800, 3000)
    participation = {"name": "bernoulli", "p": list(BASELINE_P), "dynamics": dynamics}
    return RunConfig(problem=BASELINE_PROBLEM, participation=participation,
                     algorithm={**algorithm, "local_steps": 1, "lr": BASELINE_LR}, rounds=rounds,
                     replicas=ctx.pick(32, 256), seed=ctx.seed, every=rounds)


@claim("fedawe.baselines",
       "seed 000 §7 baselines [55], [14], [20], [44]; digest 000 §2.4, §8 item 11",
       "On a heterogeneous quadratic with stationary heterogeneous availability, FedAU (K = 50 >> 1/p_i), MIFA and "
       "FedVARP converge in mean to x* (F3AST too when its EMA rates track p_i), while FedAvg over active clients is "
       "biased toward frequently available clients, also under sine dynamics.")
@one_thread
def baselines(ctx) -> Evidence:
    problem = build("testbed", BASELINE_PROBLEM)
    x_star = problem.x_star
    biased = fedavg_mean_limit(problem, "active", BASELINE_P, 1, BASELINE_LR)
    scale = float(np.linalg.norm(biased - x_star))
    tol = 0.05 * scale
    level = 1 - (1 - MC_LEVEL) / problem.dim
    checks = []
    for name, spec in BASELINES.items():
        final = ctx.run(_baseline_config(ctx, spec)).final["server"]
        estimated = name in ESTIMATED_WEIGHTS
        atol, note = (tol, ESTIMATED_WEIGHTS[name].format(tol=tol)) if estimated else (ROUNDING, EXACT_LIMIT)
        checks += [in_interval(f"{name}: E[x^T]_{j} = x*_{j}", final[:, j], x_star[j], level=level, atol=atol,
                               note=f"x* in closed form; {note}; Bonferroni over coordinates")
                   for j in range(problem.dim)]
    sine = _baseline_config(ctx, {"name": "fedavg", "aggregation": "active"}, "sine")
    exact = fedavg_moments(sine).mean[-1]
    final = ctx.run(sine).final["server"]
    checks.append(Check("FedAvg over active, sine: |E[x^T] - x*| (exact moments)",
                        float(np.linalg.norm(exact - x_star)),
                        tol, "> (biased)", "holds" if np.linalg.norm(exact - x_star) > tol else "violated",
                        note="exact-moment engine; stationary limit of the same algorithm is "
                             f"{scale:.3g} away from x*"))
    checks += [in_interval(f"FedAvg over active, sine: Monte Carlo E[x^T]_{j} vs exact", final[:, j], exact[j],
                           level=level, note="kernel vs the exact-moment engine") for j in range(problem.dim)]
    return Evidence(checks, notes=[
        f"m = 5, d = 3 quadratic (Hessian spectra in [0.3, 1], rotated per client), exact gradients, s = 1, eta_l = "
        f"{BASELINE_LR}, eta_g = 1, p = {BASELINE_P}; with s = 1 and sigma = 0 a method whose weights average to "
        "equal client weights has x* as its fixed point."],
        deviations=["F3AST uses beta = 0.01 (paper: 0.001) so that its EMA rates track p_i within the short horizon; "
                    "its budget, initial rate (1) and division by m are the digest's [U] choices (kernel docstring)."])
