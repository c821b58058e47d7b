"""Example 1 of seed 000 §4 (two scalar clients) and its Figure 2; digest 000 §4.

FedAvg over all clients, over active clients and with known p_i converges to the closed forms of digest §4;
Fig. 2 maps FedAvg's limit over (p1, p2); FedAWE's all-client mean is unbiased on the example while its server
model is not, and it diverges at eta_l = 0.2.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theorylab.figures import fedawe_fig2
from theorylab.checks import Check, across, at_least, auxiliary, equal, in_interval, ours, trend
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.exact.fedawe_two_client import fedawe_two_client_moments
from theorylab.exact.fedavg_moments import fedavg_moments
from theorylab.threads import one_thread

# Example 1 (seed 000 §4): two scalar clients, u = (0, 1), p = (0.9, 0.1); x* = 0.5.
EX1_P, EX1_U = (0.9, 0.1), (0.0, 1.0)
EX1_STEPS, EX1_LR, EX1_ROUNDS = 5, 0.05, 400
EX1_DEVIATION = ("Example 1 gives no step sizes; we use s = 5 local steps, eta_l = 0.05, eta_g = 1 and exact "
                 "local gradients (sigma = 0), the digest's setting (000 §4); the limit does not depend on them "
                 "while the recursion is stable.")


def _example1(ctx, kind: str, theory: float, theory_note: str) -> tuple[list[Check], float]:
    """FedAvg (``kind`` of aggregation) on Example 1: its exact E[x^T] and a Monte Carlo mean, each against
    ``theory``; returns both checks and the exact limit."""
    config = RunConfig(
        problem={"name": "scalar_quadratic", "centers": list(EX1_U)},
        participation={"name": "bernoulli", "p": list(EX1_P)},
        algorithm={"name": "fedavg", "aggregation": kind, "local_steps": EX1_STEPS, "lr": EX1_LR},
        rounds=EX1_ROUNDS, replicas=ctx.pick(2000, 20000), seed=ctx.seed, every=EX1_ROUNDS,
    )
    limit = float(fedavg_moments(config).mean[-1, 0])
    finals = ctx.run(config).final["server"][:, 0]
    return [
        equal("exact-moment engine: E[x^T], T = 400", limit, theory, atol=1e-9, basis="closed_form", note=theory_note),
        in_interval(f"Monte Carlo: mean of x^T over {len(finals)} replicas", finals, theory,
                    note="kernel run with Bernoulli participation"),
    ], limit


VARIANT_READINGS = {  # Example 1's FedAvg and its limit formula (2) are lost in the source (digest 000 §4 [U])
    "all": "FedAvg over all clients (the variant whose fixed point minimises (3))",
    "active": "FedAvg over active clients (the official code's default, Table 2's first FedAvg)",
}


@claim("fedawe.example1.fedavg_all",
       "seed 000 §4 Example 1 and eq. (3); digest 000 §4, §8 item 6",
       "On Example 1, FedAvg converges in mean to the minimiser of the biased objective (3), sum_i p_i u_i / "
       "sum_i p_i (= 0.1 for p = (0.9, 0.1)), not to x* = 0.5; decided under both readings of which FedAvg "
       "Example 1 runs (over all clients, over active clients).",
       kind="statement", where="§4, Example 1 and eq. (3)",
       quote=r"Example 1 matches [55, Theorem 1], which shows that FedAvg leads to a biased global objective (3) "
             r"under heterogeneous $p_i$ 's … \widetilde{F}(\boldsymbol{x}) \triangleq \sum_{i=1}^{m} "
             r"\frac{p_i}{\sum_{j=1}^{m} p_j} F_i(\boldsymbol{x})",
       expect="inconclusive",
       because=("depends on the reading: Example 1's FedAvg variant and its limit formula (2) are lost in the source "
                "(digest §4 [U]); FedAvg over all clients converges exactly to (3)'s minimiser 0.1, FedAvg over "
                "active clients (the official code's default) to 0.0604 (fedawe.example1.fedavg_active), so the "
                "sentence holds for one variant only"),
       defence=("The authors would say (3) is the objective of FedAvg as [55, Theorem 1] analyses it, and that Example "
                "1 only shows FedAvg to be biased, which it is under both readings (0.1 and 0.0604, both far from "
                "x* = 0.5; fedawe.fig2). Agreed: the bias stands. What stays open is which FedAvg the example and "
                "(3) describe; over active clients the limit is not (3)'s minimiser, so the verdict depends on the "
                "reading."), checks=("6",))
def example1_fedavg_all(ctx) -> Evidence:
    p, u = np.array(EX1_P), np.array(EX1_U)
    theory = float(p @ u / p.sum())
    note = "closed form sum p_i u_i / sum p_i, the minimiser of (3)"
    runs = {label: _example1(ctx, kind, theory, note)[0] for kind, label in VARIANT_READINGS.items()}
    names = ("exact-moment engine: E[x^T] = minimiser of (3), T = 400", "Monte Carlo: mean of x^T = minimiser of (3)")
    checks = [across(name, {label: pair[i] for label, pair in runs.items()}) for i, name in enumerate(names)]
    return Evidence(checks, deviations=[EX1_DEVIATION])


@claim("fedawe.example1.fedavg_active",
       "seed 000 §4 Example 1; digest 000 §4 (closed form) and §9",
       "On Example 1, FedAvg over active clients converges in mean to sum_i q_i u_i / sum_i q_i with the "
       "Poisson-binomial weights q_i = p_i E[1/(1+S_{-i})] (= 0.06044 for p = (0.9, 0.1)); this is not the "
       "minimiser 0.1 of objective (3). The closed form is the digest's derivation: a claim about the digest.",
       kind="digest", where="digest 000 §4 table and §8 item 6",
       quote=r'FedAvg over active: $\to0.06044$ (MC 0.06038). The objective-(3) limit "$(p_1u_1+p_2u_2)/(p_1+p_2)$" '
             r"holds for the *over-all* variant only.", checks=("6",))
def example1_fedavg_active(ctx) -> Evidence:
    p1, p2 = EX1_P
    q = np.array([p1 * (1 - p2 / 2), p2 * (1 - p1 / 2)])
    theory = float(q @ np.array(EX1_U) / q.sum())
    checks, limit = _example1(ctx, "active", theory, "closed form with q_1 = p_1(1-p_2/2), q_2 = p_2(1-p_1/2)")
    objective3 = float(np.array(EX1_P) @ np.array(EX1_U) / sum(EX1_P))
    gap = abs(limit - objective3)
    checks.append(trend("differs from the objective-(3) minimiser", gap, gap > 1e-3, "> 0 (by more than 1e-3)", 0.0,
                        basis="closed_form",
                        note=f"|{limit:.5f} - {objective3:.5f}|; (3) describes FedAvg over *all* clients only; the "
                             "exact limit matches its own closed form to 1e-9, so a gap above 1e-3 is no rounding"))
    return Evidence(checks, deviations=[EX1_DEVIATION], notes=[
        "The paper's equation (2) and the FedAvg variant of Example 1 are lost in the source; its text ties the "
        "example to objective (3), whose minimiser is the limit of FedAvg over *all* clients. FedAvg over *active* "
        "clients (the official code's default) converges elsewhere, to the Poisson-binomial weighted mean: the "
        "reading question of fedawe.example1.fedavg_all."])


@claim("fedawe.example1.fedavg_known_p",
       "seed 000 §4 Example 1, baseline [42]; digest 000 §4, §8 item 6",
       "On Example 1, FedAvg with known p_i (updates scaled by 1/p_i) is unbiased: E[x^t] -> (u_1+u_2)/2 = x*. The "
       "paper says nothing of this baseline on Example 1: the limit is the digest's, a claim about the digest.",
       kind="digest", where="digest 000 §4 table and §8 item 6",
       quote=r"FedAvg with known $p$: $\to0.5$ (MC 0.49994).", checks=("6",))
def example1_fedavg_known_p(ctx) -> Evidence:
    theory = float(np.mean(EX1_U))
    checks, _ = _example1(ctx, "known_p", theory, "closed form: the unweighted mean of the u_i, i.e. x*")
    return Evidence(checks, deviations=[EX1_DEVIATION])


FAR = (0.05, 0.1)  # readings of "far from x*": a bias above 5% or 10% of |u_1 - u_2|


def _most_far(values: np.ndarray, far: float) -> Check:
    """Whether more than half of the grid's limits lie further than ``far`` from x* = 0.5 (exact shares)."""
    share = float(np.mean(np.abs(values - 0.5) > far))
    return trend(f"share of the grid with |x_output - x*| > {far:g}", share, share > 0.5, "> 1/2 (most)", 0.5,
                 basis="enumeration")


