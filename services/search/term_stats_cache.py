"""Document frequencies of query words, kept while the index view is unchanged.

The query planner bounds each field's idf by the collection's (query_plan.field_scales),
which needs, per query, how many documents hold each word in each field. tantivy
answers from its term dictionary in microseconds; Elasticsearch needs a request of
counts, a round trip per query. Words repeat across queries far more than queries
do, so a per-worker map of (field, word) → document frequency answers most of them
without asking, on the same terms as the result cache (services/search/result_cache.py):
valid while ``view_version()`` is unchanged, or for ``ttl_s`` seconds on a backend
that cannot tell. Within one search (``one_search``) a count is asked at most once
whatever that map holds: the planner and the spelling check ask for the same bigrams,
and while a crawl commits every few seconds the map is mostly cold.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from services.search.result_cache import ResultCache

TermStats = Callable[[Sequence[tuple[str, str]]], tuple[int, list[int]]]
_DOCS = ("", "")  # the entry holding the number of documents
# The counts already asked in the search under way on this thread (None outside one).
_THIS_SEARCH: contextvars.ContextVar[dict[tuple[str, str], int] | None] = contextvars.ContextVar(
    "term_stats_this_search", default=None
)


@contextmanager
def one_search() -> Iterator[None]:
    """Within this block each (field, word)'s count is fetched once, cache or no cache."""
    token = _THIS_SEARCH.set({})
    try:
        yield
    finally:
        _THIS_SEARCH.reset(token)


class CachedTermStats:
    def __init__(
        self,
        fetch: TermStats,
        version: Callable[[], object | None],
        max_entries: int,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._version = version
        self._cache = ResultCache(max_entries, ttl_s, clock)

    def __call__(self, terms: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        version = self._version()
        this_search = _THIS_SEARCH.get()
        held = this_search if this_search is not None else {}
        known = {t: held[t] if t in held else self._cache.get(t, version) for t in (_DOCS, *terms)}
        missing = [t for t in dict.fromkeys(terms) if known[t] is None]
        if missing or known[_DOCS] is None:
            docs, dfs = self._fetch(missing)
            self._cache.put(_DOCS, version, docs)
            for t, df in zip(missing, dfs, strict=True):
                self._cache.put(t, version, df)
                known[t] = df
            known[_DOCS] = docs
        if this_search is not None:
            this_search.update((t, _count(c)) for t, c in known.items())
        return _count(known[_DOCS]), [_count(known[t]) for t in terms]


def _count(value: object) -> int:
    """A cached count; every key was filled above, so None cannot reach here."""
    assert isinstance(value, int)
    return value
