"""Sphinx extension of theorylab's documentation: pages generated from the registry at build time.

On ``builder-inited`` (before sphinx-gallery runs the tutorials) it writes, under ``docs/generated/``:

* ``claims/<paper>.rst`` and ``claims/index.rst`` — the claim catalogue: every built-in claim of the registry
  (:func:`theorylab.registry.entries`), grouped by paper, with its statement, source, the quote it tests, the
  verdict it is expected to reach, the verdict of the committed reference run (``reference/full-*/claims.json``,
  the newest), its figure when the gallery holds one, and the command that reproduces it;
* ``figures.rst`` — the figure gallery: every registered figure, its one-line summary, recipe module, command,
  and the image rendered by ``make gallery`` (``figures/gallery/``) when there is one;
* ``errata.md`` — the errata report and the reviews of the newest reference run, included through MyST.

Every claim is also a ``claim`` object of Sphinx's standard domain (``.. claim:: ID``), so the search page finds it
by its id and ``:claim:`ID``` links to it.  Text from the registry is escaped (every punctuation character gets a
backslash), so no statement is ever read as reStructuredText markup.  A file is rewritten only when its content
changes, so an incremental build re-reads only what changed.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
OUT = DOCS / "generated"
GALLERY = ROOT / "figures" / "gallery"


def escape(text: str) -> str:
    """``text`` as literal reStructuredText: every punctuation character backslash-escaped, lines joined."""
    return re.sub(r"([^\w\s]|_)", r"\\\1", " ".join(str(text).split()))


def heading(text: str, char: str, over: bool = False) -> str:
    line = char * max(len(text), 3)
    return f"{line}\n{text}\n{line}\n" if over else f"{text}\n{line}\n"


def write(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (keeps Sphinx's incremental build incremental)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def reference_run() -> Path | None:
    """The newest committed full run, ``reference/full-DATE/`` (None when there is none)."""
    runs = sorted(p for p in (ROOT / "reference").glob("full-*") if (p / "claims.json").is_file())
    return runs[-1] if runs else None


def gallery_image(name: str) -> Path | None:
    """The gallery's PNG of figure ``name``: ``NAME.png``, else the first ``NAME-*.png`` (e.g. a quick variant)."""
    exact = GALLERY / f"{name}.png"
    if exact.is_file():
        return exact
    variants = sorted(GALLERY.glob(f"{name}-*.png"))
    return variants[0] if variants else None


def claim_figure(claim, reference: dict | None) -> str | None:
    """The name of the figure a claim attaches: the reference run's file name, else the ``figure_path("...")``
    its code calls (read from its source; None when neither)."""
    if reference and reference.get("figure"):
        return Path(reference["figure"]).stem
    import inspect

    try:
        source = inspect.getsource(claim.check)
    except (OSError, TypeError):
        return None
    found = re.search(r'figure_path\(\s*"([^"]+)"', source)
    return found.group(1) if found else None


def image_lines(path: Path, page: Path, alt: str, width: str = "100%") -> list[str]:
    """An ``image`` directive for ``path`` (a file of the checkout), relative to the generated ``page``."""
    rel = Path("../" * len(page.relative_to(DOCS).parent.parts)) / ".." / path.relative_to(ROOT)
    return [f".. image:: {rel.as_posix()}", f"   :alt: {alt}", f"   :width: {width}", ""]


def claim_block(claim, reference: dict | None, page: Path) -> list[str]:
    lines = [heading(claim.id, "-"), f".. claim:: {claim.id}", "", escape(claim.statement), ""]
    fields = [("Kind", escape(claim.kind)), ("Source", escape(claim.source))]
    if claim.where:
        fields.append(("Where", escape(claim.where)))
    expected = escape(claim.expect) + (f" (full mode: {escape(claim.expect_full)})" if claim.expect_full else "")
    fields.append(("Expected verdict", expected))
    if reference is not None:
        verdict = f"**{escape(reference['label'])}**"
        head = reference.get("headline")
        if head:
            verdict += (f" — deciding check: {escape(head)}: measured {escape(_num(reference.get('measured')))}, "
                        f"theory {escape(_num(reference.get('theory')))} ({escape(reference.get('relation') or '')}, "
                        f"basis {escape(reference.get('basis') or '')})")
        fields.append(("Reference run", verdict))
    else:
        fields.append(("Reference run", "not in the reference run (added after it, or not run there)"))
    if claim.severity:
        fields.append(("Severity", escape(claim.severity)))
    if claim.checks or claim.partial:
        cited = ", ".join(claim.checks) + (f"; in part: {', '.join(claim.partial)}" if claim.partial else "")
        fields.append(("Digest checks", escape(cited)))
    lines += [f":{name}: {value}" for name, value in fields] + [""]
    if claim.quote:
        lines += ["The words it tests:", "", ".. code-block:: text", "   :class: claim-quote", "",
                  "   " + " ".join(claim.quote.split()), ""]
    for title, text in (("Why this verdict", claim.because), ("The authors' defence", claim.defence)):
        if text:
            lines += [f"*{title}.* {escape(text)}", ""]
    figure = claim_figure(claim, reference)
    image = gallery_image(figure) if figure else None
    if image is not None:
        lines += [f"Figure ``{figure}`` (``theorylab figure {figure}`` renders it alone):", ""]
        lines += image_lines(image, page, figure)
    lines += ["Reproduce:", "", ".. code-block:: bash", "", f"   theorylab validate {claim.id}", ""]
    return lines


