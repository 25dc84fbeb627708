"""Words, sub-words and bigrams of folded text in one pass over its runs.

The indexer wants all three streams of every field. Asking ``words.py`` and
``grams.py`` for them separately scans the text for runs twice; here each run of
``RUNS`` is found once and handed to both, with the same per-run rules
(``add_han_words``, ``add_word_run``, ``add_han_grams``, ``add_word_gram``), and the
Han runs are segmented by one call into rjieba (``han_words_of_runs``), so the
streams are exactly those of ``words_and_subwords_of_folded`` and ``grams_of_folded``
(tests/unit/test_analysis_streams.py checks it).

That walk is done in C (``services/common/_native.c``) where the package was built
with a compiler: finding the runs, splitting rjieba's output back into them and
appending every word, sub-word and bigram is most of the time a document takes to
build beyond rjieba's own cut (docs/benchmarks.md, 'Seventh round (issue 12): building
documents in C'). Where it was not built, ``streams_in_python`` below does
the same, slower; the tests run both and compare them.
"""

from __future__ import annotations

from services.common.analysis.grams import add_han_grams, add_word_gram
from services.common.analysis.words import (
    MAX_TOKEN_CHARS,
    RUNS,
    SubwordTable,
    add_han_words,
    add_word_run,
    cut,
    han_words_of_runs,
    on_user_words_changed,
)
from services.common.runtime.native_code import native

_SUBWORDS = SubwordTable()
# Sub-words are the dictionary's words inside a word: user words add some.
on_user_words_changed(_SUBWORDS.clear)


def streams_of_folded(text: str) -> tuple[list[str], list[str], list[str]]:
    """(words, sub-words, bigrams) of already folded ``text``."""
    out = _assembled(text, joined=False)
    # None: no C module, or rjieba's words did not add up to the runs (never seen): the
    # Python walk segments each run on its own then.
    return streams_in_python(text) if out is None else out


def joined_streams_of_folded(text: str) -> tuple[str, str, str]:
    """The same three streams, each as one str with its tokens separated by spaces:
    what the index's fields take. In C the tokens go straight into that text, which
    saves joining some 3,000 tokens a page and making each bigram a str."""
    out = _assembled(text, joined=True)
    if out is not None:
        return out
    words, extras, grams = streams_in_python(text)
    return " ".join(words), " ".join(extras), " ".join(grams)


def _assembled(text: str, joined: bool) -> tuple | None:
    """The streams from the C module: its runs, rjieba's one cut of their Han text,
    and ``assemble``; None where the module was not built or the cut did not fit."""
    if native is None:
        return None
    runs, han = native.scan(text)
    words = cut(han) if han else []
    return native.assemble(runs, words, _SUBWORDS, joined)


def streams_in_python(text: str) -> tuple[list[str], list[str], list[str]]:
    """``streams_of_folded`` without the C module."""
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
        # A page has hundreds of runs, most of them one Latin word with nothing to
        # split: that case is written out here rather than called, a call per run adding up.
        elif plain and len(word) <= MAX_TOKEN_CHARS and not ("." in word or "-" in word or "_" in word):
            add_word(word)
            add_gram(word)
        else:
            add_word_run(word, words, extras)
            add_word_gram(word, grams)
    return words, extras, grams
