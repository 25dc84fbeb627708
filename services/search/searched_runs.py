"""What users search, for the did-you-mean: the words of the queries the search log
counts, each with its share of the searches that found something.

A correction is chosen as a noisy channel chooses it, by how likely the slip times how
common the word meant. The pages say how common a word is in the site's text; the log
says how common in what its users look for, and a word in 1% of the searches counts as
much as one on 1% of the pages (``SpellingCorrector``). The log is read in the
background every ``refresh_s``: a search never waits for it, and a log that is away
leaves the last counts in place.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

from services.common.analysis import fold
from services.common.analysis.han import HAN_RUN
from services.common.analysis.words import initialise, words_and_subwords_of_folded
from services.common.ports import SearchLog
from services.common.runtime.periodic import Periodic

log = logging.getLogger(__name__)


def searched_words(queries: dict[str, int]) -> Counter[str]:
    """Each Han run of the folded queries and each word of two characters or more in
    them, as the index counts words (a word's subwords too: 青菜 of 炒青菜), with the
    searches of the queries holding it."""
    initialise()  # the segmenter's dictionaries, loaded once
    words: Counter[str] = Counter()
    for query, searches in queries.items():
        folded = fold(query)
        tokens, subwords = words_and_subwords_of_folded(folded)
        found = {m.group() for m in HAN_RUN.finditer(folded)} | {w for w in tokens + subwords if len(w) >= 2}
        for word in found:
            words[word] += searches
    return words


class SearchedRuns:
    """The search log's words and their shares of the searches, read again every ``refresh_s``."""

    def __init__(self, search_log: Callable[[], SearchLog], days: int, top: int, refresh_s: float) -> None:
        self._log = search_log  # called on use: a log that is away is only a missed refresh
        self._days = days
        self._top = top
        self._counts: tuple[Counter[str], int] = Counter(), 0  # (words, searches), swapped whole
        self.version = 0  # a new one whenever the counts change: answers cached before are stale
        self._failing = False
        self._periodic = Periodic("searched-runs", refresh_s, self.refresh)

    def refresh(self) -> None:
        """Read the log once; on failure keep what was read before."""
        try:
            queries = self._log().searched(self._days, self._top)
        except Exception as exc:  # the log's store away: the last counts stand
            if not self._failing:  # once a spell of failures, not every refresh
                log.warning("search log not read for the did-you-mean: %s", exc)
            self._failing = True
            return
        self._failing = False
        counts = searched_words(queries), sum(queries.values())
        if counts != self._counts:
            self._counts = counts
            self.version += 1

    def start(self) -> SearchedRuns:
        """Read the log now and every ``refresh_s`` from a daemon thread."""
        self._periodic.start(at_once=True)
        return self

    def stop(self) -> None:
        self._periodic.stop(wait_s=5.0)

    def share(self, word: str) -> float:
        """Of the searches counted, the share whose query holds ``word`` (a folded Han
        run or word, or a Latin word); 0 before the log was read."""
        words, searches = self._counts
        return words[word] / searches if searches else 0.0
