r"""Seed 004's exact identities (Alg. 1–4, Lemmas B.1 and D.1; digest 004 §2.1, §2.6, §3.4, §5.2 checks 1–5): the
control-variate invariant, the unbiasedness of the server's correction, Lemma B.1 by enumeration, AdaMasFL's
deterministic geometry and the scale invariances.

Everything here is exact: the kernels run on the heterogeneous quadratic under the Mode B clock
(:mod:`theorylab.validations.masfl.trajectory`), and every expectation over the sampled set is an enumeration over all
:math:`\binom NS` sets (:func:`theorylab.exact.poisson_binomial.subsets`).  Frozen buffers come out of the kernel's
own server step: on :math:`F_i(\theta) = \frac12\|\theta-b_i\|^2` with one noiseless local step from
:math:`\theta = 0`, client :math:`i` uploads :math:`\tilde c_i = -b_i`, and with :math:`\beta = 1` the new momentum is
:math:`g^{t+1} = \frac1S\sum_{i\in\mathcal S}(\tilde c_i - c_i^t) + c^t`, the quantity of Lemma B.2's unbiasedness.
"""

from __future__ import annotations

import numpy as np
import torch

from theorylab.figures.masfl_curves import async_quadratic
from theorylab.checks import at_most, auxiliary, equal, max_standardised_gap, ours
from theorylab.claims import Evidence, claim
from theorylab.config import RunConfig
from theorylab.exact.poisson_binomial import subsets
from theorylab.kernels.algorithm import Arrivals, Round
from theorylab.kernels.masfl import corrected_local_steps, masfl
from theorylab.registry import build
from theorylab.rng import Streams
from theorylab.threads import one_thread
from theorylab.validations.masfl.trajectory import rounds

SOURCE = "seed 004 Alg. 1-4, Lemma B.1, Lemma D.1; digest 004 §2.1-2.6, §3.4, §5.2"
ROUND_OFF = 1e-12


def _config(ctx, algorithm: dict, **world) -> RunConfig:
    n, s, m = ctx.pick((10, 3, 6), (100, 10, 20))
    return RunConfig(algorithm=algorithm, rounds=ctx.pick(150, 600), replicas=ctx.pick(3, 8), seed=ctx.seed,
                     **async_quadratic(n, s, m, **world))


@claim("masfl.invariant", SOURCE + " check 1", "MasFL's and AdaMasFL's server keeps c^t = (1/N) sum_i c_i^t after every "
       "step (Alg. 1 line 7, Alg. 3 line 8), under asynchrony.", kind="statement",
       where="§3.1, Stale Control Variates",
       quote=r"The global control variate,  $c^{t+1}$ , is computed as the aggregation of all local control variates "
             r"(Line 7, Algorithm 1), ensuring  $c^{t+1} = \frac{1}{N} \sum_{i=1}^{N} c_i^{t+1}$ throughout the "
             r"algorithm iteration.", checks=("1",))
@one_thread
def invariant(ctx) -> Evidence:
    checks = []
    for name in ("masfl", "adamasfl"):
        worst, scale = 0.0, 0.0
        for _, _, state in rounds(_config(ctx, {"name": name, "gamma": 0.05, "eta": 0.01}, sigma=0.5)):
            worst = max(worst, float((state["c"] - state["c_i"].mean(1)).abs().max()))
            scale = max(scale, float(state["c"].abs().max()))
        checks.append(equal(f"{name}: max_t |c^t - mean_i c_i^t|", worst, 0.0, ROUND_OFF * max(scale, 1.0),
                            basis="closed_form", note=f"every round, replica and coordinate; max |c| = {scale:.3g}; "
                                                      "tolerance: float64 round-off of the running sum"))
    return Evidence(checks, notes=["Mode B (FedBuff) clock, R2 refill, U(0, 20) delays, Gaussian gradient noise "
                                   "sigma = 0.5, so the table changes every step."])


