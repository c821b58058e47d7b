"""The baselines of seed 000 §7 (FedAU [55], MIFA [14], FedVARP [20], F3AST [44]) against FedAvg's bias on a
heterogeneous quadratic; digest 000 §2.4, §8 item 11."""

from __future__ import annotations

import numpy as np

from theorylab.checks import at_least, at_most, auxiliary, in_interval, ours, trend
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.exact.fedavg_moments import fedavg_mean_limit, fedavg_moments
from theorylab.exact.poisson_binomial import inverse_count_moments
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
REMAINING = 0.25  # estimated weights: at most this share of FedAvg-over-active's bias may remain (our reading)
OUR_SHARE = ("'approximately x*' and 'biased' have no stated size; the share 0.25 of FedAvg-over-active's stationary "
             "bias is our reading")
EXACT_ZERO = 1e-9  # the exact-moment engine computes a bias of exactly 0 to ~1e-15
ESTIMATED_WEIGHTS = {  # digest §8 item 11 expects only E[x^T] ~ x* from online weight estimates
    "fedau": "the weights are running means of observed gaps, cut at K = 50 (relative weight bias up to "
             "(1-p)^K = 3e-4 at p = 0.15) and unscaled before the first gap is seen",
    "f3ast": "the weight 1/r_k uses an EMA of the participation rate whose relative variance beta(1-p)/((2-beta)p) is "
             "up to 2.8% here, so E[1/r_k] exceeds 1/p_k by up to ~2.8% (Jensen) and a small residual bias remains",
}
REMAINING_NOTE = (
    "'E[x^T] ~ x*' (digest §8 item 11) read as: the online weight estimates remove most of the bias of FedAvg over "
    "active clients, ||E x^T - x*|| <= {share} ||b|| with b = (its exact stationary limit) - x*. Why {share}: "
    "FedAvg over active weights clients by m q_i / sum q = {weights} instead of 1 (distortions of order 100%), "
    "while the mechanisms above distort weights by at most ~3%, so to first order they leave a few % of ||b||; "
    "{share} keeps a >= 6x margin above that and still separates FedAvg over active (whose share is 1, and "
    "{sine:.2f} under sine). Unbiased per-pair estimate: <x_a - x*, x_b - x*> / ||b||^2 over disjoint pairs of "
    "independent replicas has mean ||E x^T - x*||^2 / ||b||^2; {estimate}")


def _baseline_config(ctx, algorithm: dict, dynamics: str = "stationary") -> RunConfig:
    rounds = ctx.pick(800, 3000)
    participation = {"name": "bernoulli", "p": list(BASELINE_P), "dynamics": dynamics}
    return RunConfig(problem=BASELINE_PROBLEM, participation=participation,
                     algorithm={**algorithm, "local_steps": 1, "lr": BASELINE_LR}, rounds=rounds,
                     replicas=ctx.pick(256, 2048), seed=ctx.seed, every=rounds)


@claim("fedawe.baselines",
       "seed 000 §7 baselines [55], [14], [20], [44]; digest 000 §2.4, §8 item 11",
       "On a heterogeneous quadratic with stationary heterogeneous availability, MIFA and FedVARP converge in mean "
       "to x*, FedAU (K = 50 >> 1/p_i) and F3AST (EMA rates tracking p_i) approximately so, while FedAvg over active "
       "clients is biased, also under sine dynamics. The paper states none of this: these are the digest's "
       "expectations from the baselines' own theory (§8 item 11), so the claim is about the digest; 'approximately' "
       "is shown against a threshold of our own and does not decide.",
       kind="digest", where="digest 000 §8 item 11 (baselines of seed 000 §7: [55], [14], [20], [44])",
       quote=r"FedAU $\mathbb E[x^t]\to\approx x^\star$ … MIFA and FedVARP: $\mathbb E[x^t]\to x^\star$. … "
             r"Under sine, FedAvg over active is biased toward high-$p$ clients.", checks=("11",))
