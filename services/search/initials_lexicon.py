"""Words by their pinyin initials (xz → 选择, 现在 …), as a pinyin input method's lexicon.

A query of initials (jj, xz, zdsx) stands for a word, not for any run of characters:
the candidates are the words of jieba's dictionary (the one the segmenter, rjieba,
compiles in, so the index's word tokens are mostly its words) whose initials these
are, most frequent first; the index then says which of them its pages hold. A word is
keyed by the first letter of each character's commonest reading, as typed one
character at a time, and also by its reading as a phrase where pypinyin knows one
that differs (银行 under yh as well as yx). The operator's user words (docs/
dictionaries.md) are candidates too: they are the site's own terms.

The table is made once from jieba's ``dict.txt`` (MIT) and kept in
``data/initials_words.txt``: loading it takes some 30 ms and 15 MB, where making it in
a search process took a second and a half and left 90 MB behind. Remake it with
``python -m services.search.initials_lexicon > services/search/data/initials_words.txt``
(jieba is a test dependency); a unit test holds the file to what that writes.
"""

from __future__ import annotations

import functools
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from importlib import resources

from pypinyin import phrases_dict

from services.common.analysis.pinyin_keys import char_pinyin
from services.common.analysis.words import user_words

MIN_CHARS, MAX_CHARS = 2, 6
TABLE = "data/initials_words.txt"
_HEADER = (
    "# Words of jieba 0.42's dictionary (dict.txt, MIT License, https://github.com/fxsjy/jieba) of 2 to 6",
    "# characters, keyed by their pinyin initials, most frequent first: key<TAB>word word ...",
    "# Made by `python -m services.search.initials_lexicon`; do not edit by hand.",
    "# jieba's dictionary: Copyright (c) 2013 Sun Junyi, under the MIT License (LICENSE.jieba.txt beside this file).",
)


def words_with_initials(initials: str, limit: int) -> list[str]:
    """The words spelled by ``initials`` (one letter a character): the operator's user
    words first, then the dictionary's, the ``limit`` most frequent of them."""
    key = initials.lower()
    joined = _table().get(key, "")
    found = joined.split(" ", limit)[:limit] if joined else []
    own = [w for w in _user_words_by_initials(user_words()).get(key, ()) if w not in found]
    return own + found


@functools.lru_cache(maxsize=1)
def _user_words_by_initials(words: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    by: dict[str, list[str]] = {}
    for word in words:
        if MIN_CHARS <= len(word) <= MAX_CHARS:
            for key in _keys(word):
                by.setdefault(key, []).append(word)
    return {key: tuple(found) for key, found in by.items()}


@functools.cache
def _table() -> dict[str, str]:
    table: dict[str, str] = {}
    with resources.files("services.search").joinpath(TABLE).open(encoding="utf-8") as lines:
        for line in lines:
            if not line.startswith("#"):
                key, _, words = line.rstrip("\n").partition("\t")
                table[key] = words
    return table


def is_word(word: str) -> bool:
    """Whether ``word`` is one of the dictionary's words (or the operator's user words)."""
    if not MIN_CHARS <= len(word) <= MAX_CHARS:
        return False
    return any(word in _words_of(key) for key in _keys(word)) or word in user_words()


@functools.lru_cache(maxsize=4096)
def _words_of(key: str) -> frozenset[str]:
    joined = _table().get(key, "")
    return frozenset(joined.split(" ")) if joined else frozenset()


def _phrase_initials(word: str) -> str:
    """The initials of ``word`` read as a phrase (pypinyin's phrase readings), or ''."""
    readings = phrases_dict.phrases_dict.get(word)
    if not readings or len(readings) != len(word):
        return ""
    # A reading is written with tone marks (yí): its first letter without them.
    return "".join(unicodedata.normalize("NFD", r[0])[0] for r in readings if r and r[0])


def _keys(word: str) -> set[str]:
    """The initials ``word`` is typed with: by each character's commonest reading, and
    by its reading as a phrase."""
    sounds = [char_pinyin(c) for c in word]
    keys = {"".join(s[0] for s in sounds)} if all(sounds) else set()
    phrase = _phrase_initials(word)
    if len(phrase) == len(word):
        keys.add(phrase)
    return keys


def table_lines(dictionary: Iterable[str]) -> Iterator[str]:
    """The lines of the table, from the lines of a jieba dictionary (word freq [tag])."""
    by: dict[str, list[tuple[int, str]]] = {}
    for line in dictionary:
        word, freq, *_ = line.split()
        if MIN_CHARS <= len(word) <= MAX_CHARS:
            for key in _keys(word):
                by.setdefault(key, []).append((-int(freq), word))
    yield from _HEADER
    for key in sorted(by):
        yield f"{key}\t{' '.join(w for _, w in sorted(by[key]))}"


def main() -> int:
    import jieba  # a test dependency: only the table's maker needs it

    text = resources.files(jieba).joinpath("dict.txt").read_text(encoding="utf-8")
    for line in table_lines(text.splitlines()):
        sys.stdout.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
