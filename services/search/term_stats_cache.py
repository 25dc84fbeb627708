"""Document frequencies of query words, kept while the index view is unchanged.

The query planner bounds each field's idf by the collection's (query_plan.field_scales),
which needs, per query, how many documents hold each word in each field. tantivy
answers from its term dictionary in microseconds; Elasticsearch needs a request of
counts, a round trip per query. Words repeat across queries far more than queries
do, so a per-worker map of (field, word) → document frequency answers most of them
without asking, on the same terms as the result cache (services/search/result_cache.py):
valid while ``view_version()`` is unchanged, or for ``ttl_s`` seconds on a backend
that cannot tell.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from services.search.result_cache import ResultCache

TermStats = Callable[[Sequence[tuple[str, str]]], tuple[int, list[int]]]
_DOCS = ("", "")  # the entry holding the number of documents


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
        known = {t: self._cache.get(t, version) for t in (_DOCS, *terms)}
        missing = [t for t in dict.fromkeys(terms) if known[t] is None]
        if missing or known[_DOCS] is None:
            docs, dfs = self._fetch(missing)
            self._cache.put(_DOCS, version, docs)
            for t, df in zip(missing, dfs, strict=True):
                self._cache.put(t, version, df)
                known[t] = df
            known[_DOCS] = docs
        return _count(known[_DOCS]), [_count(known[t]) for t in terms]


def _count(value: object) -> int:
    """A cached count; every key was filled above, so None cannot reach here."""
    assert isinstance(value, int)
    return value
