"""A stand-in for the search index while `tansuo api` is still connecting to it.

The API starts serving before its index answers, so that during an outage at
start-up it says so (/readyz 503, searches 503) instead of crash-looping. Every
call fails with BackendUnavailable until ``attach`` hands over the real index.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from services.common.domain.documents import IndexDoc, LinkFields, MergeReport
from services.common.domain.search_types import SearchHits, SearchQuery
from services.common.errors import BackendUnavailable
from services.common.ports import SearchIndex


class PendingSearchIndex:
    """The SearchIndex port, delegated once attached. Explicit methods rather than
    ``__getattr__``: attribute access that raised anything but AttributeError would
    break ``hasattr``/``getattr`` callers in surprising ways."""

    def __init__(self) -> None:
        self._index: SearchIndex | None = None
        self.why = "connecting"  # shown in errors until attached

    def attach(self, index: SearchIndex) -> None:
        self._index = index

    def _get(self) -> SearchIndex:
        index = self._index
        if index is None:
            raise BackendUnavailable(f"search index not connected: {self.why}")
        return index

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        self._get().upsert(docs)

    def delete(self, urls: Iterable[str]) -> None:
        self._get().delete(urls)

    def commit(self) -> None:
        self._get().commit()

    def url_for_hash(self, content_hash: str) -> str | None:
        return self._get().url_for_hash(content_hash)

    def urls_for_hashes(self, content_hashes: Collection[str]) -> dict[str, str]:
        return self._get().urls_for_hashes(content_hashes)

    def fetch_times(self, urls: Collection[str]) -> dict[str, float]:
        return self._get().fetch_times(urls)

    def near_duplicates(self, signature: Sequence[int]) -> list[tuple[str, tuple[int, ...]]]:
        return self._get().near_duplicates(signature)

    def set_link_fields(self, fields: Mapping[str, LinkFields]) -> None:
        self._get().set_link_fields(fields)

    def search(self, query: SearchQuery) -> SearchHits:
        return self._get().search(query)

    def term_stats(self, terms: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        return self._get().term_stats(terms)

    def view_version(self) -> object | None:
        return self._get().view_version()

    def get(self, url: str) -> IndexDoc | None:
        return self._get().get(url)

    def count(self) -> int:
        return self._get().count()

    def searched_at(self) -> float | None:
        return self._get().searched_at()

    def sites(self) -> list[str]:
        return self._get().sites()

    def urls(self) -> list[str]:
        return self._get().urls()

    def ping(self) -> None:
        self._get().ping()

    def force_merge(self, progress: Callable[[int, int], None] | None = None) -> MergeReport:
        return self._get().force_merge(progress)

    def close(self, finish_merges: bool = False) -> None:
        if self._index is not None:
            self._index.close(finish_merges)
