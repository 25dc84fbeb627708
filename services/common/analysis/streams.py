"""Words, sub-words and bigrams of folded text in one pass over its runs.

The indexer wants all three streams of every field. Asking ``words.py`` and
``grams.py`` for them separately scans the text for runs twice; here each run of
``RUNS`` is found once and handed to both, with the same per-run rules
(``add_han_words``, ``add_word_run``, ``add_han_grams``, ``add_word_gram``), and the
Han runs are segmented by one call into rjieba (``han_words_of_runs``), so the
streams are exactly those of ``words_and_subwords_of_folded`` and ``grams_of_folded``
(tests/unit/test_analysis_streams.py checks it).
"""

from __future__ import annotations

from services.common.analysis.grams import add_han_grams, add_word_gram
from services.common.analysis.words import RUNS, add_han_words, add_word_run, han_words_of_runs


def streams_of_folded(text: str) -> tuple[list[str], list[str], list[str]]:
    """(words, sub-words, bigrams) of already folded ``text``."""
    words: list[str] = []
    extras: list[str] = []
    grams: list[str] = []
    matches = list(RUNS.finditer(text))
    cut = iter(han_words_of_runs([m.group() for m in matches if m.lastgroup == "han"]))
    for m in matches:
        run = m.group()
        if m.lastgroup == "han":
            add_han_words(next(cut), words, extras)
            add_han_grams(run, grams)
        else:
            add_word_run(run, words, extras)
            add_word_gram(run, grams)
    return words, extras, grams
