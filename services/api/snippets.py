"""Query-biased snippets and highlighted titles, as safe HTML.

Page text is untrusted: everything is HTML-escaped and the only markup added is
``<em>`` around matched words, so templates may output the result unescaped.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from html import escape
from itertools import islice

from services.common.analysis.fold import regional_forms, variants
from services.common.analysis.han import HAN

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
_ASCII_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_HAN_CHAR = re.compile(f"[{HAN}]")
# Characters of a body scanned for the best window; see _region.
_SCAN_CHARS = 20_000
_ASCII_WORD = re.compile(r"[0-9a-z]+(?:[._\-+#][0-9a-z]+)*[+#]*")


def _char_class(ch: str) -> str:
    forms = variants(ch)
    if len(forms) == 1:
        return re.escape(ch)
    return "[" + "".join(re.escape(c) for c in forms) + "]"


def _matcher(terms: Sequence[str]) -> re.Pattern[str] | None:
    return _compiled(tuple(terms))


@functools.lru_cache(maxsize=256)
def _compiled(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    """One case-insensitive pattern for all terms, longest first so that 中华人民共和国
    wins over 中华 at the same place. Latin words match only as whole words (``a``
    must not light up inside "apt"); Chinese has no word boundaries to respect.

    Terms are folded text (软件, apt); each character matches every form that folds
    to it (軟, Ａ), so the page's own script is what gets marked."""
    unique = {t for t in (t.strip() for t in terms) if t}
    unique |= {form for t in unique for form in regional_forms(t)}
    if not unique:
        return None
    parts = []
    for term in sorted(unique, key=len, reverse=True):
        body = "".join(_char_class(c) for c in term)
        if _ASCII_WORD.fullmatch(term):
            parts.append(rf"{body}(?![0-9A-Za-z])")  # the word's start: see _matches
        else:
            parts.append(body)
    # No IGNORECASE: each character's class already holds its cases and widths, and
    # without the flag (and a look-behind in front) re scans three times faster.
    return re.compile("|".join(parts))


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The pattern's matches, leftmost-longest and not overlapping, except Latin words
    that start inside a longer word ("apt" in "adapt"); after such a one the scan goes
    on from its second character, as a look-behind in the pattern would."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        start = m.start()
        if start and text[start - 1] in _ASCII_ALNUM and not _HAN_CHAR.match(text, start):
            pos = start + 1
            continue
        yield m
        pos = m.end() if m.end() > start else start + 1


def _mark(text: str, pattern: re.Pattern[str] | None) -> str:
    """Escape ``text`` and wrap each match in ``<em>``."""
    if pattern is None:
        return escape(text, quote=False)
    out: list[str] = []
    pos = 0
    for m in _matches(pattern, text):
        out.append(escape(text[pos : m.start()], quote=False))
        out.append(f"<em>{escape(m.group(), quote=False)}</em>")
        pos = m.end()
    out.append(escape(text[pos:], quote=False))
    return "".join(out)


def _best_window(text: str, matches: list[re.Match[str]], width: int) -> tuple[int, int]:
    """The ``width``-char window holding the most distinct terms (then the most
    matches, then the earliest)."""
    # _matches do not overlap, so both starts and ends ascend and the matches
    # inside a window form one contiguous run: slide it with two pointers.
    best = (-1, -1, 0)
    best_start = 0
    counts: Counter[str] = Counter()
    lo = hi = 0
    for anchor in matches:
        start = max(0, anchor.start() - _LEAD_CHARS)
        end = start + width
        while hi < len(matches) and matches[hi].end() <= end:
            counts[matches[hi].group().lower()] += 1
            hi += 1
        while lo < hi and matches[lo].start() < start:
            term = matches[lo].group().lower()
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
    """Move cut points off the middle of a Latin word, if a space is near."""
    if start > 0 and text[start - 1].isalnum() and text[start].isascii():
        space = _SPACE.search(text, start, start + 15)
        if space is not None:
            start = space.end()
    if end < len(text) and text[end].isalnum() and text[end - 1].isascii():
        spaces = list(_SPACE.finditer(text, max(start, end - 15), end))
        if spaces:
            end = spaces[-1].start()
    return start, end


def _region(body: str, pattern: re.Pattern[str] | None, width: int) -> tuple[str, bool, bool]:
    """The part of ``body`` worth scanning, and whether text was left out before and
    after it. Bodies run to 200k characters: the head is scanned in full, and only when
    no term occurs there does one search of the rest find where to cut."""
    head = body[:_SCAN_CHARS]
    if pattern is None or len(body) <= _SCAN_CHARS or pattern.search(head):
        return head, False, len(body) > _SCAN_CHARS
    m = pattern.search(body, _SCAN_CHARS)
    if m is None:
        return head, False, True
    start = max(0, m.start() - width)
    return body[start : m.end() + width], start > 0, m.end() + width < len(body)


def snippet_html(body: str, terms: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``body`` around the query terms, with ellipses
    where text was cut; the start of the body when no term occurs in it.

    The window is chosen on the text as stored (one newline between blocks) and only
    the window's whitespace is collapsed: collapsing all 20,000 scanned characters
    per result cost more than the index search."""
    pattern = _matcher(terms)
    region, cut_before, cut_after = _region(body, pattern, width)
    matches = list(islice(_matches(pattern, region), _MAX_MATCHES)) if pattern else []
    if matches:
        start, end = _best_window(region, matches, width)
    else:
        start, end = 0, min(len(region), width)
    start, end = _snap(region, start, end)
    text, end = _collapsed(region, start, end)
    if not text:
        return ""
    prefix = ELLIPSIS if cut_before or (start > 0 and not region[:start].isspace()) else ""
    suffix = ELLIPSIS if cut_after or _NON_SPACE.search(region, end) else ""
    return f"{prefix}{_mark(text, pattern)}{suffix}"


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
    return _mark(text[:width], _matcher(terms)) + (ELLIPSIS if cut else "")
