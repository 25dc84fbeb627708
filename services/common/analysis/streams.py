"""Words, sub-words and bigrams of folded text in one pass over its runs.

The indexer wants all three streams of every field. Asking ``words.py`` and
``grams.py`` for them separately scans the text for runs twice; here each run of
``RUNS`` is found once and handed to both, with the same per-run rules
(``add_han_words``, ``add_word_run``, ``add_han_grams``, ``add_word_gram``), and the
Han runs are segmented by one call into rjieba (``han_words_of_runs``), so the
streams are exactly those of ``words_and_subwords_of_folded`` and ``grams_of_folded``
(tests/unit/test_analysis_streams.py checks it).

A page has hundreds of runs, most of them one Latin word with nothing to split, so
that case is written out in the loop rather than called: the calls cost more than
the rule (0.4 of a millisecond a page on the demo site).
"""

from __future__ import annotations

from services.common.analysis.grams import add_han_grams, add_word_gram
from services.common.analysis.words import (
    MAX_TOKEN_CHARS,
    RUNS,
    add_han_words,
    add_word_run,
    han_words_of_runs,
)


def streams_of_folded(text: str) -> tuple[list[str], list[str], list[str]]:
    """(words, sub-words, bigrams) of already folded ``text``."""
    words: list[str] = []
    extras: list[str] = []
    grams: list[str] = []
    # findall's (han, word) pairs, one of them empty, instead of match objects: the
    # same runs without two method calls a run.
    runs = RUNS.findall(text)
    cut = iter(han_words_of_runs([han for han, _ in runs if han]))
    # Folding has lower-cased every letter whose lower case keeps the length; when it
    # left none that case-folds further (ß, ς, …), each word is its own case fold.
    plain = text.casefold() == text
    add_word, add_gram = words.append, grams.append
    for han, word in runs:
        if han:
            add_han_words(next(cut), words, extras)
            add_han_grams(han, grams)
        elif plain and len(word) <= MAX_TOKEN_CHARS and not ("." in word or "-" in word or "_" in word):
            add_word(word)
            add_gram(word)
        else:
            add_word_run(word, words, extras)
            add_word_gram(word, grams)
    return words, extras, grams
