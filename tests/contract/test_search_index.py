"""The SearchIndex contract, run against every adapter.

Documents are built already segmented (``tests.page_events.index_doc``: the words
of a text are its tokens), so the checks hold for any backend that searches the
``*_tokens`` fields as whitespace-separated terms. The Elasticsearch adapter runs
as the ``elasticsearch`` param (marked integration) against a session noida-db server.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from services.common.adapters.elasticsearch.search_index import ElasticsearchSearchIndex
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.common.domain.documents import IndexDoc, LinkFields
from services.common.domain.query_tree import Bool, Phrase, Term
from services.common.domain.search_types import SearchQuery
from services.common.errors import IndexUnavailable
from services.common.ports import SearchIndex
from services.search.query_plan import words_query
from tests.page_events import index_doc, page_event

CFG = Settings(search_rescore_window=50)
A, B, C = "https://a.example.cn/", "https://b.example.cn/", "https://c.example.cn/"

OpenIndex = Callable[..., SearchIndex]


@pytest.fixture(params=["tantivy", pytest.param("elasticsearch", marks=pytest.mark.integration)])
def open_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenIndex]:
    """Opens instances on one store: a writer, or a read-only view for another process."""
    opened: list[SearchIndex] = []
    if request.param == "elasticsearch":
        # A fresh alias per test on the session's server (es_alias deletes it after).
        url = request.getfixturevalue("es_index_url")

    def open_(read_only: bool = False, cfg: Settings = CFG) -> SearchIndex:
        index: SearchIndex
        if request.param == "elasticsearch":
            index = ElasticsearchSearchIndex.from_url(url, cfg, read_only=read_only)
        else:
            index = TantivySearchIndex(tmp_path / "index", cfg, read_only=read_only)
        opened.append(index)
        return index

    yield open_
    for index in reversed(opened):
        index.close()


@pytest.fixture
def index(open_index: OpenIndex) -> SearchIndex:
    return open_index()


def _query(
    *terms: str, site: str = "", require_all: bool = True, phrase: tuple[str, ...] = (), offset: int = 0, limit: int = 10
) -> SearchQuery:
    tree = words_query(CFG, terms, require_all=require_all, site=site)
    if phrase:
        boost = Bool(should=tuple(Phrase(f, phrase) for f in ("title_tokens", "body_tokens")), minimum_should_match=1)
        tree = Bool(must=(tree,), should=(boost,))
    return SearchQuery(tree=tree, offset=offset, limit=limit)


def _search(index: SearchIndex, *terms: str, **kw: object) -> list[str]:
    return [h.url for h in index.search(_query(*terms, **kw)).hits]  # type: ignore[arg-type]


def test_writes_become_visible_on_commit(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "软件 安装", "正文")])
    assert index.count() == 0 and _search(index, "软件") == []
    index.commit()
    assert index.count() == 1
    assert _search(index, "软件") == [A]
    index.ping()


def test_upsert_replaces_the_document_with_the_same_url(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "旧 标题", "旧 正文")])
    index.commit()
    index.upsert([index_doc(A, "新 标题", "新 正文")])
    index.commit()
    assert index.count() == 1 and index.urls() == [A]
    doc = index.get(A)
    assert doc is not None and doc.title == "新标题" and doc.body_tokens == "新 正文"
    assert _search(index, "旧") == []
    assert _search(index, "新") == [A]


def test_get_returns_every_field_as_written(index: SearchIndex) -> None:
    doc = index_doc(A, "标题", "正文 <b>", "小节", subwords="题 文")
    index.upsert([doc])
    index.commit()
    assert index.get(A) == doc
    assert index.get(B) is None


def test_link_fields_survive_an_upsert_without_them(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题", "正文")])
    index.commit()
    index.set_link_fields({A: LinkFields(pagerank=0.25, rank=2.5, anchors="入口 页面", anchors_tokens="入口 页面")})
    index.commit()
    index.upsert([index_doc(A, "新 标题", "正文")])  # a re-crawl
    index.commit()
    doc = index.get(A)
    assert doc is not None and doc.title == "新标题"
    assert (doc.pagerank, doc.rank, doc.anchors_tokens) == (0.25, 2.5, "入口 页面")


def test_link_fields_survive_two_upserts_in_one_batch(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题", "正文")])
    index.set_link_fields({A: LinkFields(0.1, 1.0, "入口", "入口")})
    index.upsert([index_doc(A, "标题 二", "正文")])
    index.commit()
    doc = index.get(A)
    assert doc is not None and (doc.rank, doc.anchors) == (1.0, "入口")


def test_an_upsert_with_link_fields_sets_them(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题", "正文")])
    index.set_link_fields({A: LinkFields(0.1, 1.0, "入口", "入口")})
    index.commit()
    index.upsert([replace(index_doc(A, "标题", "正文"), pagerank=0.3, rank=3.0)])
    index.commit()
    doc = index.get(A)
    assert doc is not None and (doc.pagerank, doc.rank, doc.anchors) == (0.3, 3.0, "")


def test_set_link_fields_ignores_unknown_urls_and_makes_anchors_searchable(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题", "正文")])
    index.commit()
    index.set_link_fields(
        {A: LinkFields(0.5, 1.0, "镜像 站点", "镜像 站点"), B: LinkFields(0.5, 1.0, "别处", "别处")}
    )
    index.commit()
    assert index.urls() == [A]
    assert _search(index, "镜像") == [A]


def test_url_for_hash_knows_committed_documents_only(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题", "正文", content_hash="h1")])
    assert index.url_for_hash("h1") is None
    index.commit()
    assert index.url_for_hash("h1") == A
    assert index.url_for_hash("h2") is None
    assert index.url_for_hash("") is None
    index.delete([A])
    index.commit()
    assert index.url_for_hash("h1") is None


def test_urls_for_hashes_answers_url_for_hash_of_many_hashes_at_once(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题", "正文", content_hash="h1"), index_doc(B, "标题", "正文", content_hash="h2")])
    assert index.urls_for_hashes(["h1", "h2"]) == {}
    index.commit()
    # Copies of one text on several sites: the smallest URL, as url_for_hash says.
    index.upsert([index_doc(u, "标题", "正文", content_hash="h1") for u in (C, "https://0.example.cn/")])
    index.delete([B])
    index.upsert([index_doc(f"https://{i}.example.cn/p", "页", "文", content_hash=f"m{i}") for i in range(1200)])
    index.commit()
    wanted = ["h1", "h2", "h3", "", "h1", *(f"m{i}" for i in range(1200))]
    owners = index.urls_for_hashes(wanted)
    assert owners == {h: url for h in set(wanted) if (url := index.url_for_hash(h)) is not None}
    assert owners["h1"] == "https://0.example.cn/" and "h2" not in owners and len(owners) == 1201
    assert index.urls_for_hashes([]) == {}


def test_fetch_times_knows_committed_documents_only(index: SearchIndex) -> None:
    index.upsert([replace(index_doc(A, "标题", "正文"), fetched_at=1000.5), replace(index_doc(B, "标题"), fetched_at=7.0)])
    assert index.fetch_times([A, B]) == {}
    index.commit()
    index.upsert([replace(index_doc(A, "新", "正文"), fetched_at=2000.0)])  # not committed yet
    assert index.fetch_times([A, B, C, A]) == {A: 1000.5, B: 7.0}
    index.delete([B])
    index.commit()
    assert index.fetch_times([A, B]) == {A: 2000.0}
    assert index.fetch_times([]) == {}


def test_writes_of_one_batch_apply_in_the_order_they_were_made(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "一"), index_doc(B, "一")])
    index.commit()
    index.upsert([index_doc(A, "二")])
    index.delete([A])  # upserted, then deleted: gone
    index.delete([B])
    index.upsert([index_doc(B, "三")])  # deleted, then upserted: there
    index.upsert([index_doc(C, "四")])
    index.upsert([index_doc(C, "五")])  # the last write of a URL wins
    index.commit()
    assert index.urls() == [B, C]
    assert [index.get(u).title for u in (B, C)] == ["三", "五"]  # type: ignore[union-attr]


def test_a_batch_larger_than_one_request_lands_whole_on_commit(index: SearchIndex) -> None:
    # 1,100 writes: more than one bulk request holds on Elasticsearch (bulk_buffer.MAX_ACTIONS).
    urls = [f"https://a.example.cn/{i:04d}" for i in range(1100)]
    index.upsert([index_doc(u, "标题", f"正文 {i}") for i, u in enumerate(urls)])
    index.delete(urls[:100])
    assert index.count() == 0
    index.commit()
    assert index.count() == 1000 and index.urls() == urls[100:]


def test_delete_removes_the_document_and_ignores_unknown_urls(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题", "正文"), index_doc(B, "标题", "正文")])
    index.commit()
    index.delete([A, C])
    index.commit()
    assert index.urls() == [B]
    assert _search(index, "标题") == [B]
    assert index.get(A) is None


def test_sites_lists_each_site_once(index: SearchIndex) -> None:
    index.upsert(
        [index_doc(A, "一"), index_doc(A + "x", "二"), index_doc(B, "三"), index_doc("http://c.cn:8080/", "四")]
    )
    index.commit()
    assert index.sites() == ["a.example.cn", "b.example.cn", "c.cn:8080"]


def test_the_site_filter_keeps_other_sites_out_and_non_matches_out(index: SearchIndex) -> None:
    index.upsert(
        [index_doc(A, "网络 配置"), index_doc(A + "2", "无关 内容"), index_doc(B, "网络 配置")]
    )
    index.commit()
    assert _search(index, "网络", site="a.example.cn") == [A]
    assert _search(index, "网络", "xyzzy", site="a.example.cn", require_all=False) == [A]
    assert index.search(_query("网络", site="a.example.cn")).total == 1


def test_paging_walks_every_match_once_in_a_stable_order(index: SearchIndex) -> None:
    urls = [f"https://example.cn/{i:02d}" for i in range(25)]
    index.upsert([index_doc(u, "共同 词语", f"正文 {i}") for i, u in enumerate(urls)])
    index.commit()
    pages = [index.search(_query("共同", offset=o, limit=10)) for o in (0, 10, 20)]
    assert [p.total for p in pages] == [25, 25, 25]
    assert [len(p.hits) for p in pages] == [10, 10, 5]
    seen = [h.url for p in pages for h in p.hits]
    assert sorted(seen) == urls
    again = [h.url for o in (0, 10, 20) for h in index.search(_query("共同", offset=o, limit=10)).hits]
    assert again == seen
    assert index.search(_query("共同", offset=30, limit=10)).hits == []


def test_all_terms_are_required_unless_any_will_do(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "网络 配置"), index_doc(B, "网络 故障"), index_doc(C, "打印 配置")])
    index.commit()
    assert _search(index, "网络", "配置") == [A]
    both = index.search(_query("网络", "配置", require_all=False))
    assert both.total == 3 and both.hits[0].url == A
    assert _search(index, "网络", "xyzzy") == []


def test_a_title_match_outranks_a_body_match(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "其他 标题", "内核 模块 说明"), index_doc(B, "内核 模块", "其他 标题 说明")])
    index.commit()
    assert _search(index, "内核") == [B, A]


def test_a_heading_match_outranks_a_body_match(index: SearchIndex) -> None:
    index.upsert(
        [index_doc(A, "标题", "内核 说明", headings="其他"), index_doc(B, "标题", "其他 说明", headings="内核")]
    )
    index.commit()
    assert _search(index, "内核") == [B, A]


def test_a_subword_match_ranks_below_a_whole_word_match(index: SearchIndex) -> None:
    index.upsert(
        [
            index_doc(A, "标题", "中华人民共和国 成立", subwords="中华 人民 共和国"),
            index_doc(B, "标题", "人民 成立"),
        ]
    )
    index.commit()
    assert _search(index, "人民") == [B, A]


def test_words_in_query_order_earn_the_phrase_boost(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题", "学习 资料 机器"), index_doc(B, "标题", "机器 学习 资料")])
    index.commit()
    hits = index.search(_query("机器", "学习", phrase=("机器", "学习"))).hits
    assert [h.url for h in hits] == [B, A]
    no_phrase = index.search(_query("机器", "学习")).hits
    assert no_phrase[0].score == pytest.approx(no_phrase[1].score)


def test_a_phrase_alone_matches_nothing_extra(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题", "机器 学习"), index_doc(B, "标题", "其他")])
    index.commit()
    assert _search(index, "机器", phrase=("机器", "学习"), require_all=False) == [A]


def test_rank_breaks_a_tie_by_the_saturating_rank_feature(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "相同 标题", "相同 正文"), index_doc(B, "相同 标题", "相同 正文")])
    index.commit()
    tied = index.search(_query("相同")).hits
    assert [h.url for h in tied] == [A, B]  # equal scores: ordered by URL
    assert tied[0].score == tied[1].score
    index.set_link_fields({B: LinkFields(pagerank=0.6, rank=3.0, anchors="", anchors_tokens="")})
    index.commit()
    hits = index.search(_query("相同")).hits
    assert [h.url for h in hits] == [B, A]
    expected = CFG.search_pagerank_weight * 3.0 / (3.0 + CFG.search_pagerank_pivot)
    assert hits[0].score - hits[1].score == pytest.approx(expected, rel=1e-5)
    assert hits[0].pagerank == 0.6


def test_the_rank_feature_reorders_hits_within_the_rescore_window(open_index: OpenIndex) -> None:
    index = open_index(cfg=Settings(search_rescore_window=10, search_pagerank_weight=100.0))
    urls = [f"https://example.cn/{i:02d}" for i in range(30)]
    # Longer bodies score lower, so page 29 is last by BM25 alone.
    index.upsert([index_doc(u, "词", " ".join(["词"] + ["填充"] * i)) for i, u in enumerate(urls)])
    index.commit()
    index.set_link_fields({urls[5]: LinkFields(0.5, 5.0, "", "")})
    index.commit()
    first = index.search(_query("词", limit=3))
    assert first.total == 30
    assert first.hits[0].url == urls[5]


def test_empty_queries_find_nothing(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "标题")])
    index.commit()
    assert index.search(_query()).total == 0
    assert index.search(_query("标题", limit=0)).hits == []


def test_a_read_only_instance_sees_the_writers_commits(open_index: OpenIndex) -> None:
    writer = open_index()
    writer.upsert([index_doc(A, "第一")])
    writer.commit()
    reader = open_index(read_only=True)
    assert reader.count() == 1 and _search(reader, "第一") == [A]
    writer.upsert([index_doc(B, "第二")])
    assert reader.count() == 1  # not yet committed
    writer.commit()
    assert reader.count() == 2 and _search(reader, "第二") == [B]
    assert reader.sites() == ["a.example.cn", "b.example.cn"]
    writer.delete([A])
    writer.commit()
    assert reader.urls() == [B]
    reader.ping()
    with pytest.raises(IndexUnavailable, match="read-only"):
        reader.upsert([index_doc(C, "第三")])


def test_a_read_only_instance_needs_an_existing_index(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="no search index"):
        TantivySearchIndex(tmp_path / "missing", CFG, read_only=True)


def test_a_writable_instance_creates_its_directory(tmp_path: Path) -> None:
    index = TantivySearchIndex(tmp_path / "deep" / "index", CFG)
    try:
        assert index.count() == 0 and index.sites() == [] and index.urls() == []
        index.ping()
    finally:
        index.close()


def test_two_threads_can_write_through_one_instance(index: SearchIndex) -> None:
    def write(prefix: str) -> None:
        for i in range(30):
            index.upsert([index_doc(f"https://{prefix}.cn/{i}", "标题", f"正文 {prefix}")])
            if i % 10 == 0:
                index.commit()

    threads = [threading.Thread(target=write, args=(p,)) for p in ("x", "y")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    index.commit()
    assert index.count() == 60


def test_near_duplicates_finds_documents_sharing_a_band_with_their_signatures(index: SearchIndex) -> None:
    from services.common.domain import minhash

    words = [f"词{n}" for n in range(120)]
    sig = minhash.signature(words)
    close = minhash.signature(words[:110] + ["别的", "词语"] * 5)
    far = minhash.signature([f"其他{n}" for n in range(120)])
    index.upsert(
        [
            replace(index_doc("http://a.cn/1"), minhash=sig),
            replace(index_doc("http://a.cn/2"), minhash=far),
            index_doc("http://a.cn/3"),  # too short to have a signature
        ]
    )
    index.commit()
    found = dict(index.near_duplicates(close))
    assert "http://a.cn/1" in found and found["http://a.cn/1"] == sig
    assert "http://a.cn/2" not in found
    assert index.near_duplicates(()) == []
    assert index.get("http://a.cn/1").minhash == sig


def test_bigram_fields_survive_a_rewrite_of_the_link_fields(index: SearchIndex) -> None:
    # tantivy does not store bigrams; a rewrite must rebuild them from the stored text.
    from services.common.analysis import grams
    from services.indexer.document_builder import build_document
    from tests.page_events import page_event

    index.upsert([build_document(page_event(A, "排版", "可以用破折号替换一个或两个减号。", ["標題"]))])
    index.commit()
    index.set_link_fields({A: LinkFields(pagerank=0.5, rank=2.0, anchors="锚", anchors_tokens="锚")})
    index.commit()
    for text, field in (("折号替换", "body_grams"), ("标题", "body_grams"), ("排版", "title_grams")):
        query = SearchQuery(tree=Phrase(field, tuple(grams(text))))
        assert [h.url for h in index.search(query).hits] == [A], text
    stored = index.get(A)
    assert stored is not None and stored.body_grams.split()[:2] == ["标题", "可以"]


def test_a_page_of_links_stays_out_of_its_link_texts_when_its_link_fields_are_rewritten(
    open_index: OpenIndex,
) -> None:
    # Such a page is indexed by its own text (the indexer's rule). tantivy builds the
    # bigrams of a page it rewrites again, here from the stored document (nothing is
    # kept from the write), and must build them from that text, not from the body shown.
    from services.common.analysis import grams
    from services.indexer.document_builder import build_document

    index = open_index(cfg=CFG.model_copy(update={"index_gram_cache_chars": 0}))
    hub = page_event(A, "文档首页", "欢迎阅读。\n防火墙配置\n打印机设置")
    index.upsert([build_document(dataclasses.replace(hub, link_page=True, own_text="欢迎阅读。"))])
    index.commit()
    index.set_link_fields({A: LinkFields(pagerank=0.5, rank=2.0, anchors="", anchors_tokens="")})
    index.commit()

    def found(text: str) -> list[str]:
        return [h.url for h in index.search(SearchQuery(tree=Phrase("body_grams", tuple(grams(text))))).hits]

    assert found("欢迎阅读") == [A]
    assert found("防火墙配置") == []
    stored = index.get(A)
    assert stored is not None and stored.pagerank == 0.5 and "防火墙配置" in stored.body


def test_term_stats_count_documents_per_field_and_token(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "网络 指南", "网络 配置"), index_doc(B, "打印", "网络 打印"), index_doc(C, "打印", "驱动")])
    index.commit()
    docs, dfs = index.term_stats([("title_tokens", "网络"), ("body_tokens", "网络"), ("title_tokens", "打印"),
                                  ("body_tokens", "无此词")])  # fmt: skip
    assert (docs, dfs) == (3, [1, 2, 2, 0])


def _scored(index: SearchIndex, *terms: str) -> list[tuple[str, float]]:
    return [(h.url, round(h.score, 4)) for h in index.search(_query(*terms, require_all=False)).hits]


def test_a_force_merge_keeps_every_document_its_link_fields_and_scores(open_index: OpenIndex) -> None:
    index = open_index()
    for url, title, body in ((A, "软件 安装", "安装 步骤"), (B, "软件 下载", "下载 安装"), (C, "网络 设置", "设置 网络")):
        index.upsert([index_doc(url, title, body)])
        index.commit()  # one segment each, on tantivy
    index.delete([C])
    index.set_link_fields({A: LinkFields(pagerank=0.25, rank=2.5, anchors="入口 页面", anchors_tokens="入口 页面")})
    index.commit()
    reader = open_index(read_only=True)
    before = {q: _scored(index, *q) for q in (("软件",), ("安装",), ("入口",), ("网络",))}
    link_fields = index.get(A)

    report = index.force_merge()

    assert report.documents == 2 and index.count() == 2
    if isinstance(index, TantivySearchIndex):
        assert report.segments_before is not None and report.segments_before >= 2
        assert report.segments_after == 1
    assert {q: _scored(index, *q) for q in before} == before
    assert {q: _scored(reader, *q) for q in before} == before  # another process's reader follows
    assert index.get(C) is None
    kept = index.get(A)
    assert kept is not None and link_fields is not None
    assert (kept.pagerank, kept.rank, kept.anchors, kept.body_tokens) == (
        link_fields.pagerank, link_fields.rank, link_fields.anchors, link_fields.body_tokens)  # fmt: skip
    index.upsert([index_doc(C, "网络 设置", "设置 网络")])  # the index is writable again
    index.commit()
    assert _search(index, "网络") == [C]


def test_an_interrupted_force_merge_changes_nothing(tmp_path: Path) -> None:
    index = TantivySearchIndex(tmp_path / "index", CFG)
    try:
        for url in (A, B):
            index.upsert([index_doc(url, "软件 安装", "正文")])
            index.commit()
        segments = index._searcher().num_segments

        def interrupt(done: int, total: int) -> None:
            raise KeyboardInterrupt  # Ctrl-C while the copy runs

        with pytest.raises(KeyboardInterrupt):
            index.force_merge(interrupt)
        assert index._searcher().num_segments == segments and index.count() == 2
        index.upsert([index_doc(C, "网络", "正文")])
        index.commit()
        assert index.count() == 3
    finally:
        index.close()
    reopened = TantivySearchIndex(tmp_path / "index", CFG, read_only=True)
    assert sorted(reopened.urls()) == [A, B, C]


def _tantivy_segments(path: Path) -> int:
    return TantivySearchIndex(path, CFG, read_only=True)._searcher().num_segments


def test_a_finished_close_keeps_the_merges_under_way(tmp_path: Path) -> None:
    """Eight commits make eight segments, which tantivy's merge policy merges in the
    background. A rollback would discard that merge; a finished job waits for it."""
    index = TantivySearchIndex(tmp_path / "index", CFG)
    urls = [f"https://a.example.cn/{n}" for n in range(8)]
    for url in urls:
        index.upsert([index_doc(url, "软件 安装", "正文")])
        index.commit()
    index.close(finish_merges=True)
    assert _tantivy_segments(tmp_path / "index") == 1
    assert sorted(TantivySearchIndex(tmp_path / "index", CFG, read_only=True).urls()) == sorted(urls)


def test_a_finished_close_still_drops_what_was_not_committed(tmp_path: Path) -> None:
    index = TantivySearchIndex(tmp_path / "index", CFG)
    index.upsert([index_doc(A, "软件 安装", "正文")])
    index.commit()
    index.upsert([index_doc(B, "软件 下载", "正文")])
    index.close(finish_merges=True)
    assert TantivySearchIndex(tmp_path / "index", CFG, read_only=True).urls() == [A]


def test_term_stats_never_count_a_word_in_more_documents_than_they_count(index: SearchIndex) -> None:
    # tantivy counts the versions a rewrite deleted until a merge drops them, in a word's
    # document frequency and (so) in the number of documents beside it; with the live
    # number beside it, a word on every page of a rewritten index had a negative idf.
    index.upsert([index_doc(A, "网络 指南", "网络 配置"), index_doc(B, "网络", "网络 打印")])
    index.commit()
    for rank in (1.0, 2.0, 3.0):  # the ranker's runs: each rewrites both pages
        index.set_link_fields({u: LinkFields(0.5, rank, "", "") for u in (A, B)})
        index.commit()
    docs, dfs = index.term_stats([("title_tokens", "网络"), ("body_tokens", "网络"), ("body_tokens", "打印")])
    assert docs >= 2 and all(df <= docs for df in dfs)
    assert dfs[0] * 2 >= docs and dfs[2] > 0  # in every page, in some


def test_url_for_hash_is_the_smallest_url_even_when_many_share_the_hash(index: SearchIndex) -> None:
    # Copies on other sites stay in the index (indexer._rivals): a text mirrored on a
    # dozen sites must have one owner in both deployments (tantivy once took the
    # smallest of the first ten matches only).
    urls = [f"https://s{i:02d}.example.cn/" for i in range(15)]
    index.upsert([index_doc(u, "标题", "正文", content_hash="same") for u in reversed(urls)])
    index.commit()
    assert index.url_for_hash("same") == urls[0]


def test_get_returns_display_text_that_starts_with_the_token_marker(index: SearchIndex) -> None:
    # Titles and headings keep private-use characters (page_text.collapse), e.g. an
    # icon-font glyph before a word; only token fields carry the marker (Elasticsearch
    # once stripped a leading "\ue000 " from display text too).
    doc = replace(index_doc(A, "标题", "正文"), title="\ue000 首页", headings="\ue000")
    index.upsert([doc])
    index.commit()
    got = index.get(A)
    assert got is not None and (got.title, got.headings) == (doc.title, doc.headings)


def test_an_empty_document_round_trips_through_a_link_field_rewrite(open_index: OpenIndex) -> None:
    index = open_index()
    empty = IndexDoc(url=A, site="", title="", headings="", body="", content_hash="", title_tokens="",
                     headings_tokens="", body_tokens="", subword_tokens="")  # fmt: skip
    index.upsert([empty])
    index.commit()
    assert index.get(A) == empty and index.sites() == [] and index.url_for_hash("") is None
    index.set_link_fields({A: LinkFields(0.5, 1.0, "锚", "锚")})
    index.commit()
    expected = replace(empty, pagerank=0.5, rank=1.0, anchors="锚", anchors_tokens="锚")
    assert index.get(A) == expected and _search(index, "锚") == [A]
    assert open_index(read_only=True).get(A) == expected  # bigrams rebuilt by a reader: none


def test_delete_and_re_add_in_one_batch_drops_the_link_fields(index: SearchIndex) -> None:
    index.upsert([index_doc(A, "旧", "正文")])
    index.commit()
    index.set_link_fields({A: LinkFields(0.5, 2.0, "锚", "锚")})
    index.commit()
    index.delete([A])
    index.upsert([index_doc(A, "新", "正文")])
    index.upsert([index_doc(C, "一")])
    index.set_link_fields({C: LinkFields(0.5, 2.0, "锚", "锚")})
    index.upsert([index_doc(C, "二")])
    index.delete([C])
    index.upsert([index_doc(C, "三")])
    index.commit()
    a, c = index.get(A), index.get(C)
    assert a is not None and (a.title, a.rank, a.anchors) == ("新", 0.0, "")
    assert c is not None and (c.title, c.rank, c.anchors) == ("三", 0.0, "")


def test_unusual_urls_round_trip(index: SearchIndex) -> None:
    weird = [
        "https://a.example.cn/路径/页面?q=中文&x=1#片段", "https://a.example.cn/a b", "https://a.example.cn/A",
        "https://a.example.cn/a", "https://a.example.cn/%E4%B8%AD", "https://a.example.cn/\U0001f600",
        "https://a.example.cn/\ufffd", "https://例子.中国/", "https://a.example.cn/x\ty", "https://a.example.cn/t ",
    ]  # fmt: skip
    index.upsert([index_doc(u, "标题", "正文", content_hash=f"h{i}") for i, u in enumerate(weird)])
    index.commit()
    assert index.urls() == sorted(weird)
    assert [h.url for h in index.search(_query("标题", limit=50)).hits] == sorted(weird)  # ties by URL
    for i, u in enumerate(weird):
        got = index.get(u)
        assert got is not None and got.url == u and index.url_for_hash(f"h{i}") == u
    index.delete(weird)
    index.commit()
    assert index.urls() == []


def test_a_page_of_links_keeps_its_bigrams_through_a_force_merge(open_index: OpenIndex) -> None:
    from services.common.analysis import grams
    from services.indexer.document_builder import build_document

    index = open_index(cfg=CFG.model_copy(update={"index_gram_cache_chars": 0}))
    hub = page_event(A, "文档首页", "欢迎阅读。\n防火墙配置\n打印机设置")
    empty_own = page_event(B, "导航", "网络设置\n系统更新")
    index.upsert([
        build_document(dataclasses.replace(hub, link_page=True, own_text="欢迎阅读。")),
        build_document(dataclasses.replace(empty_own, link_page=True, own_text="")),
    ])  # fmt: skip
    index.commit()
    index.set_link_fields({B: LinkFields(0.5, 2.0, "", "")})
    index.commit()
    index.force_merge()

    def found(text: str) -> list[str]:
        return [h.url for h in index.search(SearchQuery(tree=Phrase("body_grams", tuple(grams(text))))).hits]

    assert found("欢迎阅读") == [A]
    assert found("防火墙配置") == [] and found("网络设置") == []


def test_cherokee_words_are_found(index: SearchIndex) -> None:
    # The analysis case-folds, and casefold maps Cherokee to its capital letters (the one
    # script where it is not lower case); Elasticsearch's analyzer lower-cases them at
    # index time, and a term query is not analysed: a query must be lower-cased to match.
    from services.common.analysis import analyze_as_text
    from services.indexer.document_builder import build_document

    index.upsert([build_document(page_event(A, "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ", "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ"))])
    index.commit()
    word = analyze_as_text("ᏣᎳᎩ").words
    assert _search(index, word) == [A]
    assert index.term_stats([("body_tokens", word)])[1] == [1]


def _dated(url: str, modified_at: float, words: str = "软件 安装") -> IndexDoc:
    return replace(index_doc(url, "标题", words), fetched_at=2_000_000_000.0, modified_at=modified_at)


def test_sort_by_date_gives_the_same_matches_newest_first_and_equal_dates_by_url(index: SearchIndex) -> None:
    urls = [f"https://a.example.cn/{n}" for n in range(6)]
    dates = [1_700_000_000.0, 1_750_000_000.0, 1_600_000_000.0, 1_750_000_000.0, 1_650_000_000.0, 1_750_000_000.0]
    index.upsert([_dated(u, d) for u, d in zip(urls, dates, strict=True)] + [_dated(B, 1_800_000_000.0, "别的 词")])
    index.commit()
    tree = words_query(CFG, ["软件"])
    newest = [urls[1], urls[3], urls[5], urls[0], urls[4], urls[2]]
    found = index.search(SearchQuery(tree=tree, limit=10, sort="date"))
    assert found.total == 6 and [h.url for h in found.hits] == newest
    assert [h.modified_at for h in found.hits][:1] == [1_750_000_000.0] and found.hits[0].fetched_at == 2_000_000_000.0
    # Paging cuts the same order, through a run of equal dates.
    pages = [index.search(SearchQuery(tree=tree, offset=o, limit=2, sort="date")).hits for o in (0, 2, 4)]
    assert [h.url for page in pages for h in page] == newest
    assert sorted(h.url for h in index.search(SearchQuery(tree=tree, limit=10)).hits) == sorted(urls)


def test_a_document_keeps_its_date_store_key_and_own_text(index: SearchIndex) -> None:
    doc = replace(index_doc(A, "标题", "正文"), fetched_at=1_800_000_000.5, modified_at=1_700_000_000.0,
                  store_key="ab" * 20, own_text="自己的 文字")  # fmt: skip
    index.upsert([doc])
    index.commit()
    got = index.get(A)
    assert (got.modified_at, got.store_key, got.own_text, got.fetched_at) == (1_700_000_000.0, "ab" * 20, "自己的 文字",
                                                                             1_800_000_000.5)  # fmt: skip
def test_a_document_keeps_its_format_size_and_pages_and_the_filetype_filter_selects_it(index: SearchIndex) -> None:
    pdf = dataclasses.replace(index_doc(A, "", "招生 简章"), filetype="pdf", doc_size=123_456, doc_pages=12)
    page = index_doc(B, "招生", "招生 简章")
    index.upsert([pdf, page])
    index.commit()
    assert index.get(A) == pdf
    hits = {h.url: h for h in index.search(_query("招生")).hits}
    assert (hits[A].filetype, hits[A].doc_size, hits[A].doc_pages) == ("pdf", 123_456, 12)
    assert (hits[B].filetype, hits[B].doc_size, hits[B].doc_pages) == ("", 0, 0)
    only_pdf = Bool(must=(_query("招生").tree,), filter=(Term("filetype", "pdf"),))
    assert [h.url for h in index.search(SearchQuery(tree=only_pdf)).hits] == [A]
    no_pdf = Bool(must=(_query("招生").tree,), must_not=(Term("filetype", "pdf"),))
    assert [h.url for h in index.search(SearchQuery(tree=no_pdf)).hits] == [B]


def test_a_hit_carries_its_anchor_texts(index: SearchIndex) -> None:
    index.upsert([dataclasses.replace(index_doc(A, "", "招生 简章"), filetype="pdf")])
    index.set_link_fields({A: LinkFields(pagerank=0.5, rank=1.0, anchors="2026年招生简章 | 简章", anchors_tokens="2026年 招生 简章")})
    index.commit()
    assert index.search(_query("招生")).hits[0].anchors == "2026年招生简章 | 简章"


def test_an_untitled_document_is_found_by_its_links_text_as_by_a_title(index: SearchIndex) -> None:
    untitled = dataclasses.replace(index_doc(A, "", "报名 须知"), filetype="pdf")
    titled = dataclasses.replace(index_doc(B, "课程 表", "报名 须知"), filetype="pdf")
    index.upsert([untitled, titled, index_doc(C, "", "招生简章 招生简章 报名")])
    links = {u: LinkFields(pagerank=0.1, rank=1.0, anchors="招生简章 | 简章", anchors_tokens="招生 简章 简章")
             for u in (A, B, C)}  # fmt: skip
    index.set_link_fields(links)
    index.commit()
    assert index.search(_query("招生简章")).hits[0].url == A  # its title now, an anchor of the others
    # A recrawl of the document (no link fields in hand) keeps the title its links gave it.
    index.upsert([dataclasses.replace(untitled, body="报名须知 新", body_tokens="报名 须知 新")])
    index.commit()
    assert index.search(_query("招生简章")).hits[0].url == A
    got = index.get(B)
    assert got is not None and got.title_tokens == "课程 表"  # a document's own title stays its title
    read = index.get(A)  # read back as it is indexed, on both backends
    assert read is not None and (read.title_tokens, read.title_grams) == ("招生简章", "招生 生简 简章")
