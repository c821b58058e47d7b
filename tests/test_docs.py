"""The documentation site (``make docs`` -> docs/_build/html) in headless Chromium: pages load, math renders, search
finds a claim, and nothing is fetched from the network.

The site is served from localhost by ``http.server`` in a thread (the search page loads its index by a script tag,
which browsers refuse for ``file://`` pages in some settings); Chromium runs headless with background networking off
and dumps each page's DOM after its scripts ran (``--virtual-time-budget`` lets MathJax and the search finish).
Skipped, with the reason, when the site has not been built (``make docs``) or no Chromium is installed
(``make docs-test`` installs Debian's chromium when it runs as root with apt-get).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import threading
from html import unescape
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("THEORYLAB_DOCS_SITE") or ROOT / "docs" / "_build" / "html").resolve()  # `make docs-test`
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
BROWSER_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions")
MATH = 'class="math notranslate nohighlight"'  # Sphinx's wrapper of every formula (inline and display)

pytestmark = pytest.mark.skipif(not (SITE / "index.html").is_file(),
                                reason=f"the documentation site is not built ({SITE} has no index.html): run "
                                       "`make docs` first")


@pytest.fixture(scope="module")
def browser() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        pytest.skip("no headless Chromium on PATH: `make docs-test` installs Debian's chromium when it runs as root "
                    "with apt-get; elsewhere install chromium to run this test")
    return found


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no request log on the test's output
        pass


@pytest.fixture(scope="module")
def site():
    """The built site on http://127.0.0.1:PORT/ for the module's tests."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def dom(browser, site, tmp_path_factory):
    """``dom(path)``: the DOM of ``site + path`` after its scripts ran (cached per path)."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    cache: dict[str, str] = {}

    def dump(path: str) -> str:
        if path not in cache:
            done = subprocess.run([browser, *BROWSER_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=15000",
                                   "--dump-dom", site + path], capture_output=True, text=True, timeout=180)
            assert done.returncode == 0, done.stderr[-2000:]
            assert "<body" in done.stdout, f"{path}: no page in Chromium's dump; stderr: {done.stderr[-2000:]}"
            cache[path] = done.stdout
        return cache[path]

    return dump


def _math_rendered(html: str, path: str, at_least: int) -> None:
    """Every formula of the page became MathJax output, none is an error, and there are at least ``at_least``."""
    formulas = html.count(MATH)
    rendered = html.count("<mjx-container")
    assert formulas >= at_least, f"{path}: {formulas} formulas, expected at least {at_least}"
    assert rendered >= formulas, f"{path}: MathJax rendered {rendered} of {formulas} formulas"
    assert "<mjx-merror" not in html, f"{path}: MathJax reports an error in a formula"


def test_the_index_loads_and_links_every_part(dom):
    html = dom("index.html")
    assert "<title>theorylab" in html
    for target in ("gallery/index.html", "generated/claims/index.html", "generated/figures.html",
                   "generated/errata.html", "api/index.html"):
        assert f'href="{target}"' in html, f"the index does not link {target}"
    _math_rendered(html, "index.html", 1)


def test_an_api_page_renders_its_docstrings_math(dom):
    html = dom("api/exact.html")
    assert 'id="module-theorylab.exact.fedavg_moments"' in html
    assert 'id="theorylab.exact.fedavg_moments.fedavg_moments"' in html  # a function's entry, from its docstring
    _math_rendered(html, "api/exact.html", 20)


def test_a_tutorial_page_shows_its_math_output_and_figures(dom):
    html = dom("gallery/plot_01_fedawe_bias.html")
    assert "FedAvg" in html and "Proposition 1 held in all" in html  # the script's printed output
    images = re.findall(r'<img[^>]+src="([^"]*sphx_glr_plot_01[^"]*\.png)"', html)
    assert len(images) >= 2, "the tutorial's figures are missing"
    for src in images:
        assert (SITE / "gallery" / src).resolve().is_file(), src
    _math_rendered(html, "gallery/plot_01_fedawe_bias.html", 10)


def test_search_finds_a_claim_by_its_id(dom):
    html = dom("search.html?q=fedawe.prop1")
    results = re.search(r'<ul[^>]*class="search"[^>]*>(.*?)</ul>', html, re.S)
    assert results is not None, "the search page shows no result list"
    links = re.findall(r'<a href="([^"]+)"', results.group(1))
    assert any(link.startswith("generated/claims/fedawe.html#") and "prop1" in link for link in links), links[:10]


def _text(html: str) -> str:
    """The page's text: tags dropped (highlighted code is split into spans), entities decoded."""
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_the_claim_catalogue_and_errata_pages_load(dom):
    claims = _text(dom("generated/claims/fedawe.html"))
    assert "fedawe.prop1" in claims and "theorylab validate fedawe.prop1" in claims
    assert "Expected verdict" in claims and "Reference run" in claims
    errata = _text(dom("generated/errata.html"))
    assert "afga.appc_projection" in errata and "Reproduce" in errata


def test_the_site_loads_nothing_from_the_network():
    """No page or stylesheet of the site refers to a remote script, stylesheet, image or frame (so it works
    offline); MathJax is the bundled copy."""
    remote = re.compile(r'<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)="(?:https?:)?//', re.I)
    offenders = [str(p.relative_to(SITE)) for p in SITE.rglob("*.html") if remote.search(p.read_text("utf-8"))]
    assert offenders == [], offenders
    assert not [p for p in (SITE / "_static").glob("*.css") if re.search(r"@import\s+url\(\s*['\"]?https?:",
                                                                         p.read_text("utf-8"))]
    assert (SITE / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert 'src="../_static/mathjax/tex-chtml.js"' in (SITE / "api" / "exact.html").read_text("utf-8")
