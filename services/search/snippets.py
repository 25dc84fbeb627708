"""Query-biased snippets and highlighted titles, as safe HTML.

Page text is untrusted: everything is HTML-escaped and the only markup added is
``<em>`` around matched words, so templates may output the result unescaped.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from html import escape
from typing import NamedTuple

from services.common.analysis.fold import regional_forms
from services.common.analysis.han import HAN
from services.search.term_finder import ASCII_ALNUM, TermFinder, finder

SNIPPET_CHARS = 150
TITLE_CHARS = 80
ELLIPSIS = "…"
# Context kept before the first match of the window, so the reader sees what leads in.
_LEAD_CHARS = 30
_SPACES = re.compile(r"\s+")
_SPACE = re.compile(r"\s")
_NON_SPACE = re.compile(r"\S")
# Matches looked at for the best window: a term on every line of a long page does not
# need listing to its end to find where the terms crowd together.
_MAX_MATCHES = 64
_HAN_CHAR = re.compile(f"[{HAN}]")
# Characters of a body scanned for the best window; see _region.
_SCAN_CHARS = 20_000


class _Match(NamedTuple):
    start: int
    end: int
    term: int  # which of the matcher's terms: variants of one term count as one


class _Matcher:
    """The query's terms, each its own pattern, longest first so that 中华人民共和国
    wins over 中华 at the same place. Latin words match only as whole words (``a``
    must not light up inside "apt"); Chinese has no word boundaries to respect.

    Terms are folded text (软件, apt); each character matches every form that folds
    to it (軟, Ａ), so the page's own script is what gets marked. A finder per term,
    made once per process (services/search/term_finder.py), rather than one alternation
    per query, since compiling the character classes costs more than the index search."""

    def __init__(self, terms: tuple[str, ...]) -> None:
        self.terms = terms
        self.finders = [finder(t) for t in terms]

    def matches(self, text: str, limit: int = 0) -> list[_Match]:
        """Leftmost-longest matches, not overlapping, in text order; at most ``limit``
        per term when given."""
        found: list[tuple[int, int, int]] = []
        for n, term in enumerate(self.finders):
            taken = 0
            for start, end in term.spans(text):
                if _inside_a_word(text, start):
                    continue  # a Latin word starting inside a longer one ("apt" in "adapt")
                found.append((start, start - end, n))
                taken += 1
                if taken == limit:
                    break
        found.sort()
        out: list[_Match] = []
        pos = 0
        for start, neg_len, n in found:
            if start >= pos:
                pos = start - neg_len
                out.append(_Match(start, pos, n))
        return out

    def first(self, text: str, pos: int = 0) -> int | None:
        """Where the first match at or after ``pos`` starts: what finds the part of a
        long body worth scanning, so a Latin word inside a longer one does not count
        (an "adapt" near the top hid the "apt" 22,000 characters on that found the page)."""
        starts = [at for at in (_first_word(f, text, pos) for f in self.finders) if at is not None]
        return min(starts) if starts else None


def _inside_a_word(text: str, start: int) -> bool:
    """Whether a match at ``start`` begins inside a longer Latin word."""
    return bool(start) and text[start - 1] in ASCII_ALNUM and not _HAN_CHAR.match(text, start)


def _first_word(finder: TermFinder, text: str, pos: int) -> int | None:
    at = finder.first(text, pos)
    while at is not None and _inside_a_word(text, at):
        at = finder.first(text, at + 1)
    return at


@functools.lru_cache(maxsize=1024)
def _matcher_of(terms: tuple[str, ...]) -> _Matcher | None:
    unique = {t for t in (t.strip() for t in terms) if t}
    unique |= {form for t in unique for form in regional_forms(t)}
    if not unique:
        return None
    return _Matcher(tuple(sorted(unique, key=lambda t: (-len(t), t))))


def _matcher(terms: Sequence[str]) -> _Matcher | None:
    return _matcher_of(tuple(terms))


def _mark(text: str, matcher: _Matcher | None) -> str:
    """Escape ``text`` and wrap each match in ``<em>``."""
    if matcher is None:
        return escape(text, quote=False)
    out: list[str] = []
    pos = 0
    for m in matcher.matches(text):
        out.append(escape(text[pos : m.start], quote=False))
        out.append(f"<em>{escape(text[m.start : m.end], quote=False)}</em>")
        pos = m.end
    out.append(escape(text[pos:], quote=False))
    return "".join(out)


def _best_window(text: str, matches: list[_Match], width: int) -> tuple[int, int]:
    """The ``width``-char window holding the most distinct terms (then the most
    matches, then the earliest)."""
    # Matches do not overlap, so both starts and ends ascend and the matches inside a
    # window form one contiguous run: slide it with two pointers.
    best = (-1, -1, 0)
    best_start = 0
    counts: Counter[int] = Counter()
    lo = hi = 0
    for anchor in matches:
        start = max(0, anchor.start - _LEAD_CHARS)
        end = start + width
        while hi < len(matches) and matches[hi].end <= end:
            counts[matches[hi].term] += 1
            hi += 1
        while lo < hi and matches[lo].start < start:
            term = matches[lo].term
            counts[term] -= 1
            if not counts[term]:
                del counts[term]
            lo += 1
        key = (len(counts), hi - lo, -start)
        if key > best:
            best, best_start = key, start
    start = max(0, min(best_start, len(text) - width))
    return start, min(len(text), start + width)


def _snap(text: str, start: int, end: int) -> tuple[int, int]:
    """Move cut points off the middle of a Latin word, if a space is near, and never
    into a character drawn with several code points (``_continues``)."""
    if start > 0 and text[start - 1].isalnum() and text[start].isascii():
        space = _SPACE.search(text, start, start + 15)
        if space is not None:
            start = space.end()
    if end < len(text) and text[end].isalnum() and text[end - 1].isascii():
        spaces = list(_SPACE.finditer(text, max(start, end - 15), end))
        if spaces:
            end = spaces[-1].start()
    while start < end and _continues(text, start):
        start += 1
    return start, _whole_end(text, end, start)


_JOINERS = frozenset("\u200d\ufe0e\ufe0f")  # zero-width joiner, text and emoji presentation


def _continues(text: str, i: int) -> bool:
    """Whether ``text[i]`` belongs to the character before it on screen: a combining
    accent (e + U+0301), a joiner or what follows one, or the second half of a flag (two
    regional indicators: cut between them, 🇨🇳🇨🇳 shows as 🇳🇨). A cut there leaves
    a lone accent, or another country's flag."""
    if i <= 0 or i >= len(text):
        return False
    ch, before = text[i], text[i - 1]
    if unicodedata.combining(ch) or ch in _JOINERS or before == "\u200d":
        return True
    if _regional(ch) and _regional(before):
        run = 0
        while i - 1 - run >= 0 and _regional(text[i - 1 - run]):
            run += 1
        return run % 2 == 1
    return False


