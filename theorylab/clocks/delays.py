r"""Delay laws of an asynchronous clock: how long a client's job takes, in simulated seconds (seed 004 §3.1, §6,
App. E.1; digest 004 §1.4).

A law maps independent uniforms :math:`u\in[0,1)` (from the replica's ``delay`` stream, one per client, so the
draw's leading axis is the client) to job durations :math:`D\ge0` by its inverse distribution function:

* ``uniform``: :math:`D\sim\mathcal U(0,T_{\max})`, :math:`D=T_{\max}u` (the paper's law, :math:`T_{\max}=20`);
* ``exponential``: mean :math:`m`, :math:`D=-m\log(1-u)`;
* ``half_normal``: :math:`D=s|Z|`, :math:`Z\sim\mathcal N(0,1)`, :math:`D=s\sqrt2\,\mathrm{erf}^{-1}(u)`;
* ``log_normal``: :math:`\log D\sim\mathcal N(\mu,\sigma^2)`, :math:`D=\exp(\mu+\sigma\sqrt2\,\mathrm{erf}^{-1}(2u-1))`;
* ``fixed``: client :math:`i` always takes :math:`d_i` (deterministic: hand-worked schedules, tests).

``per="job"`` draws a fresh duration for every job; ``per="client"`` draws one duration per client when the clock
starts and keeps it (a fixed speed).  The paper says both ("execution times of all clients are sampled", "the delay
time for each client"), so both are offered (digest 004 §1.4, [UNCLEAR]).
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import torch

from theorylab.rng import Streams
from theorylab.validation import real

LAWS = ("uniform", "exponential", "half_normal", "log_normal", "fixed")
MAX_LOG_MEAN = 700.0  # exp(709.8) is the largest float64
PER = ("job", "client")


class DelayLaw(NamedTuple):
    name: str
    per: str  # "job" or "client"
    quantile: Callable[[torch.Tensor], torch.Tensor]  # (R, N) uniforms -> (R, N) durations >= 0
    mean: float  # E[D] (for "fixed", the mean over clients)


def delay_law(spec: dict | None, n_clients: int) -> DelayLaw:
    """The law named by ``spec`` (``{"law": ..., "per": "job"|"client", **parameters}``; default the paper's
    :math:`\\mathcal U(0, 20)` per job).  Parameters are validated; ``fixed`` needs ``values`` (one duration >= 0
    per client)."""
    spec = dict(spec or {"law": "uniform", "t_max": 20.0})
    name, per = spec.pop("law", "uniform"), spec.pop("per", "job")
    if name not in LAWS:
        raise ValueError(f"delay law must be one of {LAWS}; got {name!r}")
    if per not in PER:
        raise ValueError(f"delay per must be one of {PER}; got {per!r}")
    allowed = {"uniform": {"t_max"}, "exponential": {"mean"}, "half_normal": {"scale"},
               "log_normal": {"mu", "sigma"}, "fixed": {"values"}}[name]
    if set(spec) - allowed:
        raise ValueError(f"delay law {name!r} takes parameters {sorted(allowed)}; got {sorted(spec)}")
    if name == "uniform":
        t_max = real("t_max", spec.get("t_max", 20.0), 0.0, open_low=True)
        return DelayLaw(name, per, lambda u: t_max * u, t_max / 2)
    if name == "exponential":
        mean = real("mean", spec.get("mean", 10.0), 0.0, open_low=True)
        return DelayLaw(name, per, lambda u: -mean * torch.log1p(-u), mean)
    if name == "half_normal":
        scale = real("scale", spec.get("scale", 10.0), 0.0, open_low=True)
        return DelayLaw(name, per, lambda u: scale * math.sqrt(2.0) * torch.erfinv(u), scale * math.sqrt(2 / math.pi))
    if name == "log_normal":
        mu, sigma = real("mu", spec.get("mu", 2.0)), real("sigma", spec.get("sigma", 0.5), 0.0, open_low=True)
        if mu + sigma ** 2 / 2 > MAX_LOG_MEAN:
            raise ValueError(f"delay law 'log_normal' has mean duration exp(mu + sigma^2/2) = exp({mu + sigma**2 / 2:.4g})"
                             f", beyond a float's range: mu + sigma^2/2 must be at most {MAX_LOG_MEAN:g}")
        return DelayLaw(name, per, lambda u: torch.exp(mu + sigma * math.sqrt(2.0) * torch.erfinv(2 * u - 1)),
                        math.exp(mu + sigma ** 2 / 2))
    values = spec.get("values")
    if not isinstance(values, (list, tuple)) or len(values) != n_clients:
        raise ValueError(f"delay law 'fixed' needs values: a list of {n_clients} durations >= 0; got {values!r}")
    fixed = torch.tensor([real(f"values[{i}]", v, 0.0) for i, v in enumerate(values)], dtype=torch.float64)
    return DelayLaw(name, "client", lambda u: fixed.to(u.device).expand_as(u).clone(), float(fixed.mean()))


def durations(law: DelayLaw, streams: Streams, shape: int | tuple[int, ...]) -> torch.Tensor:
    """Candidate durations ``(R, *shape)`` float64 from the ``delay`` stream (``shape = N``: one per client; ``(n,
    N)``: for ``n`` consecutive launches, the same numbers as ``n`` draws of ``N``)."""
    return law.quantile(streams.uniform("delay", (shape,) if isinstance(shape, int) else tuple(shape)))
