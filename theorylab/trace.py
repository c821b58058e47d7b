"""A run's result: per-replica metrics over evaluation rounds, with mean and confidence intervals.

``metrics[name]`` has shape ``(replicas, n_eval)`` where ``name`` is
``"<point>.<metric>"`` (e.g. ``server.dist2``).  Replicas that diverged carry
``inf`` from their divergence round on, and ``diverged_at[r]`` records that round
(``-1`` when replica ``r`` stayed bounded).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field

import numpy as np
from scipy import stats


@dataclass
class Trace:
    config: dict
    rounds: np.ndarray
    metrics: dict[str, np.ndarray]
    diverged_at: np.ndarray
    final: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def replicas(self) -> int:
        return len(self.diverged_at)

    @property
    def diverged(self) -> bool:
        return bool((self.diverged_at >= 0).any())

    def mean(self, name: str) -> np.ndarray:
        return self.metrics[name].mean(axis=0)

    def ci(self, name: str, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Student-t interval for the mean over replicas (nan with one replica)."""
        return mean_ci(self.metrics[name], level)

    def to_frame(self):
        """The metrics as a long pandas DataFrame, one row per (replica, evaluated round, metric), with columns
        ``replica``, ``round``, ``metric`` and ``value`` (metrics in name order, then replicas, then rounds)."""
        import pandas as pd

        names = sorted(self.metrics)
        n, rounds = self.replicas, len(self.rounds)
        return pd.DataFrame({
            "replica": np.tile(np.repeat(np.arange(n), rounds), len(names)),
            "round": np.tile(np.asarray(self.rounds), n * len(names)),
            "metric": np.repeat(names, n * rounds),
            "value": np.concatenate([np.asarray(self.metrics[k], dtype=np.float64).ravel() for k in names]),
        })

    def _repr_html_(self) -> str:
        """Jupyter's display: the configuration and each metric's final mean with its 95% interval."""
        from theorylab.html_report import trace_fragment

        return trace_fragment(self)

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        arrays = {f"metric:{k}": v for k, v in self.metrics.items()}
        arrays.update({f"final:{k}": v for k, v in self.final.items()})
        meta = json.dumps({"config": self.config, "seconds": self.seconds})
        np.savez_compressed(buf, rounds=self.rounds, diverged_at=self.diverged_at, meta=np.array(meta), **arrays)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> "Trace":
        with np.load(io.BytesIO(blob)) as z:
            meta = json.loads(str(z["meta"]))
            metrics = {k[len("metric:"):]: z[k] for k in z.files if k.startswith("metric:")}
            final = {k[len("final:"):]: z[k] for k in z.files if k.startswith("final:")}
            return cls(meta["config"], z["rounds"], metrics, z["diverged_at"], final, meta["seconds"])


def mean_ci(samples: np.ndarray, level: float = 0.95, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Student-t confidence interval for the mean of ``samples`` along ``axis``.

    Exact for normal samples at any size; elsewhere it relies on the central limit theorem.  Measured at n = 5 over
    2,000 draws (tests/test_checks.py): the 95% interval covers a normal mean 95.7% of the time (a percentile
    bootstrap: 83.6%), but an exponential mean only 87.5%: read a 5-seed interval of a skewed metric as approximate.
    """
    samples = np.asarray(samples, dtype=np.float64)
    n = samples.shape[axis]
    mean = samples.mean(axis=axis)
    if n < 2:
        nan = np.full_like(mean, np.nan)
        return nan, nan
    half = stats.t.ppf(0.5 + level / 2, n - 1) * samples.std(axis=axis, ddof=1) / np.sqrt(n)
    return mean - half, mean + half