@claim("fedawe.fig2",
       "seed 000 §4 Figure 2; digest 000 §4, §6.6, §8 item 6",
       "Under most choices of (p1, p2), FedAvg's limit x_output = lim E[x^t] on Example 1 is far from x* = 0.5, "
       "under each reading of which FedAvg the figure shows and of 'far' (a bias above 5% or 10% of |u_1 - u_2|), "
       "'most' read as more than half of the grid. Shown beside it, not deciding (the figure has no FedAWE panel; "
       "digest §4): FedAWE's all-client mean converges to u-bar = x* everywhere, its server model is far from x* "
       "under most (p1, p2).",
       kind="reproduction", where="§4, Figure 2 and its caption",
       quote=r"Under most of the choices of $p_1, p_2, x_{output}$ is far from $x^*$", checks=("6",))
def fig2(ctx) -> Evidence:
    data = fedawe_fig2.figure_data(ctx)
    awe = data["fedawe"]
    p1, p2 = np.meshgrid(data["p"], data["p"])
    checks = []
    for kind in fedawe_fig2.VARIANTS:
        err = float(np.abs(data[kind] - fedawe_fig2.closed_form(kind, p1, p2)).max())
        checks.append(auxiliary(equal(f"{kind}: engine fixed point vs closed form (max over grid)", err, 0.0,
                                      atol=1e-10, basis="closed_form",
                                      note="engine: general weight moments + local maps; theory: digest 000 §4 "
                                           "formulas")))
    readings = {f"{fedawe_fig2.VARIANTS[kind]}, far = bias > {far:g}": _most_far(data[kind], far)
                for kind in fedawe_fig2.VARIANTS for far in FAR}
    checks.append(across("share of the (p1, p2) grid with x_output far from x*", readings,
                         note="'most' read as more than half the grid; shares of exact limits (moment engine)"))
    ubar = float(np.mean(fedawe_fig2.CENTERS))
    checks.append(equal("FedAWE all-client mean: max over grid |lim E[xbar^t] - u-bar|",
                        float(np.abs(awe["mean"] - ubar).max()), 0.0, atol=1e-8, basis="digest",
                        note="the digest's closed form u-bar = x* (§4; equal curvatures, the echo weights re-equalise, "
                             "Prop. 1); exact staleness chain stopped once both moments moved < "
                             f"{fedawe_fig2.SETTLE:g} over 25 rounds (longest chain {awe['rounds']} rounds), truncated "
                             f"mass <= {fedawe_fig2.TRUNCATION:g}; tolerance 10x the stopping rule"))
    server = _most_far(awe["server"], FAR[0])
    checks.append(dataclasses.replace(server, name=f"FedAWE server model: {server.name}", basis="digest"))
    path = fedawe_fig2.draw(data, ctx.figure_path("fedawe-fig2"))
    return Evidence(checks, figure=str(path), deviations=[
        EX1_DEVIATION, f"grids: FedAvg p in [0.02, 0.98] ({len(data['p'])} points a side), FedAWE p in [0.1, 0.9] "
                       f"({len(awe['p'])} points; the exact chain grows like 1/(p1 p2)); the paper's grid is not "
                       "given"],
        notes=["The figure draws both FedAvg variants because the paper's variant is not recoverable, and FedAWE "
               "beside them (the same figure as `theorylab figure fedawe-fig2`).",
               "'Far' has no stated size; at stricter readings the shares fall: "
               + "; ".join(f"{kind}: " + ", ".join(f"{float(np.mean(np.abs(data[kind] - 0.5) > far)):.2f} beyond "
                                                  f"{far:g}" for far in (0.15, 0.2, 0.25))
                           for kind in fedawe_fig2.VARIANTS) + ".",
               "On the diagonal p1 = p2 FedAWE's server model is unbiased by symmetry; off it, it leans toward the "
               f"more available client (largest bias {float(np.abs(awe['server'] - ubar).max()):.3f}; unlike the "
               "limits of FedAvg and of FedAWE's mean, this one depends on eta_l s, digest §4)."])


