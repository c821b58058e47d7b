"""Digest 003 §6: the reference values of E|theta_bar^t - theta_PS|^2 in Tables A-E (seed 003 §4.1, Figs 1-4 and
App. E.2 settings), reproduced by the exact moment engine.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from theorylab.checks import at_most, ours, printed
from theorylab.claims import Evidence, claim
from theorylab.performative.experiments import R_DEFAULTS
from theorylab.validations.performative.common import decade_slope, dist2, log_window

WIDE_WINDOW = (1e4, 5e5)  # another reading of 'last decade', tried for every Table A slope the stated window misses


@claim("performative.digest_tables", "digest 003 §6 Tables A-E and the constant-step / divergence numbers",
       "The exact engine reproduces the digest's reference values of E|theta_bar^t - theta_PS|^2 (authors' generator, "
       "seed 0, eta_t = 100/(t + 1e4), sigma_d = 1e-3).", kind="digest",
       where="digest 003 §6 'Reference numbers [D] (exact expectations; author generator, seed 0)', Tables A-E",
       quote="Common settings: $\\theta^0=\\bar m=10$, $\\theta^{PS}=100$, $\\eta_t=100/(t+10^4)$, "
             "$\\sigma_{\\rm d}=10^{-3}$ unless stated.")
def digest_tables(ctx) -> Evidence:
    checks = []
    table_a = {("full", "random"): ["1164", "1.211", "0.157", "0.0467", "0.0128"],
               ("I", "random"): ["1167", "8.44", "2.52", "1.33", "0.68"],
               ("II", "uniform"): ["1166", "2.48", "0.605", "0.294", "0.143"]}
    ts = [1000, 10_000, 50_000, 100_000, 200_000]
    noisy_change = []
    for (scheme, weights), texts in table_a.items():
        values = dist2(weights, scheme, 20, ts)
        checks += [printed(f"Table A {scheme}, t={t}", float(v), s, basis="digest")
                   for t, v, s in zip(ts, values, texts)]
        noisy_change.append(np.abs(dist2(weights, scheme, 20, ts, sigma=1.0) / values - 1))
    wide = log_window(*WIDE_WINDOW)
    wide_label = f"the window [{WIDE_WINDOW[0]:.0e}, {WIDE_WINDOW[1]:.0e}]"
    for (scheme, weights), text in zip(table_a, ("-2.0", "-1.06", "-1.18")):
        checks.append(printed(f"Table A {scheme}: slope vs log(t + gamma), last decade",
                              decade_slope(weights, scheme, 20), text,
                              "digest value; window [2e4, 2e5] local iterations (the decade ending at the table's "
                              "last column), least squares on 60 log-spaced points; tolerance = printed rounding",
                              readings={wide_label: decade_slope(weights, scheme, 20, wide)}, basis="digest"))
    checks.append(ours(at_most("Table A with sigma_d = 1 instead of 1e-3: max relative change of its 15 values",
                               float(np.max(noisy_change)), 0.05, basis="digest",
                               note="digest: 'almost identical'. Tolerance 5% = 0.021 decades on log-scale axes; the "
                                    "printed rounding (<= 0.7% here) would test 'identical'"),
                       "'almost identical' read as within 5%: a margin of our own"))
    table_b = {("full", None): "0.0413", ("I", 20): "1.255", ("II", 20): "0.294", ("I", 5): "4.90", ("II", 5): "4.09"}
    for (scheme, k), text in table_b.items():
        checks.append(printed(f"Table B {scheme} (K={k}), uniform p, t=1e5",
                              float(dist2("uniform", scheme, k, 100_000)[0]), text, basis="digest"))
    table_b_i = float(dist2("uniform", "I", 20, 100_000)[0])
    twice = Decimal(repr(table_b_i)).quantize(Decimal("0.001"), ROUND_HALF_UP).quantize(Decimal("0.01"), ROUND_HALF_UP)
    double_rounding = {"the exact value rounded to 3 decimals (1.255, as Table B prints it) then to 2": float(twice)}
    for E, text in zip((1, 5, 10, 20, 50), ("0.050", "0.294", "0.719", "1.98", "9.18")):
        checks.append(printed(f"Table C Scheme II, E={E}, t=1e5", float(dist2("uniform", "II", 20, 100_000, E)[0]),
                              text, basis="digest"))
    table_d = {"II": ["21.6", "7.60", "2.93", "1.38", "0.605", "0.217", "0.139"],
               "I": ["22.5", "9.09", "4.61", "3.12", "2.38", "2.00", "1.93"]}
    for scheme, texts in table_d.items():
        for k, text in zip((2, 5, 10, 15, 20, 24, 25), texts):
            s = "full" if (scheme == "II" and k == 25) else scheme
            checks.append(printed(f"Table D {scheme}, K={k}, t=5e4", float(dist2("uniform", s, k, 50_000)[0]), text,
                                  basis="digest"))
    table_e = {(0.1, 6.0): (["4.37", "2.43", "1.68", "1.28"], ["1.24", "0.618", "0.406", "0.301"]),
               (0.1, 0.0): (["4.24", "2.35", "1.63", "1.24"], ["1.21", "0.600", "0.394", "0.292"]),
               (0.6, 0.6): (["41.3", "19.3", "12.3", "8.99"], ["21.1", "8.15", "4.59", "3.07"]),
               (0.1, 0.6): (["4.27", "2.38", "1.64", "1.26"], ["1.22", "0.605", "0.397", "0.294"])}
    te = [25_000, 50_000, 75_000, 100_000]
    for (ev, mv), rows in table_e.items():
        for scheme, texts in zip(("I", "II"), rows):
            values = dist2("uniform", scheme, 20, te, eps_var=ev, mu_var=mv)
            same_as_b = (ev, mv, scheme) == (0.1, 0.6, "I")  # the generator's default instance: Table B's 1.255 at 1e5
            checks += [printed(f"Table E Var(eps)={ev}, Var(m)={mv}, Scheme {scheme}, t={t}", float(v), s,
                               readings=double_rounding if same_as_b and t == 100_000 else None, basis="digest")
                       for t, v, s in zip(te, values, texts)]
    late = dist2("uniform", "II", 20, [100_000, 200_000])
    late_slope = float(np.log(late[1] / late[0]) / np.log(2.1e5 / 1.1e5))
    return Evidence(checks, deviations=[R_DEFAULTS], notes=[
        "The digest does not define 'last decade' beyond its name; the Table A slopes are fitted on [2e4, 2e5] and, "
        f"where that misses the printed value, on {wide_label} as a stated alternative. The fit drifts with the window "
        f"while the curve bends (Scheme II: two-point slope {late_slope:.3f} on [1e5, 2e5]); Scheme II's -1.18 is "
        f"reproduced on {wide_label}, not on [2e4, 2e5].",
        "Constant-step, divergence, Delta_0 = 0 and released-code numbers of §6 are checked in their own claims.",
        f"Table E prints 1.26 for Scheme I, Var(eps)=0.1, Var(m)=0.6, t=1e5, where the exact value is "
        f"{table_b_i:.6g}; it is the quantity Table B prints as 1.255, and 1.255 rounded half up to two decimals is "
        "1.26: the cell is reproduced by that double rounding (decimal arithmetic; Python's round(1.255, 2) gives "
        "1.25 because 1.255 is not exact in binary), which the check names. No other cell is given that reading."])
