"""A query typed in pinyin (shujutoushibiao, shuju toushi) or its initials (sjtsb), read
as the Chinese the index holds, as the Elasticsearch pinyin plugin lets users search.

The letters are cut into pinyin syllables (the fewest that spell them), or, when they
cannot be, read as one initial a character; each syllable or initial stands for the
characters it may be (GB2312's, most used first), and a beam search over the index's
own bigram document frequencies (how many pages hold each pair of characters: the
site's language) picks the likeliest run of characters, as a pinyin input method
does with its language model. The search service asks this only of a query with no
Chinese whose Latin words few pages hold: ``excel`` or ``linux`` are searched as typed.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence

import rjieba

from services.search.confusion_sets import inventory_by_sound
from services.search.query_plan import BODY_GRAMS, TITLE_GRAMS

TermStats = Callable[[Sequence[tuple[str, str]]], tuple[int, list[int]]]

_LETTERS = re.compile(r"[a-z]+(?: [a-z]+)*")
BEAM = 8
MAX_WORD_CHARS = 4  # a reading this short is taken as a word where one is held
INITIALS_READINGS = 3  # the words searched for a query of initials
MAX_SYLLABLES = 8
MAX_INITIALS = 6
_PER_SOUND = 60  # characters tried for a syllable, most used first
_PER_INITIAL = 150  # for an initial
_MISSING = -4.0  # a pair of characters no page holds, in log pages


@functools.cache
def _syllables() -> frozenset[str]:
    return frozenset(inventory_by_sound())


def split_syllables(letters: str) -> list[str] | None:
    """The fewest pinyin syllables that spell ``letters`` (xian, not xi an), or None."""
    syllables = _syllables()
    best: list[list[str] | None] = [None] * (len(letters) + 1)
    best[0] = []
    for end in range(1, len(letters) + 1):
        for start in range(max(0, end - 6), end):
            head = best[start]
            if head is not None and letters[start:end] in syllables:
                if best[end] is None or len(head) + 1 < len(best[end] or ()):
                    best[end] = [*head, letters[start:end]]
    return best[len(letters)]


@functools.cache
def _by_initial() -> dict[str, tuple[str, ...]]:
    """Initial letter → characters, most used first."""
    out: dict[str, list[str]] = {}
    for sound, chars in inventory_by_sound().items():
        out.setdefault(sound[0], []).extend(chars)
    return {k: tuple(sorted(v, key=lambda c: -rjieba.suggest_freq(c))) for k, v in out.items()}


def _by_initials(query: str) -> bool:
    """Whether a pinyin query is read as initials (it does not cut into syllables)."""
    letters = query.strip().lower().replace(" ", "")
    syllables = split_syllables(letters)
    return syllables is None or not 2 <= len(syllables) <= MAX_SYLLABLES


def slots(query: str) -> list[tuple[str, ...]] | None:
    """The characters each position of a pinyin query may be, or None when it is not one."""
    text = query.strip().lower()
    if not _LETTERS.fullmatch(text):
        return None
    letters = text.replace(" ", "")
    syllables = split_syllables(letters)
    by_sound = inventory_by_sound()
    if syllables is not None and 2 <= len(syllables) <= MAX_SYLLABLES:
        return [tuple(by_sound[s][:_PER_SOUND]) for s in syllables]
    if 2 <= len(letters) <= MAX_INITIALS and " " not in text:
        initials = _by_initial()
        if all(c in initials for c in letters):
            return [initials[c][:_PER_INITIAL] for c in letters]
    return None


class PinyinReader:
    def __init__(self, term_stats: TermStats) -> None:
        self._term_stats = term_stats

    def read(self, query: str) -> str | None:
        """The Chinese a pinyin query likeliest spells, by the index's bigrams; None
        when it is not pinyin or no page holds its pairs of characters."""
        choices = slots(query)
        if choices is None:
            return None
        beam: list[tuple[float, str]] = [(0.0, c) for c in choices[0]]
        for position, chars in enumerate(choices[1:], start=1):
            pairs = list(dict.fromkeys(text[-1] + c for _, text in beam for c in chars))
            _, dfs = self._term_stats([(f, p) for p in pairs for f in (TITLE_GRAMS, BODY_GRAMS)])
            df = {p: max(dfs[2 * i], dfs[2 * i + 1]) for i, p in enumerate(pairs)}
            grown = [
                (score + (math.log1p(df[text[-1] + c]) if df[text[-1] + c] else _MISSING), text + c)
                for score, text in beam
                for c in chars
            ]
            grown.sort(key=lambda pair: -pair[0])
            # A short reading's last step keeps more, for the choice of the word below.
            last = position == len(choices) - 1 and len(choices) <= MAX_WORD_CHARS
            beam = grown[: 4 * BEAM if last else BEAM]
        beam = [(score, text) for score, text in beam if score > 0]  # some pair of it on a page
        if not beam:
            return None
        if len(choices) <= MAX_WORD_CHARS:
            # A word is what a short reading should be: the one most pages hold as a
            # word (经济 for jj, not 九九, whose pair runs across words more often).
            # Initials stand for many words alike (jj: 经济, 解决, 积极): the few most
            # held are all searched, as an input method lists its first candidates.
            fields = ("title_tokens", "body_tokens")
            _, dfs = self._term_stats([(f, text) for _, text in beam for f in fields])
            held = sorted(((max(dfs[2 * i], dfs[2 * i + 1]), -i) for i in range(len(beam))), reverse=True)
            words = [beam[-at][1] for pages, at in held if pages > 0]
            if words:
                return " OR ".join(words[: INITIALS_READINGS if _by_initials(query) else 1])
        return beam[0][1]