# ----- Example 1 for FedAWE --------------------------------------------------------------------------------------
EX1_AWE_LR, EX1_AWE_ROUNDS, EX1_DIVERGENT_LR = 0.01, 300, 0.2
EX1_SERVER_MC = {0.05: 0.231, 0.01: 0.397, 0.002: 0.475}  # digest §4 table, independent numpy MC (3 decimals)


def _example1_fedawe_config(ctx, lr: float, replicas: int, rounds: int) -> RunConfig:
    return RunConfig(problem={"name": "scalar_quadratic", "centers": list(EX1_U)},
                     participation={"name": "bernoulli", "p": list(EX1_P)},
                     algorithm={"name": "fedawe", "local_steps": EX1_STEPS, "lr": lr},
                     rounds=rounds, replicas=replicas, seed=ctx.seed, every=rounds)


@claim("fedawe.example1.fedawe",
       "seed 000 §4 Example 1, §5 (FedAWE is unbiased); digest 000 §4 table, §8 item 6",
       "On Example 1 (p = (0.9, 0.1), u = (0, 1), exact local gradients), FedAWE's all-client mean converges in "
       "mean to x* = 0.5, while its server model x^t stays biased toward the more available client (bias vanishing "
       "as eta_l s -> 0); with eta_l = 0.2, s = 5 the iterates diverge. The paper runs no FedAWE on Example 1: "
       "these are the digest's limits and simulations, a claim about the digest.",
       kind="digest", where="digest 000 §4 table and §8 item 6",
       quote=r"FedAWE: $\mathbb E[\bar x^t]\to0.5$ within ~1e-4 for $\eta_l s\le0.25$ … FedAWE's server model "
             r"$x^t$ stays biased toward client 1 … FedAWE with $\eta_l=0.2$, $s=5$ diverges", checks=("6",))
