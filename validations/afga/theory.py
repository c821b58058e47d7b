r"""Seed 002 Thm 4.6 and D.3 hypotheses, App. E eqs. 25 and 30–32, App. F Lemma F.6, App. B Table 9: the theory's
conditions, checked as algebra and against the paper's own experimental settings (digest 002 §2.2–2.6, §3.1–3.2,
§5 V8, §6 items 1, 8, 9, 11).

Calculators: :mod:`theorylab.bounds.afga`; :math:`\rho` of the topologies: :mod:`theorylab.topology`.

* eqs. 30–32: :math:`\rho_{\max}\le\frac m{m+n}` ⇒ :math:`\frac{\rho_{\max}^2}{1-\rho_{\max}}\le\frac{m^2}{n^2}` ⇒
  :math:`\frac{n(n-m)}{m^2(n-1)}H_{\mathcal I,\rho}\rho_{\max}^2\le\frac1n`; both sides increase in
  :math:`\rho_{\max}`, so each implication is decided at the largest :math:`\rho_{\max}` its premise allows
  (eq. 31's root :math:`\rho^\star = \frac{-q+\sqrt{q^2+4q}}2`, :math:`q = m^2/n^2`).
* Lemma F.6 with :math:`K = 1` is an identity under uniform sampling without replacement (inclusion
  :math:`\frac mn`, pairs :math:`\frac{m(m-1)}{n(n-1)}`); for :math:`K>1` the right side exceeds the left by
  :math:`(K-1)q\sum\|y\|^2-\frac qn\sum_{k\ne l}\langle Y_k,Y_l\rangle\ge0` (:math:`q = \frac{m(n-m)}{n(n-1)}`,
  :math:`Y_k = \sum_iy^{k,i}`), zero when all :math:`y^{k,i}` are equal.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from theorylab.bounds.afga import (c0, c_beta_eta, eq25_step_limit, eq27_step_limit, eq30, eq31, global_lr_schedule,
                                   lemma_f6_bound, local_lr_schedule, rho_threshold, smoothness_step_limit)
from theorylab.checks import at_most, equal, no_power, printed, trend
from theorylab.claims import Evidence, claim
from theorylab.registry import build

THEOREM = "seed 002 Thm 4.6, Thm D.3, App. E eqs. (30)-(32); digest 002 §2.4"
GRID_N = range(2, 201)
GRID_I = (1, 2, 24, 100)


def _eq31_root(m: int, n: int) -> float:
    q = (m / n) ** 2
    return (-q + math.sqrt(q * q + 4 * q)) / 2


def _largest_rho(condition) -> float:
    """The largest rho in [0, 1) with ``lhs <= rhs`` for ``condition(rho) -> (lhs, rhs)`` increasing in rho."""
    lo, hi = 0.0, 1.0 - 1e-12
    for _ in range(60):
        mid = (lo + hi) / 2
        lhs, rhs = condition(mid)
        lo, hi = (mid, hi) if lhs <= rhs else (lo, mid)
    return lo


@claim("afga.condition_chain", THEOREM,
       "rho_max <= m/(m+n) (eq. 32) implies eq. 31, rho_max^2/(1 - rho_max) <= m^2/n^2, which implies eq. 30, "
       "n(n-m)/(m^2(n-1)) H rho_max^2 <= 1/n, for every 1 <= m <= n and every I.", kind="statement")
def condition_chain(ctx) -> Evidence:
    r31, r30, cases = 0.0, 0.0, 0
    for n in GRID_N:
        for m in range(1, n + 1):
            lhs, rhs = eq31(m, n, rho_threshold(m, n))
            r31 = max(r31, lhs / rhs)
            for I in GRID_I:
                lhs, rhs = eq30(m, n, I, _eq31_root(m, n))
                r30, cases = max(r30, lhs / rhs), cases + 1
    a, b = eq30(5, 50, 24, rho_threshold(5, 50))
    widest = _largest_rho(lambda r: eq30(5, 50, 24, r))
    checks = [
        at_most("eq. 32 => eq. 31: max lhs/rhs of eq. 31 at rho = m/(m+n)", r31, 1.0, basis="enumeration",
                note=f"every 1 <= m <= n <= {GRID_N[-1]}; closed form of the ratio: n/(m+n)"),
        at_most("eq. 31 => eq. 30: max lhs/rhs of eq. 30 at eq. 31's root", r30, 1.0 + 1e-12, basis="enumeration",
                note=f"{cases} cases (n <= {GRID_N[-1]}, all m, I in {GRID_I}); with H = 1/(1 - rho) the ratio is "
                     "(n - m)/(n - 1): exactly 1 at m = 1, so the bound carries 1e-12 of float rounding"),
        at_most("Setting 2 (N = 50, M = 5, I = 24): eq. 30 at rho = 5/55", a, b, basis="closed_form"),
    ]
    notes = [f"The chain is only sufficient: at N = 50, M = 5, I = 24 eq. 30 itself allows rho up to {widest:.4f} "
             f"(bisection), against eq. 32's {5 / 55:.4f}. The algebra matches the digest's check 2mn >= m + n."]
    return Evidence(checks, notes=notes)


SETTINGS = (  # (label, rho of the paper's default ring, sampled m, clients n): digest §2.6
    ("AFGA S1 ring(100), M = 5", 100, 5, 100), ("AFGA S2 ring(50), M = 5", 50, 5, 50),
    ("CAFGA S1 ring(20) clusters, m = 1", 20, 1, 20), ("CAFGA S2 ring(10) clusters, m = 1", 10, 1, 10),
    ("CAFGA S3 ring(20) clusters, m = 2", 20, 2, 20), ("CAFGA S4 ring(10) clusters, m = 2", 10, 2, 10))
PRINTED_OTHERS = (("AFGA S2 'random' (printed 0.455)", 0.455, 5, 50),
                  ("CAFGA S2 'random' (printed rho_max 0.766)", 0.766, 1, 10),
                  ("CAFGA S2 'unbalanced FC' (printed rho_max 0.335)", 0.335, 1, 10))


@claim("afga.experiments_topology_condition", "seed 002 §6, Fig. 1, Thm 4.6, Thm D.3; digest 002 §0.3, §2.6, §6 "
       "item 11", "The paper's experiments run inside Theorem 4.6 / D.3: their topologies satisfy rho <= M/(M+N) "
       "(rho_max <= m/(m+n) per cluster).", kind="scope", expect="violated",
       because="only W = J satisfies it: the default ring has rho = 0.99474 at N = 50 against M/(M+N) = 0.0909, and "
               "every other printed topology (0.455, 0.766, 0.335, 0.873) is above its threshold too, so the "
               "theorems' topology hypothesis fails in every reported experiment but the fully-connected one")
def experiments_topology_condition(ctx) -> Evidence:
    checks = []
    for label, ring_n, m, n in SETTINGS:
        rho = build("topology", {"name": "ring", "n": ring_n}).rho
        checks.append(at_most(f"{label}: rho <= m/(m+n)", rho, rho_threshold(m, n), basis="closed_form",
                              note="rho of ring(n) with self-weight 1/3 (reproduces the printed 0.995 / 0.873)"))
    for label, rho, m, n in PRINTED_OTHERS:
        checks.append(at_most(f"{label}: rho <= m/(m+n)", rho, rho_threshold(m, n), basis="closed_form",
                              note="rho as printed in Fig. 1's legend; the threshold is closed form"))
    checks.append(equal("AFGA S2 balanced fully-connected W = J: rho = 0, the one printed topology below 5/55",
                        build("topology", {"name": "complete", "n": 50}).rho, 0.0, 1e-12, basis="closed_form"))
    lhs, rhs = eq30(5, 50, 24, build("topology", {"name": "ring", "n": 50}).rho)
    checks.append(at_most("AFGA S2 ring(50): eq. 30 (the weaker condition the proof uses), I = 24", lhs, rhs,
                          basis="closed_form", note="eq. 30 lhs vs 1/n"))
    return Evidence(checks, errata=["Thm 4.6 / D.3 assume rho <= M/(M+N) (rho_max <= m/(m+n)); the paper's experiments "
                                    "use rings and random graphs far above it, so they cannot validate the theorems as "
                                    "stated (digest §0.3, §2.6, §6 item 11)."],
                    notes=["S3/S4 (Table 5) sizes are the digest's reading of the percentages (m = 2)."])


EQ25 = dict(eta=1.0, L=1.0, eps=1e-4, beta1=0.9, I=24, G=0.0, N=50, m=5, n=50)  # our instance (G = 0: C_0 = sqrt(eps))


def _eq25_left(eta_l: float, eta: float, L: float, eps: float, beta1: float, I: int, G: float, N: int, m: int,
               n: int) -> tuple[float, float]:
    """eq. 25's left inequality as printed, ``(lhs, rhs)``:
    :math:`C_{\\beta,\\eta}\\eta[\\frac{16\\eta_l^2}{N^2}\\frac{m-1}{n-1}+\\frac{2(\\mathcal I+2)\\eta_l^2m}{N^2n}]` and
    :math:`\\frac{\\eta\\eta_l}{4C_0}`."""
    lhs = c_beta_eta(eta, L, eps, beta1) * eta * (16 * eta_l ** 2 / N ** 2 * (m - 1) / (n - 1)
                                                  + 2 * (I + 2) * eta_l ** 2 * m / (N ** 2 * n))
    return lhs, eta * eta_l / (4 * c0(eta_l, I, G, eps))


@claim("afga.eq25_coefficient", "seed 002 App. E eq. (25); digest 002 §2.4 (ii), §6 item 9",
       "eq. 25: a local step size within the printed right side, eta_l <= [4 C_0 C_{beta,eta} (4(m-1)/(N^2(n-1)) + "
       "2(I+2)m/(N^2 n))]^{-1}, satisfies the inequality on its left (coefficient 16) that the proof uses.",
       kind="statement", expect="violated",
       because="solving the left side for eta_l gives 16(m-1)/(N^2(n-1)), the printed right side has 4: at the printed "
               "limit the left side exceeds its right by 18% on Setting 2 (m > 1); the two agree only when m = 1")
def eq25_coefficient(ctx) -> Evidence:
    printed_limit = eq25_step_limit(1.0, **EQ25, coefficient=4.0)
    solved_limit = eq25_step_limit(1.0, **EQ25)
    at_printed = _eq25_left(printed_limit, **EQ25)
    at_solved = _eq25_left(solved_limit, **EQ25)
    single = dict(EQ25, m=1)
    checks = [
        at_most(f"left side of eq. 25 at the printed limit eta_l = {printed_limit:.4g}", *at_printed,
                basis="closed_form", note="the left inequality written out as printed"),
        equal("left side at the solved limit (coefficient 16): lhs - rhs", at_solved[0] - at_solved[1], 0.0,
              1e-12 * at_solved[1], basis="independent", note="the calculator's limit solves the printed left side"),
        equal("m = 1 (CAFGA Settings 1-2): printed and solved limits agree", eq25_step_limit(1.0, **single,
                                                                                          coefficient=4.0),
              eq25_step_limit(1.0, **single), 1e-15, basis="closed_form", note="the (m - 1) term vanishes"),
    ]
    return Evidence(checks, notes=[f"Instance: {EQ25} (Setting 2 sizes; G = 0 makes C_0 = sqrt(eps) independent of "
                                   "eta_l, so the left side is linear in eta_l)."],
                    errata=["eq. 25: the 16 of the left side becomes 4 across the arrow (digest §6 item 9); the "
                            "condition a reader checks is then too weak for the step the proof takes."])


TABLE9 = (  # (label, I, eta_l, eta) for Setting 2 (N = 50, M = 5); digest §3.2 Table 9 and its swapped reading
    ("CIFAR-10, Table 9 as printed", 24, 0.01, 2.0), ("CIFAR-10, swapped (§6 text)", 24, 2.0, 0.01),
    ("Shakespeare, Table 9 as printed", 100, 0.01, 10.0), ("Shakespeare, swapped (§6 text)", 100, 10.0, 0.01))
BEST_EPS = 1e-4  # the largest epsilon of the paper's grid: every limit below is largest there, with G -> 0


@claim("afga.table9_step_conditions", "seed 002 App. B Table 9, §6, Thm 4.6, Lemmas F.1/F.3, eqs. (25), (27); "
       "digest 002 §2.4, §3.2, §6 items 1-2", "The paper's experimental step sizes (Table 9, either reading) satisfy "
       "the step-size conditions of its theory: eta_l <= 1/(8IL), eq. 25 and eq. 27.", kind="scope",
       expect="inconclusive",
       because="the smoothness L of ConvMixer-256-8 / the LSTM, the gradient bound G, the chosen epsilon and the "
               "constant C_1 are not reported; the conditions hold iff L (L sqrt(C_1) for eq. 27) is below the limits "
               "computed here (0.0026 to 0.70 for CIFAR-10 across both readings), which no printed number decides")
def table9_step_conditions(ctx) -> Evidence:
    reason = "the paper reports no L, G, C_1 or chosen epsilon, so L <= L_max cannot be decided"
    checks, rho = [], build("topology", {"name": "ring", "n": 50}).rho
    for label, I, eta_l, eta in TABLE9:
        limits = {
            "eta_l <= 1/(8IL)": smoothness_step_limit(I, 1.0) / eta_l,
            "eq. 25 (printed coefficient 4)": eq25_step_limit(eta_l, eta, 1.0, BEST_EPS, 0.9, I, 0.0, 50, 5, 50,
                                                              coefficient=4.0) / eta_l,
            "eq. 27 (bounds L sqrt(C_1))": eq27_step_limit(eta_l, 1.0, BEST_EPS, I, 0.0, rho, 1.0) / eta_l,
        }
        for what, L_max in limits.items():
            checks.append(no_power(trend(f"{label}: {what} holds iff L <= {L_max:.3g}", L_max, L_max > 0,
                                         "L_max > 0 (satisfiable for a smooth enough model)", "L unknown",
                                         basis="closed_form",
                                         note="every limit scales as 1/L at G = 0 and epsilon = 1e-4"), reason))
    c = local_lr_schedule(1.0, 24, 500) * global_lr_schedule(1.0, 50, 24, 5)
    notes = [f"Setting 2: N = 50, M = 5, ring rho = {rho:.5f}, beta_1 = 0.9, R = 500. G -> 0 and epsilon = 1e-4 (the "
             "largest of the grid) give the largest admissible L, so each L_max is an upper bound.",
             f"Thm 4.6's schedules give eta_l * eta = c_l c_g * {c:.3f} at I = 24, R = 500; the paper's products "
             f"(0.02) correspond to c_l c_g = {0.02 / c:.3f}, which the hidden constants neither allow nor forbid.",
             "Table 9 prints AFGA's eta_l = 0.01, eta = 2 (CIFAR-10), but §6 says the global rate is 0.01 and the local "
             "one in {1, 2, 10}; both readings are evaluated (digest §6 item 1)."]
    return Evidence(checks, notes=notes, deviations=["Settings 1 (N = 100) and CIFAR-100 are not listed; their limits "
                                                     "follow the same formulas."])


def _without_replacement(y: np.ndarray, m: int) -> float:
    """:math:`\\mathbb E\\|\\sum_{k,i}\\mathbb 1\\{i\\in\\mathcal S^k\\}y^{k,i}\\|^2` by enumerating every choice of
    :math:`m`-subsets, one per cluster (independent clusters, uniform without replacement)."""
    K, n, _ = y.shape
    subsets = list(itertools.combinations(range(n), m))
    sums = np.stack([y[k][list(s)].sum(0) for k in range(K) for s in subsets]).reshape(K, len(subsets), -1)
    total = sums[0]
    for k in range(1, K):
        total = (total[:, None, :] + sums[k][None, :, :]).reshape(-1, y.shape[2])
    return float(np.mean(np.sum(total ** 2, axis=1)))


@claim("afga.lemma_f6", "seed 002 App. F Lemma F.6; digest 002 §1.9, §2.5, §5 V8",
       "Lemma F.6: E||sum_k sum_i 1{i in S^k} y^{k,i}||^2 <= m(m-1)/(n(n-1)) ||sum y||^2 + K m(n-m)/(n(n-1)) "
       "sum ||y||^2 for m-of-n sampling in each of K clusters; with K = 1 it is an equality.", kind="statement")
def lemma_f6(ctx) -> Evidence:
    rng = np.random.default_rng(0)  # the digest's prototype instance: these draws, in this order
    y1, y2 = rng.standard_normal((1, 6, 3)), rng.standard_normal((2, 6, 3))
    checks = [printed("K = 1, n = 6, m = 2: enumerated E||.||^2 (digest prototype)", _without_replacement(y1, 2),
                      "4.404806", note="digest §2.5 prototype, reproduced with numpy default_rng(0) draws"),
              equal("K = 1, n = 6, m = 2: enumeration = right side", _without_replacement(y1, 2),
                    lemma_f6_bound(y1, 2), 1e-12, basis="enumeration"),
              printed("K = 2, n = 6, m = 2: enumerated E||.||^2 (digest prototype)", _without_replacement(y2, 2),
                      "11.58"),
              printed("K = 2, n = 6, m = 2: right side (digest prototype)", lemma_f6_bound(y2, 2), "19.47"),
              at_most("K = 2, n = 6, m = 2: enumeration <= right side", _without_replacement(y2, 2),
                      lemma_f6_bound(y2, 2), basis="enumeration")]
    for K, n, m in ((1, 7, 3), (1, 6, 1), (1, 5, 5), (3, 4, 2)):
        y = np.random.default_rng([ctx.seed, K, n, m]).standard_normal((K, n, 2))
        relation = equal if K == 1 else at_most
        extra = {"atol": 1e-12} if K == 1 else {}
        checks.append(relation(f"K = {K}, n = {n}, m = {m}: enumeration vs right side", _without_replacement(y, m),
                               lemma_f6_bound(y, m), basis="enumeration", **extra))
    same = np.ones((3, 4, 2))
    checks.append(equal("K = 3, all y equal: the bound is attained", _without_replacement(same, 2),
                        lemma_f6_bound(same, 2), 1e-12, basis="enumeration",
                        note="module docstring: the slack vanishes for equal vectors, so the K > 1 bound is tight"))
    return Evidence(checks, notes=["Sampling is uniform without replacement within each cluster (the pair probability "
                                   "the proof uses); the text's 'with replacement' is a typo (digest §1.9, §6 item 7)."])
