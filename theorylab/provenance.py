"""Where a validation's verdicts came from: ``OUT/provenance.json`` beside every ``claims.json``.

It records what a reader needs to reproduce or weigh a run: the mode and seed, the decision rule for orderings, the
git commit (and whether the working tree differed from it) with the code fingerprint of :mod:`theorylab.journal`,
the library versions, the machine (CPU model, usable cores, memory, GPU), how the claims were scheduled (workers),
when the run started and ended and how long it took, how many claims were computed or read back from the
journal, and the plugins loaded (origin and source fingerprint, :mod:`theorylab.plugins`) when there were any.
:func:`publish` merges several runs' outputs into one dated reference folder.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from collections import Counter
from pathlib import Path
from typing import Sequence

import theorylab
from theorylab.claims import Result


def _git(*args: str) -> str | None:
    top = Path(__file__).resolve().parents[1]
    try:
        done = subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def machine() -> dict:
    """This machine in a few fields (CPU model, usable cores, memory, GPU), for reading a run's durations."""
    import torch

    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                 if line.startswith("model name")]
        cpu = names[0] if names else cpu
    memory = None
    if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
        memory = round(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2 ** 30, 1)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"cpu": cpu, "cores": cores, "memory_gib": memory, "gpu": gpu, "system": platform.platform()}


def record(results: Sequence[Result], *, mode: str, seed: int, anytime: bool, workers: int | None,
           started: datetime.datetime, resumed: int) -> dict:
    """The provenance of one ``validate`` run (module docstring)."""
    import numpy
    import torch

    from theorylab.journal import fingerprint

    finished = datetime.datetime.now(datetime.timezone.utc)
    commit = _git("rev-parse", "HEAD")
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "mode": mode, "seed": seed, "orderings": "confidence sequences, seeds added (--until-decided)" if anytime
        else "fixed-seed t-intervals",
        "commit": commit, "working_tree_differs": None if dirty is None else bool(dirty), "code": fingerprint(),
        "versions": {"theorylab": theorylab.__version__, "python": platform.python_version(),
                     "torch": torch.__version__, "numpy": numpy.__version__},
        "machine": machine(), "workers": workers or 1,
        "started": started.isoformat(timespec="seconds"), "finished": finished.isoformat(timespec="seconds"),
        "duration_s": round((finished - started).total_seconds(), 1),
        "claims": len(results), "read_from_journal": resumed,
        "verdicts": dict(Counter(r.verdict for r in results)),
        **_plugins(),
    }


def _plugins() -> dict:
    """``{"plugins": {namespace: {"origin", "fingerprint"}}}`` for the plugins loaded in this run; empty without."""
    from theorylab.plugins import loaded

    found = {ns: {"origin": p.origin, "fingerprint": p.fingerprint} for ns, p in sorted(loaded().items())}
    return {"plugins": found} if found else {}


def publish(outs: Sequence[Path], dest: Path) -> tuple[list[Result], list[dict]]:
    """The results and provenances of several ``validate`` output folders, merged in order (a later folder's result
    for the same claim wins).  A finished run contributes its ``claims.json`` and ``provenance.json``; a run that was
    stopped before it finished contributes the claims its ``journal.jsonl`` holds, marked ``partial``."""
    from theorylab.html_report import load_results, result_of

    merged: dict[str, Result] = {}
    segments = []
    for out in outs:
        out = Path(out)
        if (out / "claims.json").is_file():
            found = load_results(out / "claims.json")
            source = out / "provenance.json"
            segment = {"folder": out.name, **(json.loads(source.read_text()) if source.is_file() else {})}
        elif (out / "journal.jsonl").is_file():
            rows = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines() if line.strip()]
            found = [result_of(row["result"], out / "journal.jsonl") for row in rows]
            stamps = {(row["mode"], row["seed"], row["code"]) for row in rows}
            mode, seed, code = stamps.pop() if len(stamps) == 1 else ("mixed", None, None)
            segment = {"folder": out.name, "partial": True, "mode": mode, "seed": seed, "code": code,
                       "claims": len({r.claim.id for r in found}),
                       "note": "stopped before it finished: the claims its journal holds"}
        else:
            raise ValueError(f"{out} holds neither claims.json nor journal.jsonl: not a validate output folder")
        for r in found:
            merged[r.claim.id] = r
        segments.append(segment)
    return list(merged.values()), segments