@one_thread
def example1_fedawe(ctx) -> Evidence:
    ubar = float(np.mean(EX1_U))
    checks, notes = [], []
    for lr, server_mc in EX1_SERVER_MC.items():
        rounds = 3000 if lr < 0.01 else 600
        exact = fedawe_two_client_moments(EX1_P, EX1_U, lr=lr, local_steps=EX1_STEPS, rounds=rounds, every=rounds)
        checks.append(equal(f"exact chain, eta_l = {lr}: E[xbar^T], T = {rounds}", exact.mean_model[-1], ubar,
                            atol=1e-9, basis="closed_form",
                            note="closed form u-bar: with equal curvatures the stationary mean satisfies "
                                 "sum_i (E x_i - u_i) = 0 because the echo weights re-equalise (Prop. 1); exact "
                                 f"staleness chain, truncated mass {exact.truncated_mass:.1e}"))
        checks.append(equal(f"exact chain, eta_l = {lr}: server E[x^T]", exact.server_model[-1], server_mc, atol=0.005,
                            basis="digest",
                            note="digest §4's independent Monte Carlo (20k runs, 3 decimals); tolerance 0.005: that "
                                 "estimate's own sampling error on heavy-tailed paths, not only its rounding"))
    server = fedawe_two_client_moments(EX1_P, EX1_U, lr=0.05, local_steps=EX1_STEPS, rounds=600,
                                       every=600).server_model[-1]
    checks.append(ours(trend("server model bias |E[x^T] - x*| at eta_l = 0.05 (exact chain)", abs(server - ubar),
                             abs(server - ubar) > 0.05, "> (biased)", 0.05, basis="enumeration",
                             note="the server model is the average of the active clients' echoed models only"),
                       "'biased' read as above 5% of |u_1 - u_2|, as in fedawe.fig2; the digest's own values decide "
                       "above"))
    exact = fedawe_two_client_moments(EX1_P, EX1_U, lr=EX1_AWE_LR, local_steps=EX1_STEPS, rounds=EX1_AWE_ROUNDS,
                                      every=EX1_AWE_ROUNDS)
    trace = ctx.run(_example1_fedawe_config(ctx, EX1_AWE_LR, ctx.pick(2000, 20000), EX1_AWE_ROUNDS))
    for point, value in (("mean", exact.mean_model[-1]), ("server", exact.server_model[-1])):
        checks.append(auxiliary(in_interval(f"Monte Carlo, eta_l = {EX1_AWE_LR}: {point} model at T = "
                                            f"{EX1_AWE_ROUNDS}", trace.final[point][:, 0], value,
                                            note="kernel run vs the exact staleness chain at the same T")))
    checks.append(_divergence_check(ctx))
    notes.append("At eta_l = 0.05 the first moments converge (the exact chain) but the sample paths are heavy-tailed: "
                 "a Monte Carlo mean of 1000 replicas at T = 400 wanders by O(1), so the Monte Carlo check uses "
                 f"eta_l = {EX1_AWE_LR} (as in the digest's 0.5000026 row).")
    deviation = EX1_DEVIATION.replace("eta_l = 0.05", "eta_l in {0.05, 0.01, 0.002}")
    notes += ["The paper shows FedAWE's unbiasedness only through its theory (stated for the all-client mean, "
              "which the official code also evaluates); the server model x^t is biased on Example 1 (digest §4 "
              "takeaway).",
              "The paper says all runs clip gradients at 0.5, but the released code clips only FedAWE's aggregated "
              "echoed update (digest §2.1 item 1, §9); these runs follow Algorithm 1 without a clip (the kernel's "
              "clip_norm option is off), which is why eta_l = 0.2 diverges."]
    return Evidence(checks, notes=notes, deviations=[deviation])


