"""Rewriting a document for its link fields reuses the document the writer committed,
bigram fields included, and a read-back document gets kept bigrams only for the text
they were built from (services/common/adapters/tantivy/recent_documents.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from services.common.adapters.tantivy import search_index as search_index_tantivy
from services.common.adapters.tantivy.recent_documents import RecentDocuments
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.analysis import link_page_grams
from services.common.config import Settings
from services.common.domain.documents import LinkFields
from services.common.domain.query_tree import Phrase
from services.common.domain.search_types import SearchQuery
from tests.page_events import index_doc

URL = "https://docs.example.cn/install"


def _writer(tmp_path: Path, chars: int = 1_000_000) -> TantivySearchIndex:
    return TantivySearchIndex(tmp_path / "index", Settings(data_dir=tmp_path, index_gram_cache_chars=chars))


def _found_by_phrase(index: TantivySearchIndex, text: str) -> list[str]:
    grams = tuple(text[i : i + 2] for i in range(len(text) - 1))
    hits = index.search(SearchQuery(tree=Phrase("body_grams", grams), limit=10))
    return [h.url for h in hits.hits]


def _no_segmenting(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("the bigram fields were built again")

    monkeypatch.setattr(search_index_tantivy, "document_grams", refuse)


def test_a_rank_rewrite_after_a_commit_uses_the_kept_bigrams(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = _writer(tmp_path)
    index.upsert([index_doc(URL, title="安装 指南", body="安装 软件包 之前 先 更新 索引")])
    index.commit()
    _no_segmenting(monkeypatch)
    index.set_link_fields({URL: LinkFields(pagerank=2.5, rank=1.0, anchors="安装指南", anchors_tokens="安装 指南")})
    index.commit()
    assert index.get(URL) is not None  # (get reads the bigrams from the cache too)
    assert index.get(URL).pagerank == 2.5
    assert _found_by_phrase(index, "软件包之前先更新") == [URL]
    index.close()


def test_a_page_of_links_read_back_gets_its_kept_link_grams(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = _writer(tmp_path)
    body = "目录\n安装指南\n网络配置"
    links = link_page_grams(body)
    index.upsert([dataclasses.replace(index_doc(URL, title="目录", body=body), own_text="目录", link_grams=links)])
    index.commit()
    _no_segmenting(monkeypatch)
    monkeypatch.setattr(search_index_tantivy, "link_page_grams", lambda *_: pytest.fail("link_grams built again"))
    doc = index.get(URL)
    assert doc is not None and doc.link_grams == links
    index.close()


def test_new_text_is_never_given_the_old_bigrams(tmp_path: Path) -> None:
    index = _writer(tmp_path)
    index.upsert([index_doc(URL, title="旧 标题", body="旧的 正文 内容")])
    index.commit()
    cache: RecentDocuments = index._recent
    old = index.get(URL)
    changed = index_doc(URL, title="新 标题", body="全新 的 正文")
    # The entry is the old text's: a document with other text under the URL gets nothing.
    assert cache.grams_of(old) is not None and cache.grams_of(changed) is None
    index.upsert([changed])
    index.commit()
    index.set_link_fields({URL: LinkFields(pagerank=1.5, rank=0.5, anchors="", anchors_tokens="")})
    index.commit()
    assert _found_by_phrase(index, "全新的正文") == [URL]
    assert _found_by_phrase(index, "旧的正文内容") == []
    index.close()


def test_without_the_cache_the_bigrams_are_built_again(tmp_path: Path) -> None:
    index = _writer(tmp_path, chars=0)
    index.upsert([index_doc(URL, title="安装 指南", body="安装 软件包 之前 先 更新 索引")])
    index.commit()
    index.set_link_fields({URL: LinkFields(pagerank=2.5, rank=1.0, anchors="", anchors_tokens="")})
    index.commit()
    assert _found_by_phrase(index, "软件包之前先更新") == [URL]
    index.close()


def test_the_cache_keeps_the_latest_documents_within_its_characters() -> None:
    cache = RecentDocuments(max_chars=200)
    docs = [index_doc(f"https://e.cn/{i}", body="一二三四五六七八九十") for i in range(5)]
    for doc in docs:
        cache.keep(doc)
    assert cache.chars <= 200
    assert cache.grams_of(docs[-1]) is not None and cache.grams_of(docs[0]) is None
    cache.forget(docs[-1].url)
    assert cache.grams_of(docs[-1]) is None


def _no_reading(monkeypatch: pytest.MonkeyPatch, index: TantivySearchIndex) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("the document was read back from the index")

    monkeypatch.setattr(index, "_stored", refuse)


def test_a_kept_document_is_the_one_the_index_gives_back(tmp_path: Path) -> None:
    """The kept copy stands in for reading the index: it must be what a read returns."""
    index = _writer(tmp_path)
    docs = [index_doc(f"{URL}/{n}", title=f"安装 指南 {n}", body="安装 软件包 之前 先 更新 索引 apt-get update")
            for n in range(5)]  # fmt: skip
    index.upsert(docs)
    index.commit()
    for doc in docs:
        assert index._recent.latest(doc.url) == doc
        assert index.get(doc.url) == doc  # read from the index, bigrams rebuilt or kept
    index.close()


def test_a_rank_rewrite_of_a_kept_document_reads_nothing_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = _writer(tmp_path)
    index.upsert([index_doc(URL, title="安装 指南", body="安装 软件包 之前 先 更新 索引")])
    index.commit()
    _no_reading(monkeypatch, index)
    _no_segmenting(monkeypatch)
    index.set_link_fields({URL: LinkFields(pagerank=2.5, rank=1.0, anchors="安装指南", anchors_tokens="安装 指南")})
    index.upsert([index_doc(URL, title="安装 指南", body="安装 软件包 之前 先 更新 索引 两次")])  # link fields carried
    index.commit()
    monkeypatch.undo()
    assert index.get(URL).pagerank == 2.5 and index.get(URL).anchors == "安装指南"
    index.close()


def test_an_uncommitted_write_is_never_kept(tmp_path: Path) -> None:
    index = _writer(tmp_path)
    index.upsert([index_doc(URL, title="已 提交", body="已经 提交 的 正文")])
    index.commit()
    committed = index._recent.latest(URL)
    index.upsert([index_doc(URL, title="未 提交", body="没有 提交 的 正文")])
    index.delete([URL])
    assert index._recent.latest(URL) == committed  # until the commit, the index holds the old one
    index.close()  # drops the uncommitted writes
    assert committed is not None and committed.title == "已提交"


def test_a_committed_delete_forgets_the_document(tmp_path: Path) -> None:
    index = _writer(tmp_path)
    index.upsert([index_doc(URL, title="安装 指南", body="安装 软件包")])
    index.commit()
    index.delete([URL])
    index.commit()
    assert index._recent.latest(URL) is None
    index.set_link_fields({URL: LinkFields(pagerank=2.5, rank=1.0, anchors="", anchors_tokens="")})
    index.commit()
    assert index.get(URL) is None  # a link-field write does not bring a deleted page back
    index.close()
