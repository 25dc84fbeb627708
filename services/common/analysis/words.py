"""Word segmentation shared by index time and query time.

Both sides must split text the same way, or a query word never meets its indexed
twin; so the indexer and the search service import only this package for it.

Text is folded first (``fold.py``: width, case, traditional → simplified), which keeps
its length, so every span below is a span of the caller's original text. Then it is
cut into runs: Han runs go to jieba (precise mode, HMM on), and
every other run of letters and digits becomes one Latin-style word. A word may
join parts with ``.``, ``-`` or ``_`` ("apt-get", "1.2", "www.debian.org",
"foo_bar") and may end in ``++`` or ``#`` ("c++", "c#"): these are names people
search for whole. Their parts are search-mode extras, like jieba's sub-words,
so "apt" still finds "apt-get" (at the lower sub-word boost). Punctuation,
symbols and whitespace never become tokens. Every token is its source span,
case-folded (``str.casefold``: lower-case, and context-free, so Σ, σ and ς all
become σ), which the property tests check: ``token == fold(text[start:end]).casefold()``.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

# rjieba is jieba's algorithm and dictionary in Rust (jieba-rs): on the docs corpus
# it gives the same words as jieba for every one of 58,362 Han runs and the same
# dictionary answers for 118,296 grams, about 18 times faster, and it needs no
# second-long dictionary load at start-up. tests/unit/test_analysis_words.py keeps
# checking it against jieba itself, which stays a test dependency as the reference.
import rjieba

from services.common.analysis.fold import fold
from services.common.analysis.fold import initialise as _initialise_fold
from services.common.analysis.han import HAN

# A letter or digit that is not Han (and not "_", which \w also admits).
_ALNUM = rf"[^\W_{HAN}]"
_WORD = rf"{_ALNUM}+(?:[._\-]{_ALNUM}+)*(?:(?:\+\+|#)(?!{_ALNUM}))?"
RUNS = re.compile(rf"(?P<han>[{HAN}]+)|(?P<word>{_WORD})")
_WORD_PARTS = re.compile(rf"{_ALNUM}+")

# Longer "words" are base64 blobs, hashes of hashes and the like: nobody types
# them, and each one would be a unique term bloating the dictionary.
MAX_TOKEN_CHARS = 64
# A compound of at most this many parts also yields its joined sub-runs
# ("debian.org" inside "www.debian.org"); longer ones yield single parts only,
# to keep the number of extras linear.
_MAX_JOINED_PARTS = 5

_init_lock = threading.Lock()
_initialised = False

# The segmenter in use: rjieba's own (its module-level functions), or one of its
# segmenters with the operator's user words added (``set_user_words``). Replaced whole,
# never changed in place, so a cut running meanwhile finishes with the one it started.
_segmenter: Any = rjieba
_user_words: tuple[str, ...] = ()
_listeners: list[Callable[[], None]] = []


def set_user_words(words: Sequence[tuple[str, int | None]]) -> None:
    """Keep these folded Han words whole from now on (``(word, frequency)``, None: just
    frequent enough to win), in place of the ones set before; () for none. Building
    the segmenter takes a third of a second, so callers do it off the request path."""
    global _segmenter, _user_words
    segmenter: Any = rjieba
    if words:
        segmenter = rjieba.Jieba()
        for word, freq in words:
            segmenter.add_word(word, freq, None)
    _segmenter = segmenter
    _user_words = tuple(word for word, _ in words)
    han_subwords.cache_clear()
    word_subwords.cache_clear()
    for listener in list(_listeners):
        listener()


def user_words() -> tuple[str, ...]:
    """The operator's user words in use (``set_user_words``), for what reads words
    otherwise than by cutting text (a query of pinyin initials)."""
    return _user_words


def on_user_words_changed(listener: Callable[[], None]) -> None:
    """Call ``listener`` after every ``set_user_words``: for caches of segmented text."""
    _listeners.append(listener)


def cut(han: str) -> list[str]:
    """The segmenter's words of Han text (jieba's precise mode, HMM on)."""
    out: list[str] = _segmenter.cut(han, hmm=True)
    return out


def initialise() -> None:
    """Build the segmenter's dictionary once (milliseconds with rjieba).

    Safe to call from many threads; later calls return at once. Callers need not
    call it: every function here does, but tests call it outside timing limits.
    """
    global _initialised
    if _initialised:
        return
    with _init_lock:
        if not _initialised:
            rjieba.cut("初始化")
            _initialise_fold()
            _initialised = True


class _Dictionary:
    """``freq.get(word)`` as jieba spells it: truthy for a dictionary word."""

    @staticmethod
    def get(word: str) -> bool:
        return bool(_segmenter.has_word(word))


def _freq() -> _Dictionary:
    return _Dictionary()


def _han_words(run: str) -> list[str]:
    return [w for w in cut(run) if w]


def _han_subwords(word: str, freq: _Dictionary) -> Iterator[str]:
    """The 2- and 3-grams that ``jieba.cut_for_search`` adds for one precise word.

    Done here rather than by calling ``cut_for_search`` so that a text is
    segmented once, not twice; the rule is jieba's own (dictionary grams of
    words longer than two and three characters).
    """
    n = len(word)
    if n > 2:
        for i in range(n - 1):
            gram = word[i : i + 2]
            if freq.get(gram):
                yield gram
    if n > 3:
        for i in range(n - 2):
            gram = word[i : i + 3]
            if freq.get(gram):
                yield gram


def _word_subwords(word: str) -> Iterator[str]:
    """Parts of a joined Latin word, and their joined sub-runs when there are few."""
    if "." not in word and "-" not in word and "_" not in word:
        return  # one part ("c++" too): most words, and a regex scan saved for each
    parts = [(m.start(), m.end()) for m in _WORD_PARTS.finditer(word)]
    if len(parts) < 2:
        return
    span = len(parts) if len(parts) <= _MAX_JOINED_PARTS else 1
    for i in range(len(parts)):
        for j in range(i, min(len(parts), i + span)):
            if i == 0 and j == len(parts) - 1:
                continue  # the whole word is already a token
            yield word[parts[i][0] : parts[j][1]]


def tokenize_with_offsets(text: str) -> list[tuple[str, int, int]]:
    """Precise-mode tokens with their ``[start, end)`` character span in ``text``.

    ``token == fold(text[start:end]).casefold()`` always holds.
    """
    initialise()
    text = fold(text)
    out: list[tuple[str, int, int]] = []
    for m in RUNS.finditer(text):
        if m.lastgroup == "han":
            pos = m.start()
            for w in _han_words(m.group()):
                if len(w) <= MAX_TOKEN_CHARS:
                    out.append((w, pos, pos + len(w)))
                pos += len(w)
        elif m.end() - m.start() <= MAX_TOKEN_CHARS:
            out.append((m.group().casefold(), m.start(), m.end()))
    return out


def segment_with_subwords(text: str) -> tuple[list[str], list[str]]:
    """``(segment(text), subwords(text))`` in one pass, for the indexer."""
    initialise()
    return words_and_subwords_of_folded(fold(text))


def words_and_subwords_of_folded(text: str) -> tuple[list[str], list[str]]:
    """``segment_with_subwords`` of text that is already folded."""
    tokens: list[str] = []
    extras: list[str] = []
    for m in RUNS.finditer(text):
        if m.lastgroup == "han":
            add_han_run(m.group(), tokens, extras)
        else:
            add_word_run(m.group(), tokens, extras)
    return tokens, extras


def han_words_of_runs(runs: list[str]) -> list[list[str]]:
    """``_han_words`` of each Han run, from one call into rjieba instead of one a run.

    The runs are joined by newlines: jieba cuts text into blocks at anything that is
    not Han or alphanumeric and segments each block alone, so no word spans a newline
    and each run's words are those it gets on its own (tests/unit/test_analysis_streams.py
    checks it). On the demo site's pages one call costs about half of the calls it replaces.
    """
    if len(runs) < 2:
        return [_han_words(run) for run in runs]
    out: list[list[str]] = [[]]
    for w in cut("\n".join(runs)):
        if w == "\n":
            out.append([])
        elif w:
            out[-1].append(w)
    if len(out) != len(runs):  # never seen; a segmenter that did join across would land here
        return [_han_words(run) for run in runs]
    return out


def add_han_run(run: str, tokens: list[str], extras: list[str]) -> None:
    """Append the words and sub-words of one folded Han run of ``RUNS``: the rule
    ``words_and_subwords_of_folded`` and the one-pass analysis (``streams.py``) share."""
    add_han_words(_han_words(run), tokens, extras)


@functools.lru_cache(maxsize=1 << 16)
def han_subwords(word: str) -> tuple[str, ...]:
    """``_han_subwords`` of one word, remembered: a site repeats its vocabulary, and a
    dictionary lookup a gram costs more than finding the word here (0.3 of a
    millisecond a page on the demo site). Bounded, so a crawl of many sites keeps
    only the words it met lately."""
    return tuple(_han_subwords(word, _freq()))


@functools.lru_cache(maxsize=1 << 16)
def word_subwords(word: str) -> tuple[str, ...]:
    """``_word_subwords`` of one joined word, remembered as ``han_subwords`` is: the
    same names (apt-get, www.debian.org, 1.2.3) recur on every page of a site."""
    return tuple(_word_subwords(word))


class SubwordTable(dict[str, tuple[str, ...]]):
    """word → its sub-words (``han_subwords`` of a Han word, ``word_subwords`` of a
    joined Latin one), filled on first use: what the C streams (``_native.c``) look a
    word up in, without a Python call for a word met before. Cleared when full, so a
    crawl of many sites keeps only the words it met lately."""

    def __missing__(self, word: str) -> tuple[str, ...]:
        if len(self) >= 1 << 16:
            self.clear()
        # The rules themselves, not their lru_cached wrappers: this table is the cache.
        joined = "." in word or "-" in word or "_" in word
        subs = tuple(_word_subwords(word) if joined else _han_subwords(word, _freq()))
        self[word] = subs
        return subs


def add_han_words(words: list[str], tokens: list[str], extras: list[str]) -> None:
    """Append one Han run's words (``_han_words``) and their sub-words."""
    for w in words:
        if len(w) <= MAX_TOKEN_CHARS:
            tokens.append(w)
            if len(w) > 2:
                extras.extend(han_subwords(w))


def add_word_run(run: str, tokens: list[str], extras: list[str]) -> None:
    """Append the word and sub-words of one folded non-Han run of ``RUNS``."""
    word = run.casefold()
    if len(word) <= MAX_TOKEN_CHARS:
        tokens.append(word)
        if "." in word or "-" in word or "_" in word:  # else no parts: nothing to look up
            extras.extend(word_subwords(word))


def segment(text: str) -> list[str]:
    """Precise-mode tokens of ``text``, case-folded, in order, punctuation dropped."""
    return [tok for tok, _, _ in tokenize_with_offsets(text)]


def subwords(text: str) -> list[str]:
    """The extra tokens search mode adds beyond ``segment``: 中华, 人民, 共和 … inside
    中华人民共和国, and apt, get inside apt-get. Indexed in their own, lower-boosted
    field so that a part matches but a whole word still ranks first."""
    return segment_with_subwords(text)[1]
