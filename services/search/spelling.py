"""Did you mean: a query corrected against the index's own text.

No dictionary of our own: the index is the vocabulary. A Han run of the query is
scored by its character bigrams' document frequencies (how many pages hold each, in
title or body: a bigram model of the site's language), and one character is replaced
by one a user may have meant (``confusion_sets``: same or near pinyin, alike in
shape) where that makes the run's bigrams much more common; the best few are checked
as whole phrases (how many pages hold the corrected run verbatim, against the run as
typed). A Latin word no page holds is replaced by the most common word one edit away
(Norvig's speller, over the index's terms). Asked only of a query that finds few pages
or holds a word no page does: a query that finds what it looks for is left alone.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from services.common.analysis import fold
from services.common.analysis.han import HAN
from services.common.analysis.regional import taiwan_reading
from services.search.confusion_sets import ONE_LETTER, candidates
from services.search.initials_lexicon import is_word
from services.search.query_plan import BODY_GRAMS, TITLE_GRAMS

TermStats = Callable[[Sequence[tuple[str, str]]], tuple[int, list[int]]]
PhraseCount = Callable[[tuple[str, ...], bool], int]  # (bigrams, in titles only) -> pages

_HAN_RUN = re.compile(f"[{HAN}]{{2,}}")
_LATIN = re.compile(r"[a-z]{3,20}")
_OPERATOR = re.compile(r"-?site[:：]\S*")
_WORD_FIELDS = ("title_tokens", "body_tokens")
MAX_RUN_CHARS = 16
SHORT_RUN_CHARS = 4  # a run tried even in a query that finds many pages
SLIP_RUN_CHARS = 3, 4  # runs tried against the dictionary's words one slip away
# The corrected run must be held verbatim by this many times the pages of the run as
# typed (and by at least MIN_PAGES): a query that finds some pages as typed is seldom
# wrong.
MIN_GAIN = 20.0
MIN_PAGES = 2
CHECKED = 6  # corrections checked as whole phrases, best first
_ALPHABET = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Correction:
    query: str  # the query with its typos corrected, otherwise as typed
    changes: tuple[tuple[str, str], ...]  # (as typed, corrected) of each change
    # Every change made a run longer than SHORT_RUN_CHARS that no page holds verbatim
    # into one that pages do: a line copied from a page with one character mistyped,
    # whose correction is shown whatever the query as typed finds.
    sure: bool = False


class SpellingCorrector:
    def __init__(
        self, term_stats: TermStats, phrase_count: PhraseCount, searched: Callable[[str], float] | None = None
    ) -> None:
        self._term_stats = term_stats
        self._phrase_count = phrase_count
        # Of the searches users made, the share holding a word (``searched_runs``): how
        # common a word is in what users look for, beside how common on the pages.
        self._searched = searched

    def _worth(self, word: str) -> float:
        """The pages a word's searches are worth: a word in 1% of the searches counts as
        one on 1% of the pages. It weighs the corrections that pass the pages' test
        against each other; it never lets one pass."""
        share = self._searched(word) if self._searched is not None else 0.0
        return share * self._term_stats([])[0] if share else 0.0

    def correct(self, query: str, thorough: bool = True, rare: int = 0) -> Correction | None:
        """The query with its likely typos corrected; None when nothing needs it.
        A run is tried where one or two of its bigrams are on no page; a short one
        (``SHORT_RUN_CHARS``) whose bigrams all occur, anywhere, when ``thorough`` or
        when one of them is on fewer than ``rare`` pages."""
        folded = fold(query)
        out = list(query)
        changes: list[tuple[str, str]] = []
        sure = True
        for m in _HAN_RUN.finditer(folded):
            if m.end() - m.start() > MAX_RUN_CHARS:
                continue
            fixed = self._correct_run(m.group(), thorough, rare)
            if fixed is None and (read := taiwan_reading(m.group())) != m.group():
                # Typed as read on a Taiwan page (选单 for 選單, which pages hold folded
                # as 菜单): the slip is looked for in the run as the pages hold it.
                fixed = self._correct_run(read, thorough, rare)
            if fixed is None:
                fixed = self._taiwan_word_slip(m.group())
            if fixed is not None:
                at, ch, unheld = fixed
                changes.append((query[m.start() : m.end()], _replaced(m.group(), at, ch)))
                out[m.start() + at] = ch
                sure = sure and unheld and m.end() - m.start() > SHORT_RUN_CHARS
        operators = [o.span() for o in _OPERATOR.finditer(folded)]
        for m in _LATIN.finditer(folded):
            if _inside_word(folded, m.start(), m.end()) or m.group() == "or":
                continue
            if any(a < m.end() and m.start() < b for a, b in operators):
                continue  # site:host is the query language's, not a word to correct
            word = self._correct_word(m.group())
            if word is not None:
                sure = False
                changes.append((query[m.start() : m.end()], word))
                out[m.start() : m.end()] = [word] + [""] * (m.end() - m.start() - 1)
        if not changes:
            return None
        return Correction("".join(out), tuple(changes), sure)

    def _dfs(self, fields: Sequence[str], values: Sequence[str]) -> dict[str, int]:
        """Each value's largest document frequency over ``fields``, in one round trip."""
        values = list(dict.fromkeys(values))
        if not values:
            return {}
        _, dfs = self._term_stats([(f, v) for v in values for f in fields])
        n = len(fields)
        return {v: max(dfs[i * n : (i + 1) * n]) for i, v in enumerate(values)}

    def _correct_run(self, run: str, thorough: bool, rare: int) -> tuple[int, str, bool] | None:
        """(position, character, whether no page holds the run as typed) of the best
        one-character correction of a folded Han run, or None: by its bigrams, else by
        the dictionary's words (``_dictionary_slip``)."""
        fixed = self._bigram_slip(run, thorough, rare)
        return fixed if fixed is not None else self._dictionary_slip(run)

    def _bigram_slip(self, run: str, thorough: bool, rare: int) -> tuple[int, str, bool] | None:
        """The correction that makes the run's bigrams much more common, checked as a
        phrase; None when none does or the run is not to be tried."""
        old = [run[j : j + 2] for j in range(len(run) - 1)]
        old_df = self._dfs((TITLE_GRAMS, BODY_GRAMS), old)
        missing = [j for j, g in enumerate(old) if old_df[g] == 0]
        short = len(run) <= SHORT_RUN_CHARS
        if not missing and not (short and (thorough or min(old_df.values()) < rare)):
            # A longer run whose bigrams all occur is left as typed: trying every
            # character's candidates in each was a third of the search's time. (An idiom
            # typed with a slip, 无计于事, whose pairs are all on pages, is still tried
            # against the dictionary.)
            return None
        if len(missing) > 2:
            # One wrong character breaks at most two bigrams; more that no page holds are
            # words put together (a question's 何配 in 如何配置) or a name.
            return None
        # Where a bigram is on no page, the typo touches it; else any character may be it,
        # and only the likelier kinds are tried there (no syllable a letter apart): no typo
        # people made needed one (docs/ranking.md, 'Did you mean'), and that path, a
        # short word every page may hold, was most of the search's term lookups.
        positions = sorted({i for j in missing for i in (j, j + 1)}) if missing else range(len(run))
        dearest = math.inf if missing else ONE_LETTER
        trials: dict[tuple[int, str], tuple[float, list[str]]] = {}
        for i in positions:
            for ch, cost in candidates(run[i]):
                if cost >= dearest:
                    continue
                new = _replaced(run, i, ch)
                trials[(i, ch)] = cost, [new[j : j + 2] for j in (i - 1, i) if 0 <= j < len(run) - 1]
        # A two-character run is a word or no word: it and its candidates are weighed by
        # the pages holding each as a word, as ``_held`` decides (里拜 is a bigram of
        # titles like 这里拜佛, never a word; 课系, a bigram of 功课系统, is none either).
        word = len(run) == 2
        new_df = self._dfs(
            _WORD_FIELDS if word else (TITLE_GRAMS, BODY_GRAMS),
            [g for _, grams in trials.values() for g in grams] + (old if word else []),
        )
        before_df = new_df if word else old_df

        def gain(i: int, cost: float, grams: list[str]) -> float:
            before = [old[j] for j in (i - 1, i) if 0 <= j < len(old)]
            new = sum(math.log1p(new_df[g]) for g in grams) - sum(math.log1p(before_df[g]) for g in before)
            return new - math.log(cost)

        scored = sorted(
            ((gain(i, cost, grams), i, ch) for (i, ch), (cost, grams) in trials.items()
             if all(new_df[g] > 0 for g in grams)),
            reverse=True,
        )  # fmt: skip
        # The bigrams' gain only ranks the candidates: an idiom's (默默无文 for 默默无闻)
        # is small, its whole phrase decides (``_held``).
        best = [(i, ch, trials[(i, ch)][0]) for g, i, ch in scored[:CHECKED] if g > 0]
        if not best:
            return None
        if self._dfs(("title_tokens",), [run])[run] if word else self._phrase_count(tuple(old), True):
            return None  # a title holds the run as typed: a name, not a typo (探雪, a poem's)
        # A run no page holds (a 4-character idiom mistyped) is corrected to one a single
        # page holds; a run some page holds needs a correction many times as common.
        return self._best_held(run, best, least_when_unheld=1)

    def _dictionary_slip(self, run: str) -> tuple[int, str, bool] | None:
        """(position, character, whether no page holds the run as typed) that make a
        run of three or four characters, no word of the dictionary, into one that is,
        one sound- or shape-alike character away (无计于事 → 无济于事), held verbatim by
        at least ``MIN_PAGES`` pages and by ``MIN_GAIN`` times the pages of the run as
        typed; else None. The dictionary, not the bigrams, finds it: every pair of
        such a run is on some page."""
        if len(run) not in SLIP_RUN_CHARS or is_word(run):
            return None
        slips = sorted(
            (cost, i, ch) for i in range(len(run)) for ch, cost in candidates(run[i])
            if is_word(_replaced(run, i, ch))
        )[:CHECKED]  # fmt: skip
        return (
            self._best_held(run, [(i, ch, cost) for cost, i, ch in slips], least_when_unheld=MIN_PAGES)
            if slips
            else None
        )

    def _taiwan_word_slip(self, run: str) -> tuple[int, str, bool] | None:
        """(position, character, True) of a slip on a Taiwan word itself, typed as read
        (汇如 for 匯入, which pages hold folded as 导入): the character whose replacement
        makes the run's Taiwan reading change around it into a phrase pages hold; else
        None. Neither the run nor its reading shows the word, so only where the run's
        reading has one to three bigrams in a row that no page holds (one slip's
        breakage, a two-character word's with its borders), and among those bigrams'
        characters."""
        base = taiwan_reading(run)
        grams = _grams_of(base)
        df = self._dfs((TITLE_GRAMS, BODY_GRAMS), grams)
        missing = [j for j, g in enumerate(grams) if df[g] == 0]
        if not missing or len(missing) > 3 or missing[-1] - missing[0] != len(missing) - 1:
            return None
        span = range(missing[0], missing[-1] + 2)
        trials: dict[str, tuple[int, str, float]] = {}
        for i in span:
            for ch, cost in candidates(run[i]):
                new = _replaced(run, i, ch)
                read = taiwan_reading.__wrapped__(new)  # uncached: one-off candidates
                if len(read) == len(run) and any(read[k] != new[k] for k in span):
                    trials.setdefault(read, (i, ch, cost))
        if not trials:
            return None
        spans = {r: [r[j : j + 2] for j in range(span.start - 1, span.stop) if 0 <= j < len(r) - 1] for r in trials}
        new_df = self._dfs((TITLE_GRAMS, BODY_GRAMS), [g for gs in spans.values() for g in gs])
        held = sorted((cost, r) for r, (_, _, cost) in trials.items() if all(new_df[g] for g in spans[r]))[:CHECKED]
        if not held:
            return None
        _, counts = self._held(base, [read for _, read in held])
        # The noisy channel of ``_best_held``; the correction is searched as the reader types it.
        likeliest, read = max(
            ((pages + self._worth(_replaced(run, *trials[read][:2]))) / cost if pages else 0.0, read)
            for (cost, read), pages in zip(held, counts, strict=True)
        )
        if likeliest == 0:
            return None
        i, ch, _ = trials[read]
        return i, ch, True

    def _best_held(
        self, run: str, fixes: list[tuple[int, str, float]], least_when_unheld: int
    ) -> tuple[int, str, bool] | None:
        """(position, character, whether no page holds the run as typed) of the fix of
        ``run`` (position, character, cost) the most pages hold verbatim for its cost (a
        noisy channel: how likely the word, times how likely this slip of it), when they
        are ``MIN_GAIN`` times the pages of the run as typed and at least ``MIN_PAGES``,
        or ``least_when_unheld`` when no page holds it; else None. What users search
        then chooses among the fixes the pages allow."""
        fixed = [_replaced(run, i, ch) for i, ch, _ in fixes]
        typed, counts = self._held(run, fixed)
        need = max(MIN_PAGES, MIN_GAIN * typed) if typed else least_when_unheld
        _, pages, _ = max((c / fixes[k][2], c, k) for k, c in enumerate(counts))
        if pages < need:
            return None
        allowed = [k for k, c in enumerate(counts) if c >= need]
        at = max(allowed, key=lambda k: ((counts[k] + self._worth(fixed[k])) / fixes[k][2], counts[k], k))
        return fixes[at][:2] + (typed == 0,)

    def _held(self, run: str, fixes: list[str]) -> tuple[int, list[int]]:
        """How many pages hold the run as typed, and each correction of it: as a word
        for two characters (a pair of characters is a bigram of many words: 市的,
        高度 must not stand in for 师大, 告诉), else as a phrase."""
        if len(run) == 2:
            dfs = self._dfs(_WORD_FIELDS, [run, *fixes])
            return dfs[run], [dfs[f] for f in fixes]
        return self._phrase_count(_grams_of(run), False), [self._phrase_count(_grams_of(f), False) for f in fixes]

    def _correct_word(self, word: str) -> str | None:
        """The most common word one edit from a Latin word that no page holds, or None."""
        if self._dfs(_WORD_FIELDS, [word])[word] > 0:
            return None
        edits = _edits(word)
        dfs = self._dfs(_WORD_FIELDS, edits)
        held = [e for e in edits if dfs[e] >= MIN_PAGES]
        return max(held, key=lambda e: (dfs[e] + self._worth(e), e)) if held else None


def _replaced(run: str, i: int, ch: str) -> str:
    return run[:i] + ch + run[i + 1 :]


def _grams_of(run: str) -> tuple[str, ...]:
    return tuple(run[j : j + 2] for j in range(len(run) - 1))


def _inside_word(text: str, start: int, end: int) -> bool:
    """Whether a run of letters is part of a longer token (digits, dots: apt-get, x86)."""
    return (start > 0 and text[start - 1] in _ALPHABET + ".-_") or (end < len(text) and text[end] in _ALPHABET + ".-_")


def _edits(word: str) -> list[str]:
    """Every word one deletion, transposition, replacement or insertion away."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    transposes = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    replaces = [a + c + b[1:] for a, b in splits if b for c in string.ascii_lowercase if c != b[0]]
    inserts = [a + c + b for a, b in splits for c in string.ascii_lowercase]
    return [e for e in dict.fromkeys(deletes + transposes + replaces + inserts) if len(e) >= 2 and e != word]
