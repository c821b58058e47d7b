"""The tutorials (tutorials/plot_*.py): each runs as a script on the CPU and its asserts hold; each is written the way
the documentation's gallery needs it (a titled docstring with the learning goal, the math and the checks that must
hold, then ``# %%`` cells).  Together the five take about 40 s on two shared cores, so running them is a slow test
(``make test-slow``); ``make docs`` runs them as well.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "tutorials").glob("plot_*.py"))
TOPICS = ("plot_01_fedawe_bias", "plot_02_performative", "plot_03_markov_cafed", "plot_04_staleness_masfl",
          "plot_05_plugin")


def test_the_five_tutorials_are_there():
    assert [p.stem for p in TUTORIALS] == list(TOPICS)
    assert (ROOT / "tutorials" / "GALLERY_HEADER.rst").is_file()  # sphinx-gallery's header of the gallery


@pytest.mark.parametrize("script", TUTORIALS, ids=lambda p: p.stem)
def test_a_tutorial_states_its_goal_math_and_checks(script):
    source = script.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source), clean=False)
    assert doc is not None, f"{script.name}: no docstring (the gallery page's title and introduction)"
    title, underline = doc.strip().splitlines()[:2]
    assert set(underline) == {"="} and len(underline) >= len(title), f"{script.name}: the docstring needs a title"
    for part in ("**Learning goal.**", "**Source.**", "**Checks that must hold", ".. math::"):
        assert part in doc, f"{script.name}: the docstring has no {part!r}"
    assert source.count("\n# %%\n") >= 3, f"{script.name}: fewer than three code cells"
    assert source.count("assert ") >= 3, f"{script.name}: fewer than three checks"


@pytest.mark.slow(reason="the five take about 40 s; `make docs` executes every tutorial too and fails on a failed "
                         "assert (sphinx-gallery's abort_on_example_error)")
@pytest.mark.parametrize("script", TUTORIALS, ids=lambda p: p.stem)
def test_a_tutorial_runs_on_the_cpu(script, tmp_path):
    """Runs the script as a user would (``python tutorials/plot_...py``, figures to the Agg backend); a failed
    assert is a non-zero exit.  Temporary folders (claims' figures, the plugin) go under ``tmp_path``."""
    env = {**os.environ, "MPLBACKEND": "Agg", "TMPDIR": str(tmp_path)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    seconds = time.perf_counter() - started
    assert done.returncode == 0, (f"{script.name} failed after {seconds:.0f} s:\n{done.stdout[-3000:]}\n"
                                  f"{done.stderr[-3000:]}")
