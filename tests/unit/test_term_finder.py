"""A term's few spellings, looked for one by one, are found exactly where the
regular expression of its character classes finds them."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from services.common.analysis import initialise
from services.search import term_finder
from services.search.term_finder import TermFinder

TEXT = st.text(alphabet="软軟件體优優秀aApPtTＡ1-_. 中華华x", max_size=60)
# Repeated characters too: occurrences that touch or overlap decide what counts.
TERM = st.sampled_from(["软件", "优秀", "apt", "a", "aa", "pt", "1", "中华", "件", "优优", "x"])


@pytest.fixture(scope="module", autouse=True)
def _tables() -> None:
    initialise()


def _both(term: str, monkeypatch: pytest.MonkeyPatch) -> tuple[TermFinder, TermFinder]:
    with monkeypatch.context() as m:
        m.setattr(term_finder, "MAX_SPELLINGS", 10_000)  # spellings, whatever their number
        literal = TermFinder(term)
        m.setattr(term_finder, "MAX_SPELLINGS", 0)
        pattern = TermFinder(term)
    assert literal._spellings is not None and pattern._pattern is not None
    return literal, pattern


@settings(max_examples=400, deadline=None)
@given(TEXT, TERM, st.integers(0, 60))
@example("软件軟件", "软件", 0)  # touching: both
@example("軟件软件", "软件", 0)  # the second spelling first
@example("優优优", "优优", 1)  # overlapping: the leftmost
@example("aaa", "aa", 0)  # the first is inside a longer word, the second is not
@example("aAa", "aa", 0)
def test_spellings_find_what_the_pattern_finds(text: str, term: str, pos: int) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        literal, pattern = _both(term, monkeypatch)
    assert list(literal.spans(text)) == list(pattern.spans(text))
    assert literal.first(text, pos) == pattern.first(text, pos)


def test_a_latin_word_is_not_found_inside_a_longer_one() -> None:
    assert list(TermFinder("apt").spans("aptx APT Ａpt apt")) == [(5, 8), (9, 12), (13, 16)]


def test_a_word_of_many_spellings_gets_a_pattern() -> None:
    assert TermFinder("configuration")._pattern is not None  # each letter has its cases, widths, accents
    assert TermFinder("软件")._spellings == ("软件", "軟件")
