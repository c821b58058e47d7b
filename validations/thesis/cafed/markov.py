"""Thesis ch. 2 availability chains (seed 001 App. F.A-F.C, Lemma B.16, §2.5.2; digest 001 §3.1-3.3, §8 V1-V4):
the two-state chain (A.216)-(A.218), the product-chain rule (A.214), the geometric mixing bound (2.5) with C_P
(A.136) and T_P (A.137), and the exact mixing quantities of App. F.A.  The analytics are
:mod:`theorylab.participation.markov_analytics`; every check compares them with a second computation (numpy's
eigensolver, explicit matrix powers, a simulation driven by the run's random streams)."""

from __future__ import annotations

import math

import numpy as np
import torch

from theorylab.checks import at_least, at_most, auxiliary, equal, in_interval, max_standardised_gap, printed
from theorylab.claims import Evidence, claim
from theorylab.participation import markov_analytics as ma
from theorylab.participation.estimators import observe
from theorylab.participation.markov import clustered_markov, markov, thesis_spatial_setting
from theorylab.rng import Streams
from theorylab.threads import one_thread

CH2_MIX = ((0.9, 0.9), (0.1, 0.9), (0.9, 0.0), (0.1, 0.0))  # (pi, lambda) of the four classes of §2.5.1 (L860)


