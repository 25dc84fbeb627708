"""Initials of two words in a row (zdsx → 自动 + 筛选), as an input method reads them.

A query of initials is first read as one dictionary word (``initials_lexicon``); when
no word the pages hold spells it, it may be two typed together, each of two letters or
more: every cut of the letters is read as a word of the dictionary before it and one
after, the ``PAIR_SIDE`` most held of each side. A pair is scored by the fewest pages
holding one of its parts: each word, and the pair of characters where they meet (动筛:
the index's bigram counts say how often the two words can stand side by side), an
upper bound of the pages holding the run, asked in one batch. The likeliest few are
then counted as runs, and only a pair some page holds in a row is taken: a Latin word
the reader is asked about (rsync, hello) spells pairs of common words, not a run pages
hold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from services.search.initials_lexicon import words_with_initials

MIN_WORD_LETTERS = 2  # each word of the pair: a one-letter word is a character, not a word
PAIR_WORDS = 300  # the dictionary's words asked about for each side of a cut, most used first
PAIR_SIDE = 30  # the most held words of each side that are paired
PAIR_RUNS = 8  # the likeliest pairs counted as runs

Counts = Callable[[Sequence[str]], list[int]]  # words or bigrams -> pages holding each


def cuts(initials: str) -> list[tuple[str, str]]:
    """The ways of cutting ``initials`` into two words of two letters or more."""
    n = len(initials)
    return [(initials[:i], initials[i:]) for i in range(MIN_WORD_LETTERS, n - MIN_WORD_LETTERS + 1)]


def likeliest_pairs(initials: str, words_held: Counts, grams_held: Counts, limit: int = PAIR_RUNS) -> list[str]:
    """The ``limit`` likeliest pairs of dictionary words spelling ``initials``, each
    written as one run (自动筛选): by the fewest pages holding a word of it or the
    characters where the words meet, then by the two words' pages; none a part of which
    no page holds."""
    sides = [(words_with_initials(a, PAIR_WORDS), words_with_initials(b, PAIR_WORDS)) for a, b in cuts(initials)]
    words = list(dict.fromkeys(w for left, right in sides for w in (*left, *right)))
    if not words:
        return []
    pages = dict(zip(words, words_held(words), strict=True))
    candidates: dict[str, tuple[str, int, int]] = {}  # run -> (meeting bigram, the least word count, product)
    for left, right in sides:
        lefts = sorted((w for w in left if pages[w]), key=lambda w: -pages[w])[:PAIR_SIDE]
        rights = sorted((w for w in right if pages[w]), key=lambda w: -pages[w])[:PAIR_SIDE]
        for a in lefts:
            for b in rights:
                candidates.setdefault(a + b, (a[-1] + b[0], min(pages[a], pages[b]), pages[a] * pages[b]))
    if not candidates:
        return []
    grams = list(dict.fromkeys(gram for gram, _, _ in candidates.values()))
    meets = dict(zip(grams, grams_held(grams), strict=True))
    scored = {run: (min(least, meets[gram]), product) for run, (gram, least, product) in candidates.items()}
    ranked = sorted((run for run in scored if scored[run][0] > 0), key=lambda run: (-scored[run][0], -scored[run][1]))
    return ranked[:limit]
