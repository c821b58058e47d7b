r"""Seed 004's theorems against its own experiments and its delay requirement (Theorems 3.1 and 4.1, Table 1,
§3.2 text; digest 004 §3.2–3.5, §4, §5.3; calculators in :mod:`theorylab.bounds.masfl`).

Theorem 3.1 needs :math:`1-4a-\sqrt{SK/T}\ge0` with :math:`a = \tau_{\max}^2SK/T + 20e^2\eta^2K^2L^2`, which some
:math:`\eta>0` meets iff :math:`T-\sqrt{SKT}-4SK\tau_{\max}^2>0`.  Theorem 4.1 has no such condition: it holds
"for sufficiently large T"; the digest's regime :math:`T\gtrsim(SK)^3` (where its leading term
:math:`(SKT)^{-1/4}` dominates its :math:`\sigma\sqrt{SK/T}` term, constants dropped) is shown, not tested.  The
experiments
(§6, App. E.1) run :math:`T = 600`, :math:`S = 10`, :math:`\tau_{\max} = 4` at :math:`M_c = 20`, and :math:`K` is
not stated: two epochs of batch 100 on 500 (CIFAR-10) or 600 (FMNIST) samples per client give :math:`K = 10, 12`
(digest §4); :math:`K = 1` is the most favourable case.

The delay requirement: the smallest :math:`T` meeting the condition solves
:math:`T-\sqrt{SK}\sqrt T-4SK\tau_{\max}^2 = 0`, i.e.
:math:`\sqrt{T_{\min}} = \frac12\big(\sqrt{SK}+\sqrt{SK+16SK\tau_{\max}^2}\big)`, so
:math:`T_{\min}/\tau_{\max}^2\to4SK`: :math:`T\ge\mathcal O(\tau_{\max}^2)` as §3.2 says.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from theorylab.bounds.masfl import feasibility_slack
from theorylab.checks import across, at_least, auxiliary, definitional, equal
from theorylab.claims import Evidence, claim
from theorylab.fitting import loglog_slope

T_PAPER, S_PAPER, TAU_PAPER = 600, 10, 4
K_READINGS = {"K = 1 (most favourable)": 1, "K = 10 (CIFAR-10, 2 epochs of 500 samples)": 10,
              "K = 12 (FMNIST, 2 epochs of 600 samples)": 12}


@claim("masfl.experiments_in_scope", "seed 004 Thm 3.1, Thm 4.1, §6, App. E.1; digest 004 §3.2-3.3, §4",
       "The paper's experiments (T = 600, S = 10, tau_max = 4 at M_c = 20), whose MasFL step sizes it says follow "
       "Theorem 3.1, satisfy that theorem's condition 1 - 4a - sqrt(SK/T) >= 0 for some eta > 0.", kind="scope",
       expect="violated", severity="scope", where="§3.2, Theorem 3.1; §6 (learning rates); App. E.1 (setting)",
       quote=r"If the condition  $1 - 4a - \sqrt{\frac{SK}{T}} \ge 0$  is … satisfied, i.e.,  $\eta \leq "
             r"\frac{\sqrt{T - \sqrt{SKT} - 4SK\tau_{\max}^2}}{4\sqrt{5}eKL\sqrt{T}}$ … The learning rates of our "
             r"algorithms, MasFL and AdaMasFL, are derived based on the theoretical guidance provided in Theorem 3.1 "
             r"and Theorem 4.1, respectively.",
       because="T - sqrt(SKT) - 4 S K tau_max^2 < 0 for every reading of the unstated K (-117.5 at K = 1, -6045 at "
               "K = 10, -7348 at K = 12), so no eta > 0 satisfies Theorem 3.1's condition at the paper's own T, S and "
               "tau_max: the theorem does not cover the MasFL runs of Figs. 1-3",
       defence="The authors may say the theorem only guides the step sizes ('theoretical guidance') and that its "
               "condition is sufficient, not necessary. It stands as a scope finding: the condition is the theorem's "
               "stated hypothesis, it fails by a wide margin under every K, even K = 1, and the paper presents its "
               "step sizes as derived from the theorem; it is not a claim that MasFL fails there.")
def experiments_in_scope(ctx) -> Evidence:
    slack = {label: at_least(f"Thm 3.1 slack T - sqrt(SKT) - 4SK tau_max^2, {label}",
                             feasibility_slack(S_PAPER, k, T_PAPER, TAU_PAPER), 0.0, basis="closed_form",
                             note="some eta > 0 satisfies 1 - 4a - sqrt(SK/T) >= 0 iff this is > 0")
             for label, k in K_READINGS.items()}
    regime = ", ".join(f"T / (SK)^3 = {T_PAPER / (S_PAPER * k) ** 3:.3g} at K = {k}" for k in K_READINGS.values())
    return Evidence([across("Theorem 3.1's condition admits an eta > 0 at T = 600, S = 10, tau_max = 4", slack,
                            note="K is not stated (digest 004 §4): each reading is tried")],
                    errata=["The paper says its learning rates are 'derived based on the theoretical guidance' of "
                            "Theorems 3.1 and 4.1, but at its own T, S and tau_max Theorem 3.1's condition admits no "
                            "eta, so the theorem does not cover the MasFL runs of Figs. 1-3."],
                    notes=["Theorem 4.1 is not accused: it holds 'for sufficiently large T' without saying how large. "
                           "The digest's regime where its leading term dominates, T >~ (SK)^3 with constants dropped, "
                           f"is shown for information only: {regime}."])


def minimal_rounds(S: int, K: int, tau_max: float) -> float:
    r"""The smallest :math:`T` with :math:`T-\sqrt{SKT}-4SK\tau_{\max}^2\ge0`, found by root bracketing on the
    slack itself (independent of the closed-form root of the module docstring)."""
    slack = lambda T: T - math.sqrt(S * K * T) - 4 * S * K * tau_max ** 2  # noqa: E731
    high = 16.0 * S * K * (1 + tau_max ** 2)
    return brentq(slack, S * K, high, xtol=1e-10, rtol=1e-14)


@claim("masfl.delay_requirement", "seed 004 §3.2 (after Thm 3.1), Table 1; digest 004 §3.2", "MasFL keeps its rate "
       "once T >= O(tau_max^2), against T >= O(tau_max^4) for CA2FL and FADAS (whose rates carry tau_max tau_bar / T).",
       kind="statement", where="§3.2, after Theorem 3.1",
       quote=r"To maintain the convergence order of  $\mathcal{O}\left(\frac{1}{\sqrt{T}}\right)$  as in the "
             r"synchronous case, MasFL requires the number of global rounds to satisfy  "
             r"$T \geq \mathcal{O}(\tau_{\max}^2)$ . This "
             r"condition is less restrictive than that required by CA<sup>2</sup>FL (Wang et al., 2023) and FADAS "
             r"(Wang et al., 2024c), which impose  $T \ge$  $\mathcal{O}(\tau_{\max}^4)$")
def delay_requirement(ctx) -> Evidence:
    S, K = 4, 5
    taus = np.array([4.0, 16.0, 64.0, 256.0, 1024.0])
    t_min = np.array([minimal_rounds(S, K, tau) for tau in taus])
    closed = ((math.sqrt(S * K) + np.sqrt(S * K + 16 * S * K * taus ** 2)) / 2) ** 2
    tail_slope = loglog_slope(taus[-2:], t_min[-2:])[0]
    # CA2FL / FADAS: 1/sqrt(T) >= tau_max tau_bar / T with tau_bar = tau_max / 2 (uniform staleness) => T = tau^4/4
    other = (taus * taus / 2) ** 2
    return Evidence([auxiliary(equal("T_min by root bracketing vs closed form (max relative gap)",
                                     float(np.max(np.abs(t_min / closed - 1))), 0.0, 1e-9, basis="independent")),
                     equal("MasFL: T_min / (4 S K tau_max^2) at tau_max = 1024",
                           float(t_min[-1] / (4 * S * K * taus[-1] ** 2)), 1.0, 1e-3, basis="closed_form",
                           note="the limit 4SK tau^2; the next order adds (1 + 1/(4 tau))^2 - 1 = 4.9e-4 here"),
                     definitional("CA2FL / FADAS: exponent of T in tau_max for tau_max tau_bar / T <= 1/sqrt(T)",
                                  loglog_slope(taus, other)[0], 4.0, 1e-9,
                                  note="our algebra of the paper's own reason (T = (tau_max tau_bar)^2 with tau_bar = "
                                       "tau_max / 2, a uniform staleness law): shown, not deciding")],
                    notes=[f"S = {S}, K = {K}; tau_max from 4 to 1024; T_min = "
                           + ", ".join(f"{v:.4g}" for v in t_min) + f"; local exponent at the top {tail_slope:.4f}"])
