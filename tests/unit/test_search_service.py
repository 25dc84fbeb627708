"""The search use case's parameter handling and answer shape, against a fake index;
tests/integration/test_query_language.py runs the query language on real indexes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pytest

from services.common.config import Settings
from services.common.domain.documents import IndexDoc, LinkFields
from services.common.domain.search_types import SearchHit, SearchHits, SearchQuery
from services.search.search_service import MAX_RESULT_WINDOW, BadQuery, SearchService


class FakeIndex:
    """Records queries; answers the AND query with ``and_hits`` and OR with ``or_hits``."""

    def __init__(self, and_hits: list[SearchHit] | None = None, or_hits: list[SearchHit] | None = None) -> None:
        self.queries: list[SearchQuery] = []
        self.and_hits = and_hits or []
        self.pinned_version: object | None = None  # None: a new index view at every search
        self.or_hits = or_hits or []

    def search(self, query: SearchQuery) -> SearchHits:
        self.queries.append(query)
        wanted = query.tree.must[0] if query.tree.must else None
        strict = wanted is None or wanted.minimum_should_match >= len(wanted.should)
        hits = self.and_hits if strict else self.or_hits
        return SearchHits(total=len(hits), hits=hits[query.offset : query.offset + query.limit])

    def upsert(self, docs: Sequence[IndexDoc]) -> None: ...
    def delete(self, urls: Iterable[str]) -> None: ...
    def commit(self) -> None: ...
    def url_for_hash(self, content_hash: str) -> str | None: ...
    def set_link_fields(self, fields: Mapping[str, LinkFields]) -> None: ...
    def get(self, url: str) -> IndexDoc | None: ...
    def count(self) -> int: return 0
    def view_version(self) -> object: return self.pinned_version or object()
    def term_stats(self, terms: Sequence[tuple[str, str]]) -> tuple[int, list[int]]: return 0, [0] * len(terms)
    def sites(self) -> list[str]: return []
    def urls(self) -> list[str]: return []
    def ping(self) -> None: ...
    def close(self) -> None: ...


def _hit(url: str, title: str = "标题", body: str = "正文") -> SearchHit:
    return SearchHit(url=url, site="example.cn", title=title, headings="", body=body, score=1.5, pagerank=0.01)


CFG = Settings(search_max_page_size=50)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": ""}, "q must not be empty"),
        ({"q": "   "}, "q must not be empty"),
        ({"q": "长" * 501}, "at most 500"),
        ({"q": "x", "page": 0}, "page must be 1 or more"),
        ({"q": "x", "page": "two"}, "page must be an integer"),
        ({"q": "x", "page": "1.5"}, "page must be an integer"),
        ({"q": "x", "size": 0}, "size must be between 1 and 50"),
        ({"q": "x", "size": 51}, "size must be between 1 and 50"),
        ({"q": "x", "size": True}, "size must be an integer"),
        ({"q": "x", "site": "a b"}, "site must be a host name"),
    ],
)
def test_bad_parameters_are_rejected_with_a_clear_message(params: dict, message: str) -> None:
    service = SearchService(CFG, FakeIndex())
    with pytest.raises(BadQuery, match=message):
        service.search(**params)


def test_the_last_allowed_page_and_numeric_strings_are_accepted() -> None:
    index = FakeIndex()
    out = SearchService(CFG, index).search("x", page="200", size=" 50 ")
    assert (out["page"], out["size"]) == (200, 50)
    # The window reaches past this page: pages follow from one folded, diversified order.
    assert (index.queries[0].offset, index.queries[0].limit) == (0, MAX_RESULT_WINDOW)


def test_the_answer_has_the_documented_shape_with_highlighted_escaped_html() -> None:
    hit = _hit("https://example.cn/a", title="<b>安装</b>指南", body="如何 <i>安装</i> 软件")
    index = FakeIndex(and_hits=[hit])
    out = SearchService(CFG, index).search("安装", page=1, size=10, site="Example.CN")
    assert out["sites"] == ["example.cn"]
    assert {"query", "total", "took_ms", "page", "size", "results"} <= set(out)
    assert (out["query"], out["total"], out["page"], out["size"], out["pages"]) == ("安装", 1, 1, 10, 1)
    (result,) = out["results"]
    assert {"url", "title", "snippet", "score", "pagerank", "site"} <= set(result)
    assert result["title"] == "<b>安装</b>指南"
    assert result["title_html"] == "&lt;b&gt;<em>安装</em>&lt;/b&gt;指南"
    assert result["snippet"] == "如何 &lt;i&gt;<em>安装</em>&lt;/i&gt; 软件"
    assert (result["url"], result["site"], result["score"], result["pagerank"]) == (
        "https://example.cn/a", "example.cn", 1.5, 0.01,
    )


def test_punctuation_only_queries_find_nothing_without_asking_the_index() -> None:
    index = FakeIndex()
    out = SearchService(CFG, index).search("？！")
    assert out["total"] == 0 and out["results"] == [] and index.queries == []


def test_when_no_page_has_every_word_any_word_will_do() -> None:
    index = FakeIndex(and_hits=[], or_hits=[_hit("https://example.cn/1")])
    out = SearchService(CFG, index).search("网络 xyzzy")
    assert len(index.queries) == 2
    assert out["total"] == 1 and out["matched_all"] is False


@pytest.mark.parametrize(
    ("q", "message"),
    [
        ("-网络", "only exclusions"),
        ("-site:example.cn", "only exclusions"),
        ("site:", "needs a host name"),
    ],
)
def test_queries_that_cannot_run_get_a_clear_message(q: str, message: str) -> None:
    with pytest.raises(BadQuery, match=message):
        SearchService(CFG, FakeIndex()).search(q)


def test_an_unclosed_quote_is_run_to_the_end_and_said_so() -> None:
    out = SearchService(CFG, FakeIndex(and_hits=[_hit("https://example.cn/1")])).search('"安装 软件')
    assert out["notes"] and "not closed" in out["notes"][0]


def test_a_repeated_search_on_an_unchanged_index_is_answered_from_the_cache() -> None:
    index = FakeIndex(and_hits=[_hit("http://example.cn/a")])
    index.pinned_version = "view-1"
    service = SearchService(CFG, index)
    first = service.search("软件")
    asked = len(index.queries)
    again = service.search("软件")
    assert len(index.queries) == asked and again["results"] == first["results"]
    service.search("软件", page=2)  # other parameters, another entry
    assert len(index.queries) > asked


def test_a_new_index_view_is_searched_afresh() -> None:
    index = FakeIndex(and_hits=[_hit("http://example.cn/a")])
    index.pinned_version = "view-1"
    service = SearchService(CFG, index)
    service.search("软件")
    index.and_hits = [_hit("http://example.cn/b")]
    index.pinned_version = "view-2"
    assert [r["url"] for r in service.search("软件")["results"]] == ["http://example.cn/b"]


def test_the_cache_can_be_turned_off() -> None:
    index = FakeIndex(and_hits=[_hit("http://example.cn/a")])
    index.pinned_version = "view-1"
    service = SearchService(CFG.model_copy(update={"search_cache_entries": 0}), index)
    service.search("软件")
    asked = len(index.queries)
    service.search("软件")
    assert len(index.queries) == 2 * asked