def _frozen_step(n: int, size: int, masks: np.ndarray, table: np.ndarray, uploads: np.ndarray) -> np.ndarray:
    """The MasFL kernel's :math:`g^{t+1}` (beta = 1) for every arrived set of ``masks`` ``(R, n)``, from the table
    ``table`` and the uploads ``uploads`` (module docstring); returns ``(R, d)``."""
    d, R = uploads.shape[1], len(masks)
    problem = build("testbed", {"name": "quadratic", "hessians": np.broadcast_to(np.eye(d), (n, d, d)).tolist(),
                                "centers": (-uploads).tolist()})
    algo = masfl(beta=1.0, gamma=1.0, eta=1.0, local_steps=1)
    state = algo.init(problem, torch.zeros(R, d, dtype=torch.float64))
    c_i = torch.as_tensor(table).expand(R, -1, -1).clone()
    state.update(c_i=c_i, c=c_i.mean(1), g=torch.zeros(R, d, dtype=torch.float64))
    arrived = torch.as_tensor(masks)
    arrivals = Arrivals(arrived, torch.zeros(arrived.shape, dtype=torch.int64), arrived,
                        torch.zeros(R, dtype=torch.float64))
    rnd = Round(1, arrived, np.full(n, size / n), Streams(0, 1), arrivals=arrivals)  # t = 1: no initial draw
    return algo.step(state, rnd, problem)["g"].numpy()


def _sets(n: int, size: int) -> np.ndarray:
    masks = subsets(n)
    return masks[masks.sum(1) == size]


@claim("masfl.unbiased", SOURCE + " check 2; Alg. 1 line 5", "For fixed buffers, E_S[(1/S) sum_{i in S}(c_i^{t+1} - "
       "c_i^t) + c^t] = c^{t+1} = (1/N) sum_i c_i^{t+1} when S_t is uniform of size S without replacement.",
       kind="statement", where="§3.1, the display after Algorithm 1",
       quote=r"$$\mathbb{E}_{\mathcal{S}_t}\left[\frac{1}{S}\sum_{i\in\mathcal{S}_t}\left(\boldsymbol{c}_i^{t+1}-"
             r"\boldsymbol{c}_i^t\right)+\boldsymbol{c}^t\right] = \frac{1}{N}\sum_{i=1}^N \boldsymbol{c}_i^{t+1} = "
             r"\boldsymbol{c}^{t+1}$$", checks=("2",))
@one_thread
def unbiased(ctx) -> Evidence:
    rng = np.random.Generator(np.random.PCG64([ctx.seed, 4]))
    n, size, d = 8, 3, 3
    table, uploads = rng.normal(size=(n, d)), rng.normal(loc=1.0, size=(n, d))
    target = uploads.mean(0)
    exact = _frozen_step(n, size, _sets(n, size), table, uploads).mean(0)
    draws = ctx.pick(4000, 40000)
    picks = np.argsort(rng.random((draws, n)), axis=1)[:, :size]
    masks = np.zeros((draws, n), dtype=bool)
    np.put_along_axis(masks, picks, True, axis=1)
    sample = _frozen_step(n, size, masks, table, uploads)
    z = np.abs(sample.mean(0) - target) / (sample.std(0, ddof=1) / np.sqrt(draws))
    return Evidence([equal("mean over all C(8,3) sets vs (1/N) sum_i c_i^{t+1}", float(np.abs(exact - target).max()),
                           0.0, ROUND_OFF, basis="enumeration", note="max over coordinates, 56 sets"),
                     max_standardised_gap(f"Monte Carlo mean over {draws} uniform sets", float(z.max()), d,
                                          note="the error shrinks like 1/sqrt(draws)")])


def lemma_b1_exact(omega: np.ndarray, size: int) -> float:
    r""":math:`\|\bar\omega\|^2 + \frac{N-S}{S(N-1)}\frac1N\sum_i\|\omega_i-\bar\omega\|^2`, the exact second moment of
    a uniform size-:math:`S` subset mean (sampling without replacement; digest 004 §3.4)."""
    n, mean = len(omega), omega.mean(0)
    spread = np.sum((omega - mean) ** 2) / n
    return float(mean @ mean + (n - size) / (size * (n - 1)) * spread)


@claim("masfl.lemma_b1", "seed 004 Lemma B.1; digest 004 §3.4, §5.2 check 3", "E||(1/S) sum_{i in S} w_i||^2 <= "
       "||w_bar||^2 + (1/(SN)) sum_i ||w_i - w_bar||^2 for S uniform of size S (without replacement).",
       kind="statement", where="App. B, Lemma B.1",
       quote=r"if we sample  $S \subset \{1, \dots, N\}$  uniformly randomly such that |S| = S, then it holds that … "
             r"$$\mathbb{E}\left[\left\|\frac{1}{S}\sum_{i\in\mathcal{S}}\boldsymbol{\omega}_i\right\|^2\right] "
             r"\leq \|\overline{\boldsymbol{\omega}}\|^2 + \frac{1}{SN}\sum_{i=1}^N \|\boldsymbol{\omega}_i - "
             r"\overline{\boldsymbol{\omega}}\|^2.$$", checks=("3",))