@one_thread
def baselines(ctx) -> Evidence:
    problem = build("testbed", BASELINE_PROBLEM)
    x_star = problem.x_star
    biased = fedavg_mean_limit(problem, "active", BASELINE_P, 1, BASELINE_LR)
    scale = float(np.linalg.norm(biased - x_star))
    sine = _baseline_config(ctx, {"name": "fedavg", "aggregation": "active"}, "sine")
    exact = fedavg_moments(sine).mean[-1]
    sine_bias = float(np.linalg.norm(exact - x_star))
    reading = REMAINING_NOTE.format(share=REMAINING, weights=_active_weights(), sine=sine_bias / scale, estimate="{}")
    checks = []
    for name, spec in BASELINES.items():
        final = ctx.run(_baseline_config(ctx, spec)).final["server"]
        if name in ESTIMATED_WEIGHTS:
            pairs = _squared_bias_pairs(final, x_star) / scale ** 2
            checks.append(ours(at_most(f"{name}: ||E[x^T] - x*||^2 / ||b||^2 <= {REMAINING:g}^2 (most of "
                                       "FedAvg-active's bias b removed)", pairs.mean(), REMAINING ** 2,
                                       basis="monte_carlo", samples=pairs,
                                       note=reading.format(ESTIMATED_WEIGHTS[name])), OUR_SHARE))
            continue
        checks += [in_interval(f"{name}: E[x^T]_{j} = x*_{j}", final[:, j], x_star[j], atol=ROUNDING,
                               note=f"x* in closed form; {EXACT_LIMIT}") for j in range(problem.dim)]
    final = ctx.run(sine).final["server"]
    checks.append(trend("FedAvg over active, sine: |E[x^T] - x*| > 0 (exact moments)", sine_bias,
                        sine_bias > EXACT_ZERO, f"> 0 (beyond rounding, {EXACT_ZERO:g})", 0.0, basis="enumeration",
                        note=f"exact-moment engine; the stationary limit of the same algorithm is ||b|| = "
                             f"{scale:.3g} away from x*"))
    checks.append(ours(at_least("FedAvg over active, sine: |E[x^T] - x*| (exact moments)", sine_bias,
                                REMAINING * scale, basis="enumeration",
                                note=f"'biased' read as above the {REMAINING:g} ||b|| that the estimated-weight "
                                     "methods stay below: a separation from them"), OUR_SHARE))
    checks += [auxiliary(in_interval(f"FedAvg over active, sine: Monte Carlo E[x^T]_{j} vs exact", final[:, j],
                                     exact[j], note="kernel vs the exact-moment engine")) for j in range(problem.dim)]
    return Evidence(checks, notes=[
        f"m = 5, d = 3 quadratic (Hessian spectra in [0.3, 1], rotated per client), exact gradients, s = 1, eta_l = "
        f"{BASELINE_LR}, eta_g = 1, p = {BASELINE_P}; with s = 1 and sigma = 0 a method whose weights average to "
        "equal client weights has x* as its fixed point."],
        deviations=["F3AST uses beta = 0.01 (paper: 0.001) so that its EMA rates track p_i within the short horizon; "
                    "its budget, initial rate (1) and division by m are the digest's [U] choices (kernel docstring)."])


def _squared_bias_pairs(final: np.ndarray, x_star: np.ndarray) -> np.ndarray:
    """<x_a - x*, x_b - x*> over disjoint pairs (a, b) of independent replicas: each has mean ||E x - x*||^2."""
    d = final - x_star
    n = len(d) // 2 * 2
    return np.einsum("ij,ij->i", d[0:n:2], d[1:n:2])


def _active_weights() -> str:
    """m q_i / sum_j q_j with q_i = E[1{i in S} / |S|] = p_i E[1/(1 + S_-i)], FedAvg-over-active's effective client
    weights (exact Poisson-binomial moments)."""
    q = inverse_count_moments(BASELINE_P, 1)[0]
    return str((len(q) * q / q.sum()).round(2).tolist())