def _whole_end(text: str, end: int, floor: int = 0) -> int:
    """``end``, moved back (not below ``floor``) until ``text[:end]`` ends on a whole character."""
    while end > floor and _continues(text, end):
        end -= 1
    return end


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _region(body: str, matcher: _Matcher | None, width: int) -> tuple[str, bool, bool, int]:
    """The part of ``body`` worth scanning, whether text was left out before and after
    it, and where it starts in ``body``. Bodies run to 200k characters: the head is
    scanned in full, and only when no term occurs there does one search of the rest
    find where to cut."""
    head = body[:_SCAN_CHARS]
    if matcher is None or len(body) <= _SCAN_CHARS or matcher.first(head) is not None:
        return head, False, len(body) > _SCAN_CHARS, 0
    found = matcher.first(body, _SCAN_CHARS)
    if found is None:
        return head, False, True, 0
    start = max(0, found - width)
    return body[start : found + 2 * width], start > 0, found + 2 * width < len(body), start


def snippet_html(body: str, terms: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``body`` around the query terms, with ellipses
    where text was cut; the start of the body when no term occurs in it.

    The window is chosen on the text as stored (one newline between blocks) and only
    the window's whitespace is collapsed: collapsing all 20,000 scanned characters
    per result cost more than the index search."""
    return snippet_at(body, terms, width)[0]


def snippet_at(body: str, terms: Sequence[str], width: int = SNIPPET_CHARS) -> tuple[str, int]:
    """``snippet_html`` and where its window starts in ``body`` (a document's page of
    the snippet is counted from it: services/search/document_results.py)."""
    matcher = _matcher(terms)
    region, cut_before, cut_after, offset = _region(body, matcher, width)
    matches = matcher.matches(region, _MAX_MATCHES) if matcher else []
    if matches:
        start, end = _best_window(region, matches, width)
    else:
        start, end = 0, min(len(region), width)
    start, end = _snap(region, start, end)
    text, end = _collapsed(region, start, end)
    if not text:
        return "", offset
    prefix = ELLIPSIS if cut_before or (start > 0 and not region[:start].isspace()) else ""
    suffix = ELLIPSIS if cut_after or _NON_SPACE.search(region, end) else ""
    return f"{prefix}{_mark(text, matcher)}{suffix}", offset + start


def _collapsed(region: str, start: int, end: int) -> tuple[str, int]:
    """``region[start:end]`` with whitespace runs as one space, widened by what the
    runs took away; and where it now ends."""
    want = end - start
    text = _SPACES.sub(" ", region[start:end])
    while len(text) < want and end < len(region):
        end = min(len(region), end + want - len(text))
        text = _SPACES.sub(" ", region[start:end])
    return text.strip(), end


def title_html(title: str, terms: Sequence[str], width: int = TITLE_CHARS) -> str:
    """The title highlighted, cut to ``width`` characters."""
    text = _SPACES.sub(" ", title).strip()
    cut = len(text) > width
    return _mark(text[: _whole_end(text, width)], _matcher(terms)) + (ELLIPSIS if cut else "")
