"""Lemma 2 of seed 000 (proof App. E): the staleness moments E[t - tau_i(t)] and E[(t - tau_i(t))^2]; digest 000
§3.2."""

from __future__ import annotations

import numpy as np

from theorylab.bounds.staleness import lemma2_bounds, staleness_moments, staleness_product_formula, stationary_staleness
from theorylab.checks import at_most, auxiliary, equal, max_standardised_gap
from theorylab.claims import Evidence, claim
from theorylab.participation.base import availability_bounds
from theorylab.participation.bernoulli import bernoulli
from theorylab.rng import Streams
from theorylab.staleness import echo_multiplier, initial_last_active, update_last_active
from theorylab.threads import one_thread

LEMMA2_BASE = (0.15, 0.3, 0.5, 0.7, 0.9)


def _staleness_samples(process, rounds: int, replicas: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo ``t - tau_i(t)`` for ``t = 0..rounds``: array ``(rounds + 1, replicas, m)`` and the law table."""
    streams = Streams(seed, replicas)
    tau = initial_last_active(replicas, process.n_clients)
    state = process.init(replicas, streams)
    out = [echo_multiplier(tau, 0).numpy()]
    for t in range(rounds):
        state, active = process.draw(state, t, streams)
        tau = update_last_active(tau, active, t)
        out.append(echo_multiplier(tau, t + 1).numpy())
    return np.stack(out).astype(np.float64), np.stack([process.probabilities(t) for t in range(rounds)])


@claim("fedawe.lemma2",
       "seed 000 Lemma 2 (proof App. E); digest 000 §3.2, §8 item 5",
       "Under A1, E[t - tau_i(t)] <= 1/delta and E[(t - tau_i(t))^2] <= 2/delta^2 for all t; the exact moments "
       "follow the product formula of the proof (stationary p: (1-(1-p)^{t+1})/p and -> (2-p)/p^2, digest §3.2).",
       kind="statement", where="§6.2, Lemma 2 (proof App. E)",
       quote=r"It holds for $t \geq 0$ that $\mathbb{E}[t - \tau_i(t)] \leq 1/\delta$ and "
             r"$\mathbb{E}[(t - \tau_i(t))^2] \leq 2/\delta^2$", checks=("5",))
@one_thread
def lemma2(ctx) -> Evidence:
    rounds, replicas = ctx.pick(60, 200), ctx.pick(1000, 5000)
    checks = []
    for p in (0.1, 0.3):
        first, second = staleness_moments(np.full((rounds, 1), p))
        closed = stationary_staleness(p, rounds)
        gap = max(abs(first[-1, 0] - closed[0]), abs(second[-1, 0] - closed[1]))
        checks.append(auxiliary(equal(f"stationary p = {p}: recursion vs closed forms at t = {rounds}", gap, 0.0,
                                      atol=1e-10, basis="closed_form",
                                      note="(1-(1-p)^(t+1))/p and sum_n (2n-1)(1-p)^(n-1); "
                                           f"limit (2-p)/p^2 = {(2 - p) / p ** 2:.4f}")))
    for dynamics in ("stationary", "staircase", "sine"):
        process = bernoulli(list(LEMMA2_BASE), dynamics=dynamics)
        samples, table = _staleness_samples(process, rounds, replicas, ctx.seed)
        first, second = staleness_moments(table)
        product = staleness_product_formula(table[:, 0], rounds)
        gap = max(abs(first[-1, 0] - product[0]), abs(second[-1, 0] - product[1]))
        checks.append(auxiliary(equal(f"{dynamics}: recursion vs Lemma 2's product formula (client 0, t = {rounds})",
                                      gap, 0.0, atol=1e-10, basis="closed_form",
                                      note="two exact computations of the same moments: the recursion against the "
                                           "proof's product formula")))
        z = _max_z(samples, first, second)
        checks.append(auxiliary(max_standardised_gap(
            f"{dynamics}: Monte Carlo vs exact, max |z| over t, clients, both moments", z,
            2 * samples.shape[0] * samples.shape[2],
            note=f"{replicas} replicas of the registered bernoulli process, t = 0..{rounds}")))
        delta, _ = availability_bounds(process, rounds)
        b1, b2 = lemma2_bounds(delta)
        checks.append(at_most(f"{dynamics}: max_t,i E[t - tau_i(t)] <= 1/delta", first.max(), b1,
                              basis="closed_form", note=f"exact moments; delta = {delta:.3f}"))
        checks.append(at_most(f"{dynamics}: max_t,i E[(t - tau_i(t))^2] <= 2/delta^2", second.max(), b2,
                              basis="closed_form", note=f"exact moments; delta = {delta:.3f}"))
    return Evidence(checks, notes=[
        f"Base probabilities {LEMMA2_BASE}. Under the interleaved sine some p_i^t = 0 (delta = 0): Lemma 2 gives "
        "no bound and a never-available client's staleness is exactly t + 1."])


def _max_z(samples: np.ndarray, first: np.ndarray, second: np.ndarray) -> float:
    """Largest |MC mean - exact| / standard error over rounds, clients and the two moments (t >= 1)."""
    z = 0.0
    for power, exact in ((1, first), (2, second)):
        values = samples[1:] ** power
        se = values.std(1, ddof=1) / np.sqrt(values.shape[1])
        gap = np.abs(values.mean(1) - exact[1:])
        if np.any(gap[se == 0] > 1e-9):  # a constant sample must equal the exact value
            return float("inf")
        z = max(z, float(np.max(gap[se > 0] / se[se > 0], initial=0.0)))
    return z
