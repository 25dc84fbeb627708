"""A reader keeps the stored fields of documents it has read, per index view."""

from __future__ import annotations

from services.common.adapters.tantivy.stored_hit_cache import StoredHitCache
from services.common.domain.search_types import SearchHit


def _hit(url: str) -> SearchHit:
    return SearchHit(url=url, site="a.cn", title="标题", headings="", body="正文", score=0.0, pagerank=0.0)


def test_a_document_is_read_once_while_its_view_lasts() -> None:
    cache, reads = StoredHitCache(10), []

    def load(url: str):  # type: ignore[no-untyped-def]
        return lambda: reads.append(url) or _hit(url)

    assert cache.get((1, 0, 5), load("http://a.cn/5")).url == "http://a.cn/5"
    assert cache.get((1, 0, 5), load("http://a.cn/other")).url == "http://a.cn/5"
    assert cache.get((2, 0, 5), load("http://a.cn/new")).url == "http://a.cn/new"  # a new view: read again
    assert reads == ["http://a.cn/5", "http://a.cn/new"]


def test_the_least_recently_used_documents_go_first() -> None:
    cache = StoredHitCache(2)
    for n in range(3):
        cache.get((1, 0, n), lambda n=n: _hit(f"http://a.cn/{n}"))
    cache.get((1, 0, 1), lambda: _hit("http://a.cn/again"))  # still there
    assert len(cache) == 2
    assert cache.get((1, 0, 0), lambda: _hit("http://a.cn/reread")).url == "http://a.cn/reread"


def test_a_cache_of_no_entries_reads_every_time() -> None:
    cache, reads = StoredHitCache(0), []
    for _ in range(2):
        cache.get((1, 0, 0), lambda: reads.append(1) or _hit("http://a.cn/0"))
    assert reads == [1, 1]