def _random_chains(rng, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``m`` feasible (pi, lambda), a third of them with negative eigenvalues."""
    pi = rng.uniform(0.05, 0.95, m)
    low = np.array([ma.lambda_range(p)[0] for p in pi])
    lam = np.where(rng.random(m) < 1 / 3, rng.uniform(low, 0.0), rng.uniform(0.0, 0.95, m))
    return pi, lam


def _left_law(P: np.ndarray) -> np.ndarray:
    """Stationary law from numpy's eigensolver (the left eigenvector of eigenvalue 1), independent of ours."""
    w, v = np.linalg.eig(P.T)
    law = np.real(v[:, np.argmin(np.abs(w - 1))])
    return law / law.sum()


@claim("thesis.markov.two_state",
       "seed 001 App. F.C, eqs. (A.216)-(A.218); digest 001 §3.3, §8 V1",
       "The matrix (A.216) built from (pi, lambda_2) is stochastic exactly when max{1-1/pi, 1-1/(1-pi)} <= lambda_2 "
       "< 1; its rows sum to 1, its stationary law is [1-pi, pi], its eigenvalues are {1, lambda_2}, and (A.217)-"
       "(A.218) recover (pi, lambda_2) from it.", kind="statement", where="App. F.C, eqs. (A.216)-(A.218)",
       quote=r"\lambda_2(\mathbf{P}_i) = p_0^{(k)} + p_1^{(k)} - 1. \quad (\text{A.218})", checks=("V1",))
def two_state(ctx) -> Evidence:
    grid = [(p, l) for p in (0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95)
            for l in np.linspace(ma.lambda_range(p)[0], 0.99, ctx.pick(9, 41))]
    pi, lam = (np.array(v) for v in zip(*grid))
    P = ma.two_state_matrix(pi, lam)
    back_pi, back_lam = ma.two_state_parameters(P)
    eig_gap = max(float(np.abs(np.sort(np.linalg.eigvals(Pi).real) - np.sort([1.0, l])).max()) for Pi, l in zip(P, lam))
    law_gap = max(float(np.abs(_left_law(Pi) - [1 - p, p]).max()) for Pi, p in zip(P, pi))
    step = 1e-4  # the smallest lambda on a grid whose matrix (A.216) is stochastic, against the closed form
    boundary = []
    for p in (0.05, 0.3, 0.5, 0.8):
        ls = np.arange(-1.5, 1.0, step)
        a, b = (1 - ls) * p, (1 - ls) * (1 - p)
        ok = (a >= -1e-15) & (a <= 1 + 1e-15) & (b >= -1e-15) & (b <= 1 + 1e-15)
        boundary.append(abs(float(ls[ok].min()) - ma.lambda_range(p)[0]))
    n = len(grid)
    return Evidence([
        equal("max |row sum - 1|", float(np.abs(P.sum(-1) - 1).max()), 0.0, atol=1e-15, basis="closed_form",
              note=f"{n} (pi, lambda) pairs on the feasible range, its lower edge included"),
        equal("most negative entry (clipped at 0)", max(0.0, -float(P.min())), 0.0, atol=1e-15, basis="closed_form"),
        equal("max |eigenvalues - {1, lambda_2}| (numpy.linalg.eigvals)", eig_gap, 0.0, atol=1e-12,
              basis="independent"),
        equal("max |stationary law - [1-pi, pi]| (numpy left eigenvector)", law_gap, 0.0, atol=1e-12,
              basis="independent"),
        equal("max |(A.217)-(A.218) round trip - (pi, lambda_2)|",
              float(max(np.abs(back_pi - pi).max(), np.abs(back_lam - lam).max())), 0.0, atol=1e-12,
              basis="closed_form"),
        equal("max |smallest stochastic lambda on a 1e-4 grid - max{1-1/pi, 1-1/(1-pi)}|", max(boundary), 0.0,
              atol=step, basis="digest", note="the feasible range is the digest's derivation (§3.3 [D]), not the "
                                              "thesis'; pi in {0.05, 0.3, 0.5, 0.8}; lambda < 1 keeps the chain "
                                              "irreducible (lambda = 1 is the identity)"),
    ])


@claim("thesis.markov.product_chain",
       "seed 001 App. F.B, Def. F.1, Props F.1-F.4, eq. (A.214); Ch. 2 §2.5.2 spatial correlation (L885, L899); "
       "digest 001 §3.2-3.3, §8 V2",
       "For independent clients the aggregate chain is the Kronecker product of their chains: its stationary law is "
       "the Kronecker product of theirs, its eigenvalues are the products of theirs, and its second largest "
       "eigenvalue modulus is max_i |lambda_2(P_i)| (so lambda(P) = max_i lambda(P_i)). With clusters sharing a "
       "chain, lowering the aggregate eigenvalue needs all clients of the most correlated cluster excluded.",
       kind="statement", where="App. F.B, Propositions F.1-F.4, eq. (A.214); §2.5.2, 'CA-Fed with Spatial Correlation'",
       quote=r"To reduce the eigenvalue of the aggregate Markov chain, CA-Fed needs to exclude all clients in the "
             r"cluster $\bar{c} = \arg \max_{c \in \mathcal{C}} \lambda_c$. … Proposition F.1. The stationary "
             r"distribution of the Markov chain defined by $\tilde{\mathbf{P}} = \mathbf{P}_1 \otimes \mathbf{P}_2$ "
             r"is the Kronecker product $\tilde{\boldsymbol{\rho}} = \boldsymbol{\pi}_1 \otimes \boldsymbol{\pi}_2$.",
       checks=("V2",))
@one_thread
def product_chain(ctx) -> Evidence:
    rng = np.random.Generator(np.random.PCG64([ctx.seed, 214]))
    checks = []
    for m in ctx.pick((3, 5, 8), (3, 5, 8, 10)):
        pi, lam = _random_chains(rng, m)
        mats = ma.two_state_matrix(pi, lam)
        P, rho = ma.product_chain(mats)
        eig = np.linalg.eigvals(P)
        products = np.sort([np.prod(c) for c in np.array(np.meshgrid(*[(1.0, l) for l in lam])).reshape(m, -1).T])
        lb2 = float(np.sort(np.abs(eig))[-2])
        checks += [
            equal(f"m = {m}: lambda_bar_2 of the 2^m-state product (numpy) vs max_i |lambda_i| (A.214)", lb2,
                  ma.product_second_modulus(lam), atol=1e-10, basis="independent",
                  note=f"random feasible (pi, lambda), lambda in [{lam.min():.3f}, {lam.max():.3f}]"),
            equal(f"m = {m}: lambda(P) vs max_i lambda(P_i)", ma.thesis_lambda(lb2),
                  max(ma.thesis_lambda(abs(l)) for l in lam), atol=1e-10, basis="independent"),
            equal(f"m = {m}: max |spectrum - products of the factors' eigenvalues| (Prop. F.3)",
                  float(np.abs(np.sort(eig.real) - products).max() + np.abs(eig.imag).max()), 0.0, atol=1e-9,
                  basis="independent", note="eigenvalues of a 2^m matrix by numpy, sorted"),
            equal(f"m = {m}: max |stationary law (numpy) - Kronecker product of [1-pi_i, pi_i]| (Prop. F.1)",
                  float(np.abs(_left_law(P) - rho).max()), 0.0, atol=1e-12, basis="independent"),
        ]
    setting = thesis_spatial_setting()
    cluster_pi, cluster_lam = np.array(setting["pi"]), np.array(setting["lam"])
    members = np.array(setting["clusters"])

    def aggregate(kept: np.ndarray) -> float:
        """lambda_bar_2 of the chain the kept clients follow: the product over the clusters they belong to."""
        present = np.unique(members[kept])
        P, _ = ma.product_chain(ma.two_state_matrix(cluster_pi[present], cluster_lam[present]))
        return ma.second_modulus(P)

    everyone = np.ones(len(members), dtype=bool)
    partial, whole = everyone.copy(), everyone.copy()
    partial[np.flatnonzero(members == 9)[:9]] = False  # nine of cluster 9's ten clients
    whole[members == 9] = False
    checks += [
        equal("spatial setting: lambda_bar_2 of the 10-cluster chain (numpy, 1024 states)", aggregate(everyone),
              0.9, atol=1e-10, basis="closed_form", note="clusters 5-9 have lambda_c = c/10 (L899)"),
        equal("spatial setting: excluding 9 of the 10 clients of cluster 9", aggregate(partial), 0.9, atol=1e-10,
              basis="closed_form", note="the last client still follows cluster 9's chain"),
        equal("spatial setting: excluding all of cluster 9", aggregate(whole), 0.8, atol=1e-10, basis="closed_form",
              note="the reduced chain over the kept clients (digest §3.2; errata 7: the printed index set is the "
                   "excluded one)"),
    ]
    process = clustered_markov(**setting)
    return Evidence(checks, notes=[f"clustered_markov reports lambda_bar_2 = {process.lambda_bar:g} for the setting."])


@claim("thesis.markov.mixing_bound",
       "seed 001 Ch. 2 eq. (2.5), Lemma B.16, eqs. (A.136)-(A.137) (from Sun et al. 2018, Lemma 1); digest 001 "
       "§3.1-3.2, §8 V3",
       "max_ij |[P^t]_ij - rho_j| <= C_P lambda(P)^t for t >= T_P, with C_P of (A.136), T_P of (A.137) (0 for a "
       "diagonalizable chain) and lambda(P) = (lambda_bar_2 + 1)/2.", kind="statement",
       where="§2.3, eq. (2.5); App. B, Lemma B.16, (A.136)-(A.137)",
       quote=r"$$\max_{i,j \in [M]} \left| [\mathbf{P}^t]_{i,j} - \rho_j \right| \leq C_P \cdot \lambda(\mathbf{P})^t, "
             r"\quad \text{for } t \geq T_P, \quad (5)$$", checks=("V3",))
def mixing_bound(ctx) -> Evidence:
    rounds = ctx.pick(200, 400)
    mix = np.array(CH2_MIX * 2)
    chains = {"2 states (pi, lambda) = (0.1, 0.9)": mix[1:2], "8 states: Ch. 2 classes 1-3": mix[:3],
              "64 states: the Ch. 2 classes and two more": np.vstack([mix[:4], [[0.5, -0.7], [0.3, 0.4]]])}
    checks, ratios = [], {}
    for name, params in chains.items():
        mats = ma.two_state_matrix(params[:, 0], params[:, 1])
        P, rho = ma.product_chain(mats)
        log_c = math.log(float(np.prod(ma.two_state_c_p(params[:, 0])))) + 0.5 * math.log(len(P) - 1)
        const = ma.mixing_constants(P)
        t = np.arange(rounds)
        gap = ma.max_entry_gap(P, rounds, rho)
        ratios[name] = float((gap / (math.exp(log_c) * const.lam ** t)).max())
        checks += [
            at_most(f"{name}: max over t < {rounds} of max_ij |P^t - 1 rho^T| / (C_P lambda^t)", ratios[name], 1.0,
                    basis="enumeration", note=f"C_P = {math.exp(log_c):.4g} in closed form "
                                              "(2 sqrt 2 sqrt(pi^2+(1-pi)^2) per client, sqrt(M-1)), T_P = 0"),
            at_most(f"{name}: the same with C_P from numpy's eigenbasis of the whole chain",
                    float((gap / (const.c_p * const.lam ** t)).max()), 1.0, basis="enumeration",
                    note=f"C_P = {const.c_p:.4g}: within a repeated eigenvalue numpy picks another basis, so C_P may "
                         "differ from the Kronecker basis' value; the bound holds for every basis"),
            auxiliary(equal(f"{name}: ln C_P by the log-space Kronecker rule over numpy's per-client eigenbases vs "
                            "the closed form", ma.log_c_p_product(mats), log_c, atol=1e-9, basis="independent",
                            note="unit-norm eigenvectors (markov_analytics docstring)")),
            auxiliary(equal(f"{name}: T_P (A.137)", const.t_p, 0.0, atol=0.0, basis="closed_form",
                            note="every Jordan block has size one (the chain is diagonalizable)")),
        ]
    defective = np.array([[0, 0, 1], [1 / 8, 0, 7 / 8], [0, 1 / 2, 1 / 2]])
    const = ma.mixing_constants(defective)
    horizon = 50  # C_P lambda^t stays above 1e-9 here, far above the rounding floor (1e-16) of the left side
    t = np.arange(const.t_p, horizon)
    ratio = float((ma.max_entry_gap(defective, horizon)[const.t_p:] / (const.c_p * const.lam ** t)).max())
    checks.append(at_most(f"a defective 3-state chain: max over T_P <= t < {horizon} of the same ratio", ratio, 1.0,
                          basis="enumeration", note=f"eigenvalue -1/4 in a Jordan block of size 2; exact Jordan form "
                                                    f"(sympy); C_P = {const.c_p:.4g}, T_P = {const.t_p} by (A.137) as "
                                                    "printed"))
    log_c100 = ma.log_c_p_product(ma.two_state_matrix(*np.repeat(mix[:4], 25, axis=0).T))
    return Evidence(checks, notes=[
        f"Largest ratios: {', '.join(f'{k}: {v:.3g}' for k, v in ratios.items())} (the digest's scratch run saw "
        "<= 0.35 for the 2-state chain and <= 0.03 for an 8-state product).",
        f"For the thesis' N = 100 clients (25 per class) ln C_P = {log_c100:.2f} "
        f"(C_P = 10^{log_c100 / math.log(10):.1f}, beyond float64), so the bound is only usable in log space."],
        deviations=["The defective chain is ours (the thesis' chains are all diagonalizable); it exercises (A.137), "
                    "whose typography the digest calls garbled, as printed."])


@claim("thesis.markov.mixing_time",
       "seed 001 App. F.A (Levin-Peres bounds), App. F.C, Ch. 2 §2.5.2 (hitting time, L883); digest 001 §3.1, §3.3, "
       "§8 V4",
       "A two-state chain has d(t) = |lambda_2|^t max(pi, 1-pi) and the exact t_mix(eps) that follows; "
       "(t_rel - 1) ln(1/(2 eps)) <= t_mix(eps) <= ln(1/(eps rho_min)) t_rel; the expected hitting time of the "
       "slowest Ch. 2 chain, max_i 1/((1-lambda_i) pi_i), is 100.", kind="statement",
       where="App. F.A (Levin-Peres bounds); §2.5.2, 'Estimation of the clients' availability and correlation'",
       quote=r"which is given by $\max_{i \in \mathcal{N}} \frac{1}{(1-\lambda_i)\pi_i} = 100$. … "
             r"$(t_{\text{rel}} - 1) \log\left(\frac{1}{2\varepsilon}\right) \leq t_{\text{mix}}(\varepsilon) \leq "
             r"\log\left(\frac{1}{\varepsilon \rho_{\min}}\right) t_{\text{rel}}$", checks=("V4",))
@one_thread
def mixing_time(ctx) -> Evidence:
    rng = np.random.Generator(np.random.PCG64([ctx.seed, 156]))
    pi, lam = _random_chains(rng, ctx.pick(12, 40))
    rounds = 80
    tv_gap = max(float(np.abs(ma.worst_tv(Pi, rounds) - ma.two_state_tv(p, l, np.arange(rounds))).max())
                 for Pi, p, l in zip(ma.two_state_matrix(pi, lam), pi, lam))
    checks = [equal("max |d(t) by matrix powers - |lambda|^t max(pi, 1-pi)|", tv_gap, 0.0, atol=1e-13,
                    basis="digest", note=f"{len(pi)} random chains, t < {rounds}; the two-state closed form is the "
                                         "digest's (§3.3 [D])")]
    for eps in (0.25, 0.01):
        exact = ma.two_state_mixing_time(pi, lam, eps)
        powered = [ma.mixing_time(Pi, eps) for Pi in ma.two_state_matrix(pi, lam)]
        checks.append(equal(f"eps = {eps}: max |t_mix closed form - t_mix by powering|",
                            float(np.abs(exact - powered).max()), 0.0, atol=0.0, basis="digest",
                            note="the closed form is the digest's (§3.3 [D])"))
    for name, params in {"2 states (0.1, 0.9)": np.array([[0.1, 0.9]]),
                         "16 states: the four Ch. 2 classes": np.array(CH2_MIX)}.items():
        P, rho = ma.product_chain(ma.two_state_matrix(params[:, 0], params[:, 1]))
        t_rel = float(ma.relaxation_time(ma.second_modulus(P)))
        for eps in (0.25, 0.01):
            t_mix = ma.mixing_time(P, eps, rho)
            low, high = ma.levin_peres_bounds(t_rel, eps, rho.min())
            checks += [at_least(f"{name}, eps = {eps}: t_mix >= (t_rel - 1) ln(1/(2 eps))", t_mix, float(low),
                                basis="enumeration", note="t_mix by powering the chain"),
                       at_most(f"{name}, eps = {eps}: t_mix <= ln(1/(eps rho_min)) t_rel", t_mix, float(high),
                               basis="enumeration", note="reversible chain (products of two-state chains are)")]
    hitting = float(ma.activation_time(*np.array(CH2_MIX).T).max())
    checks.append(printed("max_i 1/((1-lambda_i) pi_i) over the Ch. 2 classes", hitting, "100",
                          note="printed at L883"))
    checks += _simulated(ctx)
    return Evidence(checks)


def _simulated(ctx) -> list:
    """Monte Carlo from fixed starts: P(active at t | start) against pi + lambda^t (start - pi), whose worst gap
    over starts is d(t); and the inactive sojourns of the slowest chain against 1/((1-lambda) pi)."""
    replicas, rounds = ctx.pick(400, 2000), 30
    pi, lam = np.array([0.1, 0.9, 0.3, 0.6]), np.array([0.9, 0.9, -0.4, 0.5])
    gaps = []
    for start in (0.0, 1.0):
        process = markov(pi, lam, start=[start] * 4)
        masks = torch.stack([m for _, m in observe(process, rounds, Streams(ctx.seed + int(start), replicas))])
        freq = masks.double().mean(1).numpy()
        law = np.stack([process.probabilities(t) for t in range(rounds)])
        gaps.append(np.abs(freq - law) / np.sqrt(np.maximum(law * (1 - law), 1e-12) / replicas))
    checks = [auxiliary(max_standardised_gap("P(active at t | start) vs pi + lambda^t (start - pi), t < 30, both "
                                             "starts", float(np.max(gaps)), 2 * rounds * 4,
                                             note=f"{replicas} replicas per start; the worst start's gap is d(t): the "
                                                  "simulator against the two-state law"))]
    slow = markov([0.1], [0.9])
    series = torch.stack([m[:, 0] for _, m in observe(slow, ctx.pick(4000, 20000), Streams(ctx.seed, 16))]).numpy()
    sojourns = ma.inactive_sojourns(series)
    checks.append(in_interval("mean inactive sojourn of the (0.1, 0.9) chain vs 1/((1-lambda) pi)", sojourns,
                              float(ma.activation_time(0.1, 0.9)[0]),
                              note=f"{len(sojourns)} complete inactive runs (i.i.d. geometric by the strong Markov "
                                   "property) of 16 simulated traces"))
    return checks
