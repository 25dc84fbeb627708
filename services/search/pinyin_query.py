"""A query typed in pinyin (shujutoushibiao, shuju toushi) or its initials (sjtsb), read
as the Chinese the index holds, as the Elasticsearch pinyin plugin lets users search.

The letters are cut into pinyin syllables (the fewest that spell them), or, when they
cannot be, read as one initial a character; each syllable or initial stands for the
characters it may be (GB2312's, most used first), and a beam search over the index's
own bigram document frequencies (how many pages hold each pair of characters: the
site's language) picks the likeliest run of characters, as a pinyin input method
does with its language model. Initials stand for a word: they are read as the words
of a dictionary (``initials_lexicon``) the pages hold most, several of them searched
at once (``reading_mix`` shares the first page among them); the characters' beam
reads only a word the dictionary lacks. Four letters or more may be two words typed
together (zdsx: 自动 + 筛选, ``initials_pairs``): the pairs pages hold in a row are
searched beside the single words, ranked with them by the pages holding each. The
search service asks this only of a query with no Chinese whose Latin words few pages
hold: ``excel`` or ``linux`` are searched as typed.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import rjieba

from services.search.confusion_sets import inventory_by_sound
from services.search.initials_lexicon import words_with_initials
from services.search.initials_pairs import likeliest_pairs
from services.search.query_plan import BODY_GRAMS, TITLE_GRAMS

TermStats = Callable[[Sequence[tuple[str, str]]], tuple[int, list[int]]]
PhraseCount = Callable[[tuple[str, ...], bool], int]  # (bigrams, in titles only) -> pages

_LETTERS = re.compile(r"[a-z]+(?: [a-z]+)*")
BEAM = 8
MAX_WORD_CHARS = 4  # a reading this short is taken as a word where one is held
INITIALS_READINGS = 6  # the words searched for a query of initials
LEXICON_WORDS = 1000  # the dictionary's words asked about for a query of initials, most used first
_WORD_FIELDS = ("title_tokens", "body_tokens")
MAX_SYLLABLES = 8
MAX_INITIALS = 6
_PER_SOUND = 60  # characters tried for a syllable, most used first
_PER_INITIAL = 150  # for an initial
_MISSING = -4.0  # a pair of characters no page holds, in log pages
MAX_SPLITS = 4  # ways of cutting a query into syllables that are read


@functools.cache
def _syllables() -> frozenset[str]:
    return frozenset(inventory_by_sound())


def split_syllables(letters: str) -> list[str] | None:
    """The fewest pinyin syllables that spell ``letters`` (xian, not xi an), or None."""
    splits = syllable_splits(letters)
    return list(splits[0]) if splits else None


def syllable_splits(letters: str, limit: int = MAX_SPLITS) -> list[tuple[str, ...]]:
    """Every way of cutting ``letters`` into the fewest pinyin syllables, at most
    ``limit``: fangan is fang an or fan gan, as an input method without the apostrophe
    reads it both ways."""
    syllables = _syllables()
    best: list[list[tuple[str, ...]]] = [[] for _ in range(len(letters) + 1)]
    best[0] = [()]
    for end in range(1, len(letters) + 1):
        for start in range(max(0, end - 6), end):
            if not best[start] or letters[start:end] not in syllables:
                continue
            grown = [(*head, letters[start:end]) for head in best[start]]
            if not best[end] or len(grown[0]) < len(best[end][0]):
                best[end] = grown[:limit]
            elif len(grown[0]) == len(best[end][0]):
                best[end] = (best[end] + grown)[:limit]
    return best[len(letters)]


@functools.cache
def _by_initial() -> dict[str, tuple[str, ...]]:
    """Initial letter → characters, most used first."""
    out: dict[str, list[str]] = {}
    for sound, chars in inventory_by_sound().items():
        out.setdefault(sound[0], []).extend(chars)
    return {k: tuple(sorted(v, key=lambda c: -rjieba.suggest_freq(c))) for k, v in out.items()}


def by_initials(query: str) -> bool:
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
    splits = syllable_splits(letters)
    if splits and 2 <= len(splits[0]) <= MAX_SYLLABLES:
        return _sound_slots(splits[0])
    if 2 <= len(letters) <= MAX_INITIALS and " " not in text:
        initials = _by_initial()
        if all(c in initials for c in letters):
            return [initials[c][:_PER_INITIAL] for c in letters]
    return None


def _sound_slots(syllables: Sequence[str]) -> list[tuple[str, ...]]:
    """The characters each syllable may be, most used first."""
    by_sound = inventory_by_sound()
    return [tuple(by_sound[s][:_PER_SOUND]) for s in syllables]


@dataclass(frozen=True)
class Reading:
    """What a pinyin query is read as: ``query`` is what is searched (one reading, or
    several OR'ed); ``words`` and ``pages``, for a query of initials, are the words
    OR'ed and how many pages hold each, most first."""

    query: str
    words: tuple[str, ...] = ()
    pages: tuple[int, ...] = ()


class PinyinReader:
    def __init__(self, term_stats: TermStats, phrase_count: PhraseCount) -> None:
        self._term_stats = term_stats
        self._phrase_count = phrase_count

    def read(self, query: str) -> str | None:
        """The Chinese a pinyin query likeliest spells, by the index's bigrams; None
        when it is not pinyin or no page holds its pairs of characters."""
        reading = self.reading(query)
        return reading.query if reading else None

    def reading(self, query: str) -> Reading | None:
        """``read``, with the words a query of initials is read as."""
        choices = slots(query)
        if choices is None:
            return None
        if by_initials(query):
            return self._initials_reading(query.strip().lower(), choices)
        # Every fewest cut into syllables (fangan: fang an, fan gan), not the first alone.
        splits = syllable_splits(query.strip().lower().replace(" ", ""))
        beam = sorted((pair for split in splits for pair in self._beam(_sound_slots(split))), key=lambda pair: -pair[0])
        if not beam:
            return None
        if len(choices) <= MAX_WORD_CHARS:
            # A word is what a short reading should be: the one most pages hold as a
            # word (经济 for jj, not 九九, whose pair runs across words more often).
            held = self._held([text for _, text in beam])
            if held:
                return Reading(held[0][0])
        # A longer one is a run some page holds, the likeliest of them (实验性功能,
        # not 试验性功能, whose pairs are commoner but which no page holds as a run).
        for _, text in beam[:BEAM]:
            if self._held_run(text):
                return Reading(text)
        return Reading(beam[0][1])

    def _held(self, words: Sequence[str]) -> list[tuple[str, int]]:
        """The ``words`` some page holds as a word, with how many pages do (in title or
        body, the more of the two), most first; ties in the given order."""
        if not words:
            return []
        _, dfs = self._term_stats([(f, w) for w in words for f in _WORD_FIELDS])
        held = [(w, max(dfs[2 * i], dfs[2 * i + 1])) for i, w in enumerate(words)]
        return sorted((pair for pair in held if pair[1] > 0), key=lambda pair: -pair[1])

    def _initials_reading(self, letters: str, choices: list[tuple[str, ...]]) -> Reading | None:
        """Initials stand for many words alike (jj: 经济, 解决, 积极): the words the pages
        hold most among the dictionary's are all searched, as an input method lists its
        first candidates, and with them, for four letters or more, the pairs of words
        pages hold in a row (zdsx: 自动筛选), ranked with the words by the pages holding
        each; the characters' beam is for a word the dictionary lacks."""
        held = self._held(words_with_initials(letters, LEXICON_WORDS))
        pairs = self._pairs(letters)
        if pairs:
            runs = {run for run, _ in pairs}
            # A pair is a run, not two words anywhere: quoted when OR'ed with others.
            readings = sorted(held + pairs, key=lambda pair: -pair[1])[:INITIALS_READINGS]
            if len(readings) == 1:
                return Reading(readings[0][0])
            words, pages = zip(*readings, strict=True)
            return Reading(" OR ".join(f'"{w}"' if w in runs else w for w in words), words, pages)
        if not held:
            beam = self._beam(choices)
            if len(choices) > MAX_WORD_CHARS:
                # A long compound the dictionary lacks (sjtsb: 数据透视表), taken only
                # when a page holds it: the runs an English word or a name spells
                # (hello: 皇恩来了欧, odff: 藕的方法) have common pairs, not pages.
                return Reading(beam[0][1]) if beam and self._held_run(beam[0][1]) else None
            held = self._held([text for _, text in beam])
            if not held:
                return None  # initials stand for a word: ppt is not 匹配套
        words, pages = zip(*held[:INITIALS_READINGS], strict=True)
        return Reading(" OR ".join(words), words, pages)

    def _pairs(self, letters: str) -> list[tuple[str, int]]:
        """The likeliest pairs of dictionary words spelling ``letters`` that pages hold
        in a row, with how many pages do, most first (at most ``INITIALS_READINGS``)."""
        runs = likeliest_pairs(letters, self._held_counts, self._gram_counts)
        counted = [(run, self._phrase_count(tuple(run[i : i + 2] for i in range(len(run) - 1)), False)) for run in runs]
        return sorted((pair for pair in counted if pair[1] > 0), key=lambda pair: -pair[1])[:INITIALS_READINGS]

    def _gram_counts(self, grams: Sequence[str]) -> list[int]:
        """How many pages hold each pair of characters, in title or body (the more)."""
        _, dfs = self._term_stats([(f, g) for g in grams for f in (TITLE_GRAMS, BODY_GRAMS)])
        return [max(dfs[2 * i], dfs[2 * i + 1]) for i in range(len(grams))]

    def _held_counts(self, words: Sequence[str]) -> list[int]:
        """How many pages hold each of ``words`` as a word, in title or body (the more)."""
        _, dfs = self._term_stats([(f, w) for w in words for f in _WORD_FIELDS])
        return [max(dfs[2 * i], dfs[2 * i + 1]) for i in range(len(words))]

    def _held_run(self, text: str) -> bool:
        """Whether some page holds ``text``, its bigrams in a row, in title or body."""
        return self._phrase_count(tuple(text[i : i + 2] for i in range(len(text) - 1)), False) > 0

    def _beam(self, choices: list[tuple[str, ...]]) -> list[tuple[float, str]]:
        """The likeliest runs of characters, one from each of ``choices``, by the
        index's bigram document frequencies; only runs some pair of which a page holds."""
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
            # A short reading's last step keeps more, for the choice of the word.
            last = position == len(choices) - 1 and len(choices) <= MAX_WORD_CHARS
            beam = grown[: 4 * BEAM if last else BEAM]
        return [(score, text) for score, text in beam if score > 0]  # some pair of it on a page