@one_thread
def lemma_b1(ctx) -> Evidence:
    rng = np.random.Generator(np.random.PCG64([ctx.seed, 5]))
    checks = []
    for n, size in ctx.pick(((6, 2), (8, 5)), ((6, 2), (8, 5), (12, 4), (12, 11))):
        omega = rng.normal(loc=0.3, size=(n, 2))
        means = _frozen_step(n, size, _sets(n, size), np.zeros((n, 2)), omega)
        enumerated = float(np.mean(np.sum(means ** 2, axis=1)))
        mean = omega.mean(0)
        bound = float(mean @ mean + np.sum((omega - mean) ** 2) / (size * n))
        checks += [auxiliary(equal(f"N={n}, S={size}: enumeration vs exact (N-S)/(S(N-1)) form", enumerated,
                                   lemma_b1_exact(omega, size), 1e-12, basis="closed_form",
                                   note="left: the kernel's subset mean over all sets")),
                   at_most(f"N={n}, S={size}: Lemma B.1", enumerated, bound, basis="enumeration",
                           note="the lemma replaces (N-S)/(N-1) by 1")]
    return Evidence(checks)


def _geometry(ctx):
    """Largest ratios of AdaMasFL's server moves to Lemma D.1's bounds along a Mode B run."""
    gamma = 0.05
    step_ratio = stale_ratio = 0.0
    for rnd, before, after in rounds(_config(ctx, {"name": "adamasfl", "gamma": gamma, "eta": 0.01}, sigma=0.5)):
        move = torch.linalg.vector_norm(after["x"] - before["x"], dim=-1)
        step_ratio = max(step_ratio, float(move.max()) / gamma)
        arrived, tau = rnd.arrivals.arrived, rnd.arrivals.staleness
        lag = torch.linalg.vector_norm(before["x"].unsqueeze(1) - before["start_x"], dim=-1)
        stale = arrived & (tau > 0)
        if stale.any():
            stale_ratio = max(stale_ratio, float((lag[stale] / (tau[stale] * gamma)).max()))
    return step_ratio, stale_ratio


@claim("masfl.adamasfl_geometry", "seed 004 Lemma D.1, Alg. 4; digest 004 §2.4, §5.2 check 4", "AdaMasFL's local "
       "steps have length eta, its local drift (1/K) sum_k ||theta_i^k - theta^start||^2 <= eta^2 K^2 / 3, its server "
       "step ||theta^{t+1} - theta^t|| <= gamma and ||theta^t - theta^{t - tau}|| <= tau gamma.", kind="statement",
       where="§4.1 (normalised steps); App. D, Lemma D.1 and its proof",
       quote=r"$$\frac{1}{K}\sum_{k}\left\|\boldsymbol{\theta}_{i}^{t,k}-"
             r"\boldsymbol{\theta}^{t-\tau_{i}^{t}}\right\|^{2}\leq\frac{1}{3}\eta^{2}K^{2}\quad and … and "
             r"correspondingly  $\|\boldsymbol{\theta}^t - "
             r"\boldsymbol{\theta}^{t-\tau_i^t}\| \leq \sum_{\tau=t-\tau_i^t+1}^t \|\boldsymbol{\theta}^\tau - "
             r"\boldsymbol{\theta}^{\tau-1}\| \leq \tau_i^t \gamma.$", checks=("4",))
