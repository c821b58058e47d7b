"""The HTML report: every claim rendered with its deciding check, a faithful reload from claims.json, the `report`
command, and the page's sort and filter run in headless Chromium (skipped with the reason when it is absent)."""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from theorylab import html_report
from theorylab.checks import at_most, equal
from theorylab.claims import Claim, Context, Evidence, evaluate
from theorylab.app.cli import main
from helpers import tiny_figure
from theorylab.report import as_json

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
BROWSER_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync")


def _results(tmp_path):
    """Five claims of two papers: holds (with a figure and an infinite tightness), a violated one whose first check
    holds, a vacuous hold, an inconclusive one and one whose code raises."""
    figure = tiny_figure(tmp_path / "figures" / "alpha-one.png")
    samples = np.random.default_rng(0).normal(0.0, 1.0, 20)
    checks = {
        "alpha.one": lambda ctx: Evidence([at_most("zero under a bound", 0.0, 1.0, basis="closed_form")], figure,
                                          notes=["a <note> with markup"]),
        "alpha.two": lambda ctx: Evidence([equal("first, fine", 1.0, 1.0, 1e-9, basis="closed_form"),
                                           equal("second, failing", 2.0, 1.0, 1e-9, basis="closed_form")],
                                          errata=["the paper's constant is off"], deviations=["smaller scale"]),
        "beta.three": lambda ctx: Evidence([at_most("loose bound", 1.0, 500.0, basis="closed_form")]),
        "beta.four": lambda ctx: Evidence([at_most("noise mean <= 0", samples.mean(), 0.0, basis="monte_carlo",
                                                   samples=samples)]),
        "beta.five": lambda ctx: 1 / 0,
    }
    expect = {"alpha.two": "violated", "beta.three": "inconclusive", "beta.four": "inconclusive"}
    claims = [Claim(i, f"source of {i}", f"statement <b>{i}</b>", fn, expect=expect.get(i, "holds"),
                    because="on purpose" if i in expect else "") for i, fn in checks.items()]
    return [evaluate(c, Context(figure_dir=tmp_path / "figures")) for c in claims]


def _rows(html: str) -> dict[str, bool]:
    """Claim id -> whether its summary row is hidden, read from a rendered page or a dumped DOM."""
    rows = re.findall(r'<tr class="claim-row"([^>]*)>', html)
    return {re.search(r'data-id="([^"]+)"', r).group(1): " hidden" in r for r in rows}


def test_page_lists_every_claim_with_its_deciding_check(tmp_path):
    results = _results(tmp_path)
    page = html_report.render(results, tmp_path, "quick", 0)
    assert _rows(page) == dict.fromkeys(["alpha.one", "alpha.two", "beta.three", "beta.four", "beta.five"], False)
    violated = re.search(r'data-id="alpha.two".*?</tr>', page, re.S).group(0)
    assert "second, failing" in violated and "first, fine" not in violated and "VIOLATED" in violated
    assert "holds (vacuous x500)" in page and "ZeroDivisionError" in page
    assert "the paper&#39;s constant is off" in page and "smaller scale" in page
    assert "<b>alpha.one</b>" not in page and "statement &lt;b&gt;alpha.one&lt;/b&gt;" in page  # escaped
    assert page.count("data:image/png;base64,") == 1  # the figure is embedded, the page stands alone
    assert page.count("Expected on this testbed") == 1  # only where the verdict differs from the expectation
    assert "Expected on this testbed: <b>inconclusive</b> (on purpose)" in page
    assert re.findall(r'data-id="([^"]+)" data-paper="[^"]+" data-verdict="inconclusive"', page) == ["beta.four"]


def test_claims_json_reloads_to_the_same_results_and_the_report_command_renders_it(tmp_path, capsys):
    results = _results(tmp_path)
    (tmp_path / "claims.json").write_text(as_json(results))
    reloaded = html_report.load_results(tmp_path / "claims.json")
    assert as_json(reloaded) == as_json(results)
    assert json.loads(as_json(results))[0]["checks"][0]["tightness"] == "inf"
    moved = tmp_path / "moved"
    shutil.copytree(tmp_path / "figures", moved / "figures")
    shutil.copy(tmp_path / "claims.json", moved / "claims.json")
    shutil.rmtree(tmp_path / "figures")  # the recorded figure path is gone: found again under OUT/figures
    assert main(["report", "--out", str(moved)]) == 0
    page = (moved / "report.html").read_text()
    assert str(moved / "report.html") in capsys.readouterr().out
    assert len(_rows(page)) == 5 and page.count("data:image/png;base64,") == 1


def test_report_without_claims_json_is_a_usage_error(tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path)]) == 2
    assert "claims.json does not exist" in capsys.readouterr().err


def _browser() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        pytest.skip("no headless Chromium on PATH: `make test` installs Debian's chromium when it runs as root with "
                    "apt-get; elsewhere install chromium to run this test")
    return found


def _chromium(browser: str, tmp_path, *args: str) -> str:
    done = subprocess.run([browser, *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_page_sorts_and_filters_in_headless_chromium(tmp_path):
    browser = _browser()
    page = html_report.write(_results(tmp_path), tmp_path, "quick", 0).as_uri()
    everything = _rows(_chromium(browser, tmp_path, "--dump-dom", page))
    assert everything == dict.fromkeys(["alpha.one", "alpha.two", "beta.three", "beta.four", "beta.five"], False)
    violated = _chromium(browser, tmp_path, "--dump-dom", page + "?verdict=violated")
    assert _rows(violated) == {**dict.fromkeys(everything, True), "alpha.two": False}
    assert "1 of 5 claims" in violated
    beta = _rows(_chromium(browser, tmp_path, "--dump-dom", page + "?paper=beta&sort=id&order=desc"))
    assert list(beta) == ["beta.three", "beta.four", "beta.five", "alpha.two", "alpha.one"]  # sorted by id, desc
    assert beta == {"beta.three": False, "beta.four": False, "beta.five": False, "alpha.two": True, "alpha.one": True}
    shot = tmp_path / "report.png"
    _chromium(browser, tmp_path, "--window-size=1200,900", f"--screenshot={shot}", page + "?paper=alpha")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
