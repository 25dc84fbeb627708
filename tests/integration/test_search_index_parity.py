"""The Elasticsearch adapter ranks like the tantivy adapter.

About forty Chinese pages, built by the indexer's document builder from page
events, go into both backends; a set of queries run through the search service
must give the same results in the same order with the same scores (within
``REL_TOL``; positions whose scores are that close may trade places).

Two things make the scores equal rather than close, and this test fails if either
is undone, or if one backend's scoring changes alone:

- Lucene (and so Elasticsearch, and noida-db after it) counts, for a field's idf and
  average length, only the documents with a token in that field; tantivy counts
  every document. Both adapters store a marker token in every token field
  (``token_fields``), so that the counts agree on pages with empty headings,
  anchors or sub-words (the sparse case below; before the marker, scores parted by
  up to 6% there).
- Elasticsearch keeps 9 significant bits of a rank feature; the ranker writes ranks
  rounded so (``feature_precision``), so tantivy sees the same value.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.common.adapters.elasticsearch.search_index import ElasticsearchSearchIndex
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.analysis.words import segment
from services.common.config import Settings
from services.common.domain.documents import IndexDoc, feature_precision
from services.common.ports import SearchIndex
from services.indexer.document_builder import build_document
from services.search.search_service import SearchService
from tests.page_events import page_event
from tests.search_pages import PAGES, SITES

pytestmark = pytest.mark.integration

CFG = Settings()
QUERIES = [
    # one word: Chinese, English
    ("安装", ""),
    ("系统", ""),
    ("服务器", ""),
    ("配置", ""),
    ("Linux", ""),
    ("Debian", ""),
    ("SSH", ""),
    ("apt-get", ""),
    # all words, and the phrase boost
    ("安装 软件包", ""),
    ("远程服务器", ""),
    ("机器学习 神经网络", ""),
    ("中文输入法", ""),
    ("搜索引擎 PageRank 排序", ""),
    # long queries: a share of the words selects, their bigrams score in titles only
    ("Debian 安装 配置 防火墙 远程服务器 软件包", ""),
    ("怎么在Debian系统上配置网络防火墙和远程服务器的软件包", ""),
    # no page has every word: the service falls back to any word
    ("Debian 神经网络", ""),
    ("python 防火墙 rsync", ""),
    ("Linux 机器学习 容器", ""),
    # a site filter
    ("安装", "blog.example.com.cn"),
    ("系统", "wiki.example.cn"),
    ("网络", "blog.example.com.cn"),
    # the query language: exact phrases, exclusions, site: in the query, OR
    ('"安装软件"', ""),
    ('"apt-get install"', ""),
    ("安装 -Debian", ""),
    ('网络 -"无线网络"', ""),
    ("安装 site:blog.example.com.cn site:wiki.example.cn", ""),
    ("网络 -site:wiki.example.cn", ""),
    ("rsync OR nftables", ""),
    ('"神经网络" OR 防火墙', ""),
    ("site:tw.example.com.tw", ""),
    # bigrams: fragments that segment unlike the page, long Han runs
    ("折号替换一个或两个减", ""),
    ("下载安装镜像然后写入", ""),
    ("络配置文件位", ""),
    # traditional and simplified find each other; questions
    ("軟體套件", ""),
    ("软件套件", ""),
    ("網路設定", ""),
    ("怎么配置无线网络", ""),
    ("如何用 pip 安装软件包？", ""),
    # forgiving search (issue 36): a typo the bigram overlap and the correction take,
    # a long line with a wrong character (its thirds), a Taiwan word typed in
    # simplified, a nickname as a hint, a quote across a heading, a quote nowhere
    ("防火墙配制", ""),
    ("本地端口转发可以把远成服务映射到本机", ""),
    ("软体", ""),
    ("excel 排序", ""),
    ('"分区本文介绍"', ""),
    ('"镜像安装"', ""),
    # a quoted phrase copied from a page of links' link texts, across two of them
    ('"安装配置手册"', ""),
    ('"配置手册无线网卡"', ""),
    # a traditional quote across a sentence's end: the whole first, then its parts
    ('"裝軟體套件設定檔位於"', ""),
    # initials: several words searched, the first page shared among them
    ("xz", ""),
    ("az", ""),
]
TOP = 5


# Both engines quantise field lengths to one byte alike; what is left is float rounding.
REL_TOL = 1e-3


def _documents(complete: bool) -> list[IndexDoc]:
    """Every field filled on every page (complete), or as sparse as real pages are:
    anchors on a third of them, no headings on every fifth, no sub-words on every
    seventh. Ranks are rounded as the ranker rounds them."""
    docs = []
    for i, (site, path, title, headings, body) in enumerate(PAGES):
        doc = build_document(page_event(SITES[site] + path, title, body, headings))
        rank = 0.3 + (i * 37 % 23) / 7
        anchors = title if complete or i % 3 == 0 else ""
        doc = dataclasses.replace(
            doc,
            rank=feature_precision(rank),
            pagerank=rank / len(PAGES),
            anchors=anchors,
            anchors_tokens=" ".join(segment(anchors)),
        )
        if not complete and i % 5 == 0:
            doc = dataclasses.replace(doc, headings="", headings_tokens="")
        if not complete and i % 7 == 0:
            doc = dataclasses.replace(doc, subword_tokens="")
        docs.append(doc)
    if complete:
        assert all(d.title_tokens and d.headings_tokens and d.body_tokens for d in docs)
    # A page of links: indexed by its own text, its link texts found by a quoted phrase.
    contents = page_event(SITES[1] + "/guides/", "指南目录", "指南目录\n服务器安装配置手册\n无线网卡固件说明")
    link_page = build_document(dataclasses.replace(contents, link_page=True, own_text="指南目录"))
    assert link_page.link_grams
    return [*docs, dataclasses.replace(link_page, rank=feature_precision(1.0), pagerank=1.0 / len(PAGES))]


Ranking = list[tuple[str, float]]


def _rankings(index: SearchIndex, cfg: Settings = CFG) -> Iterator[Ranking]:
    service = SearchService(cfg, index)
    for q, site in QUERIES:
        found = service.search(q, size=20, site=site)
        yield [(r["url"], r["score"]) for r in found["results"]], found["total"]


@pytest.fixture
def backends(es_index_url: str) -> Iterator[tuple[TantivySearchIndex, ElasticsearchSearchIndex]]:
    with tempfile.TemporaryDirectory() as tmp:
        tantivy = TantivySearchIndex(Path(tmp) / "index", CFG)
        es = ElasticsearchSearchIndex.from_url(es_index_url, CFG)
        yield tantivy, es
        es.close()
        tantivy.close()


def _load(
    backends: tuple[SearchIndex, SearchIndex], docs: list[IndexDoc], cfg: Settings = CFG
) -> list[tuple[Ranking, Ranking, int, int]]:
    for index in backends:
        index.upsert(docs)
        index.commit()
    tantivy, es = backends
    return [(t, e, nt, ne) for (t, nt), (e, ne) in zip(_rankings(tantivy, cfg), _rankings(es, cfg), strict=True)]


def _assert_same_top(tantivy: Ranking, es: Ranking, rel_tol: float) -> None:
    """Position by position, Elasticsearch's URL holds, in tantivy's ranking, a score
    within ``rel_tol`` of tantivy's score at that position: the same URL, or one
    tied with it."""
    assert len(es) == len(tantivy)
    tantivy_score = dict(tantivy)
    for i, (url, _) in enumerate(es):
        assert url in tantivy_score, (i, url)
        assert math.isclose(tantivy_score[url], tantivy[i][1], rel_tol=rel_tol), (i, url, tantivy, es)


@pytest.mark.parametrize("complete", [True, False], ids=["every-field-filled", "sparse-fields"])
def test_both_backends_match_rank_and_score_alike(backends, complete: bool) -> None:
    results = _load(backends, _documents(complete=complete))
    assert sum(1 for t, _, _, _ in results if len(t) >= TOP) >= 8  # the check is not vacuous
    for (q, site), (tantivy, es, n_tantivy, n_es) in zip(QUERIES, results, strict=True):
        assert n_es == n_tantivy, q
        assert len(es) == len(tantivy), q
        _assert_same_top(tantivy, es, rel_tol=REL_TOL)
        for (_, s_t), (_, s_e) in zip(tantivy, es, strict=True):
            assert s_e == pytest.approx(s_t, rel=REL_TOL), (q, site)


@pytest.mark.parametrize("cap", [0.0, 1.0], ids=["per-field-idf", "one-idf-across-fields"])
def test_both_backends_agree_however_field_idf_is_bounded(backends, cap: float) -> None:
    # The bound takes term statistics from each backend (tantivy doc_freq,
    # Elasticsearch _msearch counts): the field weights, and so the scores, must agree,
    # from per-field idf (no statistics) to one idf across fields (the default, 3, is
    # the test above).
    results = _load(backends, _documents(complete=False), Settings(search_field_idf_cap=cap))
    for (q, _site), (tantivy, es, n_tantivy, n_es) in zip(QUERIES, results, strict=True):
        assert n_es == n_tantivy, q
        _assert_same_top(tantivy, es, rel_tol=REL_TOL)


def test_both_backends_agree_where_words_are_common(backends) -> None:
    # Words held by a fifth of these forty pages count as common (no floor in pages):
    # such a word matches without its bigrams, and the phrase boosts of a query of them
    # look in titles only. Both backends count the pages from their own statistics.
    common = Settings(search_common_word_share=0.2, search_common_word_pages=0)
    docs = _documents(complete=False)
    results = _load(backends, docs, common)
    for (q, _site), (tantivy, es, n_tantivy, n_es) in zip(QUERIES, results, strict=True):
        assert n_es == n_tantivy, q
        _assert_same_top(tantivy, es, rel_tol=REL_TOL)
    # Not vacuous: the rule changes what some queries find or how they rank.
    usual = list(_rankings(backends[0]))
    changed = [q for (q, _), (tantivy, _, n, _), (before, n_before) in zip(QUERIES, results, usual, strict=True)
               if (tantivy, n) != (before, n_before)]  # fmt: skip
    assert len(changed) >= 3, changed
