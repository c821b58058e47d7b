r"""Local step-size schedules :math:`\eta_l^t`, given as a number or a spec.

* a number: constant;
* ``{"name": "inverse_sqrt", "lr0": ..., "t0": 10}``: :math:`\eta^t = \eta_0/\sqrt{t/t_0 + 1}`
  (FedAWE's official code, digest 000 §2.1 item 3);
* ``{"name": "inverse", "lr0": ..., "t0": ...}``: :math:`\eta^t = \eta_0/(1 + t/t_0)`, a diminishing
  schedule satisfying the thesis' (2.12) (:math:`\sum\eta=\infty`, :math:`\sum\ln t\,\eta^2<\infty`).
"""

from __future__ import annotations

import math
import numbers
from typing import Callable

import numpy as np

from theorylab.validation import real


def make_schedule(spec) -> Callable[[int], float]:
    """The step-size schedule ``lr``: a finite number > 0, or a dict with a ``name`` and finite ``lr0``, ``t0`` > 0."""
    if isinstance(spec, numbers.Real) and not isinstance(spec, bool):
        value = real("lr (the step size)", spec, 0.0, open_low=True)
        return lambda t: value
    if not isinstance(spec, dict) or "name" not in spec:
        raise ValueError(f"lr (a step-size schedule) must be a number or a dict with a 'name'; got {spec!r}")
    name = spec["name"]
    lr0, t0 = real("lr0", spec.get("lr0", 0), 0.0, open_low=True), real("t0", spec.get("t0", 10), 0.0, open_low=True)
    if name == "inverse_sqrt":
        return lambda t: lr0 / math.sqrt(t / t0 + 1)
    if name == "inverse":
        return lambda t: lr0 / (1 + t / t0)
    raise ValueError(f"unknown schedule {name!r}; expected 'inverse_sqrt' or 'inverse'")


def schedule_values(spec, t: np.ndarray) -> np.ndarray:
    """The schedule ``spec`` at every step of ``t`` (an integer array) at once: the same IEEE operations as
    :func:`make_schedule`'s (division and square root are correctly rounded), so the same floats, bit for bit."""
    make_schedule(spec)  # validates the spec
    t = np.asarray(t, dtype=np.float64)
    if not isinstance(spec, dict):
        return np.full(t.shape, float(spec))
    lr0, t0 = float(spec.get("lr0", 0)), float(spec.get("t0", 10))
    if spec["name"] == "inverse_sqrt":
        return lr0 / np.sqrt(t / t0 + 1)
    return lr0 / (1 + t / t0)
