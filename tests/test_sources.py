"""Quotes are found in the seed texts as PDF extraction left them: hyphenation, line breaks, typography."""

import pytest

from theorylab.sources import find_quote, normalise, papers, quote_found, shared_dir


def test_normalise_undoes_line_breaks_hyphenation_and_typography():
    assert normalise("a two-\nlevel   momentum") == normalise("a twolevel momentum") == "a twolevel momentum"
    assert normalise("client\u2019s \u201cbest\u201d \u2013 rate") == "client's \"best\" - rate"
    assert normalise("x - 1") == "x - 1" and normalise("1-2") == "1-2"  # minus signs and ranges stay


def test_find_quote_in_order_with_gaps():
    text = normalise("We prove that the rate is linear. Later, under A2, the bound holds for every t.")
    assert find_quote("the rate is linear", text) == text.index("the rate")
    assert find_quote("We prove … under A2 … every t.", text) == 0
    assert find_quote("under A2 … We prove", text) is None  # pieces out of order
    assert find_quote("the rate is quadratic", text) is None
    assert find_quote("   ", text) is None


def test_every_paper_names_a_seed_and_its_digests():
    found = papers()
    assert set(found) == {"fedawe", "thesis", "afga", "performative", "masfl"}
    root = shared_dir()
    if root is None:
        pytest.skip("shared/seeds is not beside the repository (set THEORYLAB_SHARED)")
    for paper in found.values():
        assert (root / "seeds" / paper.seed).is_file(), paper
        assert all((root / "spec" / d).is_file() for d in paper.digests), paper


def test_a_known_sentence_is_found_and_a_paraphrase_is_not():
    if shared_dir() is None:
        pytest.skip("shared/seeds is not beside the repository (set THEORYLAB_SHARED)")
    masfl = papers()["masfl"]
    assert quote_found("MasFL incorporates a two-level (both client- and server-side) momentum", masfl)
    assert not quote_found("MasFL incorporates a three-level momentum", masfl)
    assert quote_found("the largest staleness of 10 seeds", masfl, of="digest") is False  # not in the digest either