def _num(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def claim_pages() -> list[str]:
    from theorylab.registry import BUILT_IN, entries, load_all
    from theorylab.sources import papers

    load_all()
    run = reference_run()
    reference = {}
    if run is not None:
        reference = {row["id"]: row for row in json.loads((run / "claims.json").read_text(encoding="utf-8"))}
    by_paper = defaultdict(list)
    known = papers()
    for name, entry in sorted(entries("claim").items()):
        if entry.owner != BUILT_IN:
            continue
        by_paper[name.split(".")[0]].append(entry.obj)
    pages = []
    for prefix, claims in by_paper.items():
        page = OUT / "claims" / f"{prefix}.rst"
        title = known[prefix].title if prefix in known else prefix
        counts = defaultdict(int)
        for c in claims:
            counts[c.expect] += 1
        lines = [f".. _claims-{prefix}:", "", heading(escape(title), "="),
                 f"{len(claims)} claims, ``theorylab validate {prefix}`` runs them all.  Expected verdicts in quick "
                 "mode: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) + ".", ""]
        if run is not None:
            lines += [f"Reference-run verdicts are those of ``{run.relative_to(ROOT).as_posix()}`` (full mode).", ""]
        lines += [".. contents:: Claims", "   :local:", "   :depth: 1", "   :backlinks: none", ""]
        for c in claims:
            lines += claim_block(c, reference.get(c.id), page)
        write(page, "\n".join(lines))
        pages.append(prefix)
    total = sum(len(v) for v in by_paper.values())
    index = [heading("Claim catalogue", "="),
             f"Every built-in claim of the registry ({total} claims), generated at build time from "
             "``theorylab.registry``: its statement, the paper's words it tests, the verdict it is expected to reach, "
             "the verdict of the committed reference run, its figure and the command that reproduces it.  A verdict "
             "is *holds*, *violated* or *inconclusive*; a claim that tests our digest rather than the paper says so "
             "in its kind.", "", ".. toctree::", "   :maxdepth: 1", ""]
    index += [f"   {prefix}" for prefix in pages] + [""]
    write(OUT / "claims" / "index.rst", "\n".join(index))
    return pages


def figures_page() -> None:
    from theorylab.registry import BUILT_IN, entries, load_all

    load_all()
    page = OUT / "figures.rst"
    lines = [heading("Figure gallery", "="),
             "Every registered figure recipe (``theorylab list figure``): what it shows, the recipe module, the "
             "command that renders it and, when ``make gallery`` has rendered it into ``figures/gallery/``, the image.  A "
             "claim that checks the numbers a figure plots calls the same recipe.", ""]
    for name, entry in sorted(entries("figure").items()):
        if entry.owner != BUILT_IN:
            continue
        module = getattr(entry.obj, "__module__", "")
        lines += [heading(name, "-"), escape(entry.summary), "", f":Recipe: ``{module}``",
                  f":Command: ``theorylab figure {name}``", ""]
        image = gallery_image(name)
        if image is not None:
            lines += image_lines(image, page, name)
        else:
            lines += ["*Not in the rendered gallery* (``make gallery`` or the command above renders it).", ""]
    write(page, "\n".join(lines))


def errata_page() -> None:
    run = reference_run()
    page = OUT / "errata.md"
    if run is None or not (run / "errata.md").is_file():
        write(page, "# Errata\n\nNo reference run with an errata report is committed.\n")
        return
    rel = Path("../..") / run.relative_to(ROOT)
    text = ["# Errata report\n",
            f"The findings of the reference run `{run.relative_to(ROOT).as_posix()}` (full mode), as "
            "`theorylab errata` writes them: each quotes the paper, gives the witness that decides it, the readings "
            "that were tried, the authors' strongest defence, a severity and the command that reproduces it.  "
            "`theorylab errata [PAPER...]` regenerates the report from a run of your own.\n",
            f"```{{include}} {(rel / 'errata.md').as_posix()}\n:heading-offset: 1\n```\n"]
    if (run / "reviews.md").is_file():
        text.append(f"```{{include}} {(rel / 'reviews.md').as_posix()}\n:heading-offset: 1\n```\n")
    write(page, "\n".join(text))


def generate(app) -> None:
    claim_pages()
    figures_page()
    errata_page()


def setup(app):
    app.add_object_type("claim", "claim", objname="claim", indextemplate="pair: %s; claim")
    app.connect("builder-inited", generate, priority=100)  # before sphinx-gallery (priority 500)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
