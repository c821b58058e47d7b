r"""Up-front memory estimate of a run, so that an oversized one is refused before it allocates (issue 16).

For a run of :math:`R` replicas, :math:`m` clients, dimension :math:`d` and :math:`b` bytes per entry,

.. math::
    \mathrm{bytes} \approx P + R\,\bigl(S_1 + W\,m\,d\,b + G + E\,K\,8\cdot 2\bigr),

where :math:`P` is the problem's own tensors (measured on the built problem), :math:`S_1` the bytes of one
replica's algorithm and world-model state (measured by initialising them for one replica: exact, whatever the
kernel keeps), :math:`W = 4 + s` the ``(R, m, d)`` work tensors a round holds beside the state (the clients' models,
their gradients, the aggregate, and the noise of all :math:`s` local steps, drawn up front by
:func:`theorylab.kernels.local_sgd.local_sgd`; :math:`s` is the algorithm spec's ``local_steps``), :math:`G` the random
streams of one replica (one mt19937 generator per purpose, 2.7 kB measured on this CPU, plus its seeds), and
:math:`E = \lfloor T/k\rfloor + 2` evaluations of :math:`K = 8` metric values per evaluation point, held twice
(per round, then stacked; :mod:`theorylab.runner`).  A CUDA run compares its tensors with the device's free
memory (``torch.cuda.mem_get_info``) and its streams and trace with the host's; a CPU run compares the sum with
``MemAvailable`` of ``/proc/meminfo`` (``os.sysconf`` where that file is missing).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from theorylab.rng import PURPOSES, Streams

WORK_TENSORS = 4  # (R, m, d) tensors a round holds beside the state and the local steps' noise
STREAM_BYTES = len(PURPOSES) * 2_800 + 300  # per replica: one generator per purpose and its 32-bit seeds
METRICS_PER_POINT = 8  # an upper bound on the metric values a problem reports per evaluation point


def nbytes(obj, depth: int = 3) -> int:
    """Bytes of the tensors and arrays reachable from ``obj`` through containers and attributes (``depth`` levels)."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if depth == 0:
        return 0
    if isinstance(obj, dict):
        return sum(nbytes(v, depth - 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(nbytes(v, depth - 1) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return sum(nbytes(v, depth - 1) for v in vars(obj).values())
    return 0


def available_bytes(device: str | torch.device = "cpu") -> int:
    """Free memory of ``device``: CUDA's free bytes, or the host's ``MemAvailable``."""
    device = torch.device(device)
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def human(n: int) -> str:
    """Bytes in decimal units; sizes beyond a float's range (a spec's 1e300) read as "over 1e+12 PB"."""
    if n >= 10**27:
        return "over 1e+12 PB"
    n = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000:
            return f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"


def local_steps(algorithm: dict) -> int:
    """The spec's ``local_steps`` when it gives an integer one, else 1 (a kernel's default is small)."""
    steps = algorithm.get("local_steps", 1)
    return int(steps) if isinstance(steps, (int, float)) and float(steps).is_integer() else 1


def run_estimate(config, problem, algorithm, world: dict) -> tuple[int, int]:
    """``(device bytes, host bytes)`` a run of ``config`` needs, by the formula of the module docstring."""
    one = Streams(config.seed, 1, config.device)
    state = algorithm.init(problem, problem.initial_point(1, one))
    per_replica = nbytes(state) + sum(nbytes(model.init(1, one)) for model in world.values())
    work = WORK_TENSORS + local_steps(config.algorithm)
    per_replica += work * problem.n_clients * problem.dim * torch.empty((), dtype=problem.dtype).element_size()
    evaluations = config.rounds // config.every + 2
    trace = evaluations * (METRICS_PER_POINT * len(algorithm.points(state)) * 8 * 2)
    return nbytes(problem) + config.replicas * per_replica, config.replicas * (STREAM_BYTES + trace) + 64 * evaluations


def check_run(config, problem, algorithm, world: dict) -> None:
    """Refuse, with a ValueError giving both numbers, a run whose estimate exceeds the available memory."""
    device_bytes, host_bytes = run_estimate(config, problem, algorithm, world)
    pools = [(device_bytes, config.device), (host_bytes, "cpu")]
    if torch.device(config.device).type != "cuda":
        pools = [(device_bytes + host_bytes, "cpu")]
    for need, device in pools:
        free = available_bytes(device)
        if need > free:
            raise ValueError(
                f"this run needs an estimated {human(need)} of {torch.device(device).type} memory but {human(free)} "
                f"are available (replicas={config.replicas}, clients={problem.n_clients}, dim={problem.dim}, "
                f"local_steps={local_steps(config.algorithm)}, rounds={config.rounds}, every={config.every}); "
                f"lower replicas, local_steps, the testbed's size or rounds/every")


def require(nbytes_needed: int, what: str, device: str | torch.device = "cpu") -> None:
    """Refuse an allocation of ``nbytes_needed`` bytes described by ``what`` (naming its parameters) that exceeds
    the free memory of ``device``; for testbeds that build large tensors before a run can be estimated."""
    free = available_bytes(device)
    if nbytes_needed > free:
        raise ValueError(f"{what} would need {human(nbytes_needed)} of memory but {human(free)} are available")
