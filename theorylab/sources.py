"""The source works behind the claims: which seed text and digest each paper's claims quote, and finding a quote.

Each package of ``validations/`` registers its :class:`Paper` (``register_paper`` in its ``__init__``): the prefix of
its claim ids, the seed file of ``shared/seeds/`` that holds the paper's text, its digests in ``shared/spec/`` and a
title for the errata report.  A claim's ``quote`` is looked up in that text by :func:`find_quote`, after
:func:`normalise` has undone what PDF extraction does to words: line breaks and runs of spaces, words hyphenated
across a line ("two-\\nlevel", "two- level", "twolevel" all read "twolevel"), typographic quotes and dashes.  A
quote may skip words with ``" … "``: its pieces must occur in order.

The texts are found under ``$THEORYLAB_SHARED`` or the ``shared/`` folder beside the repository (``../shared``);
:func:`shared_dir` is ``None`` when neither exists (an installed wheel), and then no quote can be checked.

A plugin (:mod:`theorylab.plugins`) registers its own source work with ``text=`` — the path of a file it ships
that states its lemma in the author's own words (``theorylab new`` writes ``lemma.md``): its claims are then
*statements* quoted from that text like any paper's, and :func:`quote_found` finds their quotes there.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from theorylab.registry import entries, register

GAP = " … "  # joins the pieces of a quote whose words are apart in the text


@dataclass(frozen=True)
class Paper:
    prefix: str  # the first part of its claims' ids
    seed: str  # file name in shared/seeds/
    title: str  # authors and title, as the errata report heads the paper's section
    digests: tuple[str, ...]  # file names in shared/spec/
    costs: Path | None = None  # its claims' full-mode costs (JSON, :mod:`theorylab.plan`)
    text: Path | None = None  # the source text itself, for a work outside shared/seeds/ (a plugin's own lemma)
    catalogue: Path | None = None  # what its digest asks of the toolkit (JSON, :mod:`theorylab.coverage`)


def register_paper(prefix: str, seed: str, title: str, digests: tuple[str, ...] = (), costs: Path | None = None,
                   text: Path | str | None = None, catalogue: Path | str | None = None) -> Paper:
    """Declare a source work (called once, from its ``validations/<prefix>/__init__.py``, or from a plugin);
    ``costs`` is the JSON file of its claims' full-mode costs (:mod:`theorylab.plan`); ``text`` the file that holds
    the work's text when it is not a seed of ``shared/seeds/`` (a plugin passes its ``lemma.md`` and ``seed=""``):
    it must exist; ``catalogue`` the JSON file listing the checks, algorithms and figures its digest asks for
    (:mod:`theorylab.coverage`), which must exist too."""
    if text is not None:
        text = Path(text)
        if not text.is_file():
            raise ValueError(f"paper {prefix!r}: its text {text} is not a file")
    if catalogue is not None:
        catalogue = Path(catalogue)
        if not catalogue.is_file():
            raise ValueError(f"paper {prefix!r}: its catalogue {catalogue} is not a file")
    return register("paper", prefix, title)(Paper(prefix, seed, title, tuple(digests), costs, text, catalogue))


def papers() -> dict[str, Paper]:
    return {name: e.obj for name, e in entries("paper").items()}


def shared_dir() -> Path | None:
    """``$THEORYLAB_SHARED``, else ``shared/`` beside the repository; None when neither holds ``seeds/``."""
    env = os.environ.get("THEORYLAB_SHARED")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "shared")
    return next((c for c in candidates if (c / "seeds").is_dir()), None)


_TYPOGRAPHY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                             "\u2014": "-", "\u2212": "-", "\u00a0": " "})


def normalise(text: str) -> str:
    """Text as compared: NFKC, typographic quotes and dashes made plain, a hyphen between letters dropped together
    with any line break or spaces after it (so hyphenation and its absence compare equal), whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHY)
    text = re.sub(r"(?<=[^\W\d_])-\s*(?=[^\W\d_])", "", text)
    return " ".join(text.split())


@lru_cache(maxsize=16)
def _normalised(path: Path) -> str:
    return normalise(path.read_text(encoding="utf-8"))


def find_quote(quote: str, text: str) -> int | None:
    """Where the (normalised) quote begins in the (normalised) text, its pieces split at :data:`GAP` found in order;
    None when a piece is missing or out of order."""
    pieces = [normalise(p) for p in quote.split(GAP.strip())]
    if not quote.strip() or not all(pieces):
        return None
    start = position = text.find(pieces[0])
    if start < 0:
        return None
    position += len(pieces[0])
    for piece in pieces[1:]:
        position = text.find(piece, position)
        if position < 0:
            return None
        position += len(piece)
    return start


def source_texts(paper: Paper, of: str = "seed") -> list[Path]:
    """The files a quote of ``paper`` is looked up in: its seed text (``of="seed"``) or its digests
    (``of="digest"``); empty when the shared folder is absent.  A work with its own ``text`` is looked up there (it
    has no digest)."""
    if paper.text is not None:
        if of not in ("seed", "digest"):
            raise ValueError(f"of must be 'seed' or 'digest'; got {of!r}")
        return [paper.text] if of == "seed" else []
    root = shared_dir()
    if root is None:
        return []
    if of == "seed":
        return [root / "seeds" / paper.seed]
    if of == "digest":
        return [root / "spec" / name for name in paper.digests]
    raise ValueError(f"of must be 'seed' or 'digest'; got {of!r}")


def quote_found(quote: str, paper: Paper, of: str = "seed") -> bool:
    """Whether ``quote`` occurs in one of ``paper``'s texts of kind ``of`` (see :func:`source_texts`)."""
    return any(find_quote(quote, _normalised(path)) is not None for path in source_texts(paper, of))