@one_thread
def adamasfl_geometry(ctx) -> Evidence:
    problem = build("testbed", async_quadratic(10, 3, 6, sigma=0.5)["problem"])
    R, K, eta = 4, 8, 0.01
    streams = Streams(ctx.seed, R)
    start = x = torch.zeros(R, 10, 4, dtype=torch.float64)
    shift = streams.normal("init", (10, 4), torch.float64)
    lengths, drift = [], torch.zeros(R, 10, dtype=torch.float64)
    for _ in range(K):  # one normalised step at a time, to see every iterate theta^k, k < K
        drift += torch.linalg.vector_norm(x - start, dim=-1) ** 2 / K
        nxt, _ = corrected_local_steps(problem, x, shift, 0.5, eta, 1, streams, None, normalise=True)
        lengths.append(torch.linalg.vector_norm(nxt - x, dim=-1))
        x = nxt
    lengths = torch.stack(lengths)
    step_ratio, stale_ratio = _geometry(ctx)
    return Evidence([equal("max | ||local step|| / eta - 1 |", float((lengths / eta - 1).abs().max()), 0.0, 1e-12,
                           basis="closed_form", note=f"{K} steps x {R} replicas x 10 clients"),
                     at_most("max local drift / (eta^2 K^2 / 3)", float(drift.max()) / (eta ** 2 * K ** 2 / 3), 1.0,
                             basis="closed_form", note="(1/K) sum_{k<K} ||theta^k - theta^0||^2; aligned steps reach "
                                                       "eta^2 (K-1)(2K-1)/6, the most any path can"),
                     at_most("max_t ||theta^{t+1} - theta^t|| / gamma", step_ratio, 1.0, basis="closed_form"),
                     at_most("max ||theta^t - theta^{t-tau}|| / (tau gamma), stale arrivals", stale_ratio, 1.0,
                             basis="closed_form")],
                    notes=["Server moves from a Mode B run (R2, U(0, 20)); local steps from the kernel's client loop, "
                           "one step per call so that every iterate is seen."])


def _scaled(problem: dict, scale: float) -> dict:
    """The explicit quadratic of ``problem`` with :math:`f\to cf`: Hessians and noise level times ``scale``."""
    q = build("testbed", problem)
    return {"name": "quadratic", "hessians": (scale * q.A).tolist(), "centers": q.u.tolist(),
            "sigma": scale * q.sigma}


ROUNDOFF = ("the invariance is exact in real arithmetic and is decided bit for bit at the power of two c = 4; at "
            "c = 3 every product rounds, and where AdaMasFL's normalised step divides by a vanishing norm the "
            "round-off is amplified over a long run (full mode: 1e-2 after its horizon), so the 1e-10 tolerance is "
            "ours")


@claim("masfl.scale_invariance", "seed 004 Thm 4.1 ('problem-parameter-free'), Alg. 3-4; digest 004 §2.6, §5.2 "
       "check 5", "AdaMasFL on c f (noise x c) follows the same trajectory as on f; MasFL on c f with (gamma, eta) "
       "follows MasFL on f with (c gamma, c eta).", kind="digest", where="digest 004 §2.6, Rescaling of f [DERIVED]",
       quote=r"AdaMasFL is **exactly invariant** to $f\to c f$ (with noise scaled by $c$).", checks=("5",))
@one_thread
def scale_invariance(ctx) -> Evidence:
    base = _config(ctx, {"name": "adamasfl", "gamma": 0.05, "eta": 0.01}, sigma=0.5).replace(every=10 ** 6)
    checks = []
    for c, noise in ((4.0, 0.5), (3.0, 0.0)):
        world = base.replace(problem={**_scaled(base.problem, 1.0), "sigma": noise})
        big = world.replace(problem=_scaled(world.problem, c))
        ada = [ctx.run(cfg).final["server"] for cfg in (world, big)]
        mas = {"name": "masfl", "gamma": 0.05, "eta": 0.01}
        small = ctx.run(world.replace(algorithm={**mas, "gamma": c * 0.05, "eta": c * 0.01})).final["server"]
        large = ctx.run(big.replace(algorithm=mas)).final["server"]
        what = f"c = {c:g}, sigma = {noise:g}"
        tol = 0.0 if c == 4.0 else 1e-10
        why = ("a power of two scales every float exactly, so the runs agree bit for bit" if c == 4.0 else
               "c = 3 rounds each product, so agreement is to round-off amplified over the run")
        pair = [equal(f"AdaMasFL, {what}: max |theta_cf - theta_f|", float(np.abs(ada[0] - ada[1]).max()), 0.0,
                      tol, basis="closed_form", note=why),
                equal(f"MasFL, {what}: max |theta_cf(gamma, eta) - theta_f(c gamma, c eta)|",
                      float(np.abs(small - large).max()), 0.0, tol, basis="closed_form", note=why)]
        checks += pair if c == 4.0 else [ours(check, ROUNDOFF) for check in pair]
    return Evidence(checks, notes=["Mode B clock (R2, U(0, 20)), final models after the whole run; the noise of c f "
                                   "is c times the noise of f (same stream)."])
