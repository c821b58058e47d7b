"""What several parts of seed 003 (Performative FL, digest shared/spec/003_performative_fl.md) share: the seed tag,
the generator settings of its §4.1, the exact distance to theta_PS and its slope on a window such as the "last
decade" (digest §6), and the credit-scoring instance of its §4.2.
"""

from __future__ import annotations

import numpy as np

from theorylab.testbeds.credit_data import credit_source
from theorylab.fitting import loglog_slope
from theorylab.performative.experiments import PAPER_LR, algorithm_spec, expected_dist2, gaussian_spec

SEED = "seed 003"
GENERATOR_SETTINGS = ((0.1, 0.6, "random"), (0.1, 0.6, "uniform"), (0.01, 0.0, "uniform"), (0.6, 0.6, "uniform"))


def dist2(weights: str, scheme: str, k, t, E: int = 5, lr=PAPER_LR, **problem) -> np.ndarray:
    """Exact E(theta_bar^t - theta_PS)^2 of a generator instance (``problem``: eps_var, mu_var, theta0, ...)."""
    return expected_dist2(gaussian_spec(weights=weights, **problem), algorithm_spec(scheme, k, E, lr), t)


def log_window(lo: float, hi: float, points: int = 60) -> np.ndarray:
    """``points`` log-spaced local iterations in [lo, hi], rounded down to multiples of E = 5 (duplicates dropped)."""
    return np.unique(np.logspace(np.log10(lo), np.log10(hi), points).astype(int) // 5 * 5)


# The digest's "last decade" of Table A: local iterations in [2e4, 2e5], 60 log-spaced multiples of E = 5.
LAST_DECADE = log_window(2e4, 2e5)


def decade_slope(weights: str, scheme: str, k, window: np.ndarray = LAST_DECADE, **problem) -> float:
    """Least-squares slope of log E(theta_bar^t - theta_PS)^2 against log(t + gamma) on ``window`` (default
    :data:`LAST_DECADE`; exact engine, the paper's eta_t = 100/(t + gamma) with gamma = 1e4)."""
    return loglog_slope(window + PAPER_LR["t0"], dist2(weights, scheme, k, window, **problem))[0]


def credit_problem(ctx):
    """The credit-scoring testbed of the budget's data source (synthetic in quick mode), and that source."""
    from theorylab.testbeds.credit import credit

    source = credit_source(ctx.quick)
    return credit(source=source), source
