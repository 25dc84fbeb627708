"""Where a folded query term occurs in page text, in the page's own script.

A term is folded text (软件, apt); each of its characters matches every form that
folds to it (軟, Ａ). A term with few spellings is found by looking for each spelling
(``str.find``); one with many, typically a Latin word (a, A, à, Ａ … at every letter),
by a regular expression of character classes: compiling one costs more than a
snippet, so a term with a handful of spellings looks for each instead.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator

from services.common.analysis.fold import variants

# Spellings looked for one by one, at most: above, the expression.
MAX_SPELLINGS = 8
_ASCII_WORD = re.compile(r"[0-9a-z]+(?:[._\-+#][0-9a-z]+)*[+#]*")
ASCII_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _forms(ch: str) -> str:
    # Forms page text really uses: Latin-1 and the CJK and full-width blocks. The rest
    # (ⓓ, ᵈ, ⅅ, the typographic spaces) fold the same for search but make a Latin
    # term's pattern ten times slower to compile, on every new query.
    return "".join(c for c in variants(ch) if c == ch or ord(c) < 0x250 or ord(c) >= 0x3000)


class TermFinder:
    """The spans of one term's occurrences, leftmost first and not overlapping, as
    ``re.finditer`` gives them; a Latin word only where no letter or digit follows."""

    def __init__(self, term: str) -> None:
        classes = [_forms(c) for c in term]
        self._word_end = _ASCII_WORD.fullmatch(term) is not None
        count = 1
        for forms in classes:
            count *= len(forms)
        self._spellings: tuple[str, ...] | None = None
        self._pattern: re.Pattern[str] | None = None
        if count <= MAX_SPELLINGS:
            self._spellings = tuple("".join(p) for p in itertools.product(*classes))
            self._length = len(term)
        else:
            body = "".join(re.escape(f) if len(f) == 1 else "[" + "".join(map(re.escape, f)) + "]" for f in classes)
            # No IGNORECASE: each character's class already holds its cases and widths, and
            # without the flag (and a look-behind in front) re scans three times faster.
            self._pattern = re.compile(body + "(?![0-9A-Za-z])" if self._word_end else body)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        if self._pattern is not None:
            return ((m.start(), m.end()) for m in self._pattern.finditer(text))
        return self._literal_spans(text)

    def first(self, text: str, pos: int = 0) -> int | None:
        """Where the first occurrence at or after ``pos`` starts."""
        if self._pattern is not None:
            m = self._pattern.search(text, pos)
            return None if m is None else m.start()
        assert self._spellings is not None
        starts = [at for at in (self._first_of(text, s, pos) for s in self._spellings) if at >= 0]
        return min(starts) if starts else None

    def _literal_spans(self, text: str) -> Iterator[tuple[int, int]]:
        assert self._spellings is not None
        starts = self._starts(text, self._spellings[0])
        if len(self._spellings) > 1:
            starts = sorted(itertools.chain(starts, *(self._starts(text, s) for s in self._spellings[1:])))
        end = -1
        for start in starts:
            if start >= end:  # spellings have one length: the leftmost wins, as in a regex
                end = start + self._length
                yield start, end

    def _starts(self, text: str, spelling: str) -> list[int]:
        found = []
        at = self._first_of(text, spelling, 0)
        while at >= 0:
            found.append(at)
            at = self._first_of(text, spelling, at + 1)
        return found

    def _first_of(self, text: str, spelling: str, pos: int) -> int:
        """Where ``spelling`` first occurs at or after ``pos`` as a whole Latin word
        when the term is one; -1 when nowhere."""
        at = text.find(spelling, pos)
        if self._word_end:
            while at >= 0 and at + self._length < len(text) and text[at + self._length] in ASCII_ALNUM:
                at = text.find(spelling, at + 1)
        return at


@functools.lru_cache(maxsize=4096)
def finder(term: str) -> TermFinder:
    """Remembered per process: queries repeat their words."""
    return TermFinder(term)