def _divergence_check(ctx) -> Check:
    """FedAWE at eta_l = 0.2, s = 5 must be flagged by the runner's divergence detector, not end in NaN."""
    rounds = 1000
    trace = ctx.run(_example1_fedawe_config(ctx, EX1_DIVERGENT_LR, ctx.pick(100, 1000), rounds).replace(every=10))
    flags = (np.asarray(trace.diverged_at) >= 0).astype(np.float64)
    c = (1 - EX1_DIVERGENT_LR) ** EX1_STEPS
    p2 = EX1_P[1]
    k = np.arange(1, 2000)
    second = float(np.sum(p2 * (1 - p2) ** (k - 1) * (1 - k * (1 - c)) ** 2))  # E[(1 - g_k)^2], stationary staleness
    when = trace.diverged_at[trace.diverged_at >= 0]
    name = f"eta_l = {EX1_DIVERGENT_LR}, s = {EX1_STEPS}: share of replicas flagged divergent by round {rounds}"
    note = ("'diverges' read as: most replicas flagged; runner's detector (|x|^2 > 1e12 (1 + |x0|^2) or non-finite); "
            f"median round flagged {np.median(when) if len(when) else 'none'}; client 2's echo factor "
            f"1 - eta_g k (1 - (1-eta_l)^s) has E[(.)^2] = {second:.1f} >> 1 over its staleness law (closed form), so "
            "the second moment explodes although the first moments converge (exact chain)")
    return auxiliary(at_least(name, flags.mean(), 0.5, basis="monte_carlo", samples=flags, note=note))
