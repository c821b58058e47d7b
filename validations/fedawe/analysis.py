"""The analysis of seed 000 (§5, App. F-G) on a d = 10, m = 10 quadratic: its exact constants, the per-run terms of
the proofs, and Definition 1's auxiliary recursion (eqs. (6)-(8), (18)-(19)); digest 000 §2.3, §3.2.

The setup here is shared by :mod:`theorylab.validations.fedawe.lemmas` and :mod:`theorylab.validations.fedawe.theorem1`.
"""

from __future__ import annotations

import numpy as np

from theorylab.testbeds.heterogeneity import a4_beta2_min, a4_zeta2
from theorylab.bounds.fedawe import Constants, condition11
from theorylab.bounds.fedawe_terms import fedawe_terms
from theorylab.checks import equal
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.mixing import rho_schedule
from theorylab.participation.base import availability_bounds
from theorylab.registry import build
from theorylab.threads import one_thread

ANALYSIS_PROBLEM = {"name": "random_quadratic", "n_clients": 10, "dim": 10, "seed": 1, "mu": 0.5, "L": 1.0,
                    "sigma": 0.5, "spread": 1.0}
ANALYSIS_PARTICIPATION = {"name": "bernoulli", "p": np.linspace(0.3, 0.9, 10).round(4).tolist(), "dynamics": "sine"}
ANALYSIS_STEPS, ANALYSIS_L = 5, 1.0  # L = 1 bounds every Hessian's spectrum (drawn in [0.5, 1]); Cor. 3 needs L >= 1
ANALYSIS_NOTE = ("d = 10, m = 10 quadratic (Hessian spectra in [0.5, 1], rotated per client, u_i ~ N(0, I)), Gaussian "
                 "noise sigma = 0.5, Bernoulli sine availability with base p in [0.3, 0.9], s = 5; "
                 "beta^2 = 2 beta^2_min and the tight zeta^2(beta^2) of A4 (theorylab.testbeds.heterogeneity), "
                 "exact rho = max_t lambda_2(M^(t)).")
_TERMS_CACHE: dict[str, dict] = {}


def analysis_constants() -> Constants:
    """FedAWE's constants of the analysis testbed, all exact."""
    q = build("testbed", ANALYSIS_PROBLEM)
    process = build("participation", ANALYSIS_PARTICIPATION)
    beta2 = 2.0 * a4_beta2_min(q)
    delta, delta_max = availability_bounds(process, 20)  # period 20
    return Constants(L=ANALYSIS_L, sigma2=q.sigma2, beta2=beta2, zeta2=a4_zeta2(q, beta2), delta=delta,
                     delta_max=delta_max, rho=float(rho_schedule(process, 20).max()), m=q.n_clients, s=ANALYSIS_STEPS)


def analysis_terms(ctx, lr: float, rounds: int, replicas: int, participation=None) -> dict[str, np.ndarray]:
    """:func:`theorylab.bounds.fedawe_terms.fedawe_terms` of a FedAWE run on the analysis testbed (cached per
    process)."""
    config = RunConfig(problem=ANALYSIS_PROBLEM, participation=participation or ANALYSIS_PARTICIPATION,
                       algorithm={"name": "fedawe", "local_steps": ANALYSIS_STEPS, "lr": lr}, rounds=rounds,
                       replicas=replicas, seed=ctx.seed)
    key = config.key()
    if key not in _TERMS_CACHE:
        _TERMS_CACHE[key] = fedawe_terms(config)
    return _TERMS_CACHE[key]


def steps_note(conditions: dict) -> str:
    return "; ".join(f"{name}: {value:.3g} <= {threshold:.3g} {'ok' if ok else 'FAILS'}"
                     for name, (value, threshold, ok) in conditions.items())


def lemma6_lr(c: Constants) -> float:
    """The largest eta_l (eta_g = 1) meeting Lemma 6's two conditions."""
    return min(c.delta / (20 * c.s * c.L), c.delta * c.gap / (10 * c.s * c.L * (np.sqrt(c.rho) + 1)))


def condition11_lr(c: Constants) -> float:
    """The largest eta_l (eta_g = 1) meeting condition (11)."""
    return min(threshold for _, threshold, _ in condition11(c, 1.0, 1.0).values())


@claim("fedawe.aux_recursion",
       "seed 000 Definition 1, eqs. (6)-(8), (18)-(19), Proposition 4; digest 000 §2.3, §8 item 7",
       "The auxiliary sequence of Definition (6), z_i^t = x_i^t - eta_l eta_g s (t - tau_i(t) - 1) grad F_i(x_i^t), "
       "obeys the matrix recursion Z^(t+1) = (Z^(t) - eta_l eta_g G~^t) W^(t) with G~ of (19) built from the run's own "
       "stochastic gradients, at every round (including empty rounds).",
       kind="statement", where="§6.2, Definition 1, eq. (6), eq. (10); App. C, eq. (19)",
       quote=r"\boldsymbol{z}_{i}^{t} \triangleq \boldsymbol{x}_{i}^{t} - \eta_{l}\eta_{g}s(t - \tau_{i}(t) - 1)"
             r"\nabla F_{i}(\boldsymbol{x}_{i}^{\tau_{i}(t)+1}) … \left( \boldsymbol{Z}^{(t-1)} - \eta_l \eta_g "
             r"\widetilde{\boldsymbol{G}}^{(t-1)} \right) W^{(t-1)} … = \mathbb{1}_{\{i \in \mathcal{A}^{t}\}} "
             r"(t - \tau_{i}(t)) \sum_{r=0}^{s-1} \left( \nabla \ell_{i}(\boldsymbol{x}_{i}^{(t,r)}) - \nabla "
             r"F_{i}(\boldsymbol{x}_{i}^{t}) \right) + s \nabla F_{i}(\boldsymbol{x}_{i}^{t})", checks=("7",))
@one_thread
def aux_recursion(ctx) -> Evidence:
    checks = []
    for label, participation, lr in (
            ("sine availability, eta_l = 0.018", ANALYSIS_PARTICIPATION, 9 / (100 * ANALYSIS_STEPS * ANALYSIS_L)),
            ("rare availability p = 0.15 (20% empty rounds), eta_l = 0.05",
             {"name": "bernoulli", "p": [0.15] * 10}, 0.05)):
        terms = analysis_terms(ctx, lr, ctx.pick(200, 600), ctx.pick(8, 32), participation)
        gap, scale = float(terms["recursion_gap"].max()), float(terms["z_scale"].max())
        checks.append(equal(f"{label}: max_t,i,r |z_recursion - z_definition| / max |z|", gap / scale, 0.0, atol=1e-12,
                            basis="independent",
                            note=f"floating-point identity (digest §8 item 7); max |z| = {scale:.3g}; the recursion "
                                 "and Definition (6) compute z two ways from the same run"))
    return Evidence(checks, notes=[ANALYSIS_NOTE,
                                   "Proposition 4 follows: for i in A^t, z_i^{t+1} = x_i^{t+1} (t - tau = 1)."])
