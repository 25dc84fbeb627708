"""The reanalysis after a change of user words: indexed pages are split again from
their stored text, on both index backends, and the job is shared through the store."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.common.adapters.elasticsearch.search_index import ElasticsearchSearchIndex
from services.common.adapters.sqlite.dictionaries import SqliteDictionaryStore
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.analysis import stop_words, synonyms, words
from services.common.config import Settings
from services.common.domain.dictionaries import USER_WORDS
from services.common.ports import SearchIndex
from services.dictionaries.reanalysis import Reanalysis
from services.dictionaries.sync import DictionarySync
from services.indexer.document_builder import build_document
from services.search.search_service import SearchService
from tests.page_events import page_event

PAGES = [
    ("https://a.example.cn/1", "探索引擎介绍", "探索引擎是一个中文搜索引擎。"),
    ("https://a.example.cn/2", "安装", "安装探索引擎很简单。"),
    ("https://a.example.cn/3", "别的", "这里说的是别的事情。"),
]


@pytest.fixture(autouse=True)
def shipped_defaults() -> Iterator[None]:
    yield
    words.set_user_words([])
    synonyms.set_table(None)
    stop_words.set_stop_words(None)


@pytest.fixture(params=["tantivy", pytest.param("elasticsearch", marks=pytest.mark.integration)])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SearchIndex]:
    cfg = Settings(data_dir=tmp_path)
    opened: SearchIndex
    if request.param == "elasticsearch":
        opened = ElasticsearchSearchIndex.from_url(request.getfixturevalue("es_index_url"), cfg)
    else:
        opened = TantivySearchIndex(tmp_path / "index", cfg)
    opened.upsert([build_document(page_event(url, title, body)) for url, title, body in PAGES])
    hub = dataclasses.replace(page_event("https://a.example.cn/", "首页", "欢迎\n探索引擎文档\n安装说明"),
                              link_page=True, own_text="欢迎")  # fmt: skip
    opened.upsert([build_document(hub)])
    opened.commit()
    yield opened
    opened.close()


def _words_of(index: SearchIndex, url: str) -> list[str]:
    return index.get(url).body_tokens.split()


def test_after_a_new_user_word_the_reanalysis_splits_every_indexed_page_again(index: SearchIndex, tmp_path: Path) -> None:
    cfg = Settings(data_dir=tmp_path)
    store = SqliteDictionaryStore(tmp_path / "dictionaries.sqlite3")
    sync = DictionarySync(cfg, lambda: store)
    sync.refresh()
    assert "探索引擎" not in _words_of(index, PAGES[0][0])
    store.save(USER_WORDS, "探索引擎\n", 1.0)
    sync.refresh()
    job = store.request_reanalysis(2.0, sync.installed.user_words)
    one, two = Reanalysis(cfg, store, index, sync, batch=3), Reanalysis(cfg, store, index, sync, batch=3)
    assert one.step() == 3 and two.step() == 0  # one indexer at a time
    assert store.reanalysis().state == "running" and store.reanalysis().done == 3
    assert one.step() == 1
    finished = store.reanalysis()
    assert (finished.job_id, finished.state, finished.done, finished.total) == (job.job_id, "done", 4, 4)
    assert "探索引擎" in _words_of(index, PAGES[0][0]) and "探索引擎" in _words_of(index, PAGES[1][0])
    assert index.get(PAGES[0][0]).title_tokens.split() == ["探索引擎", "介绍"]
    # A page of links stays indexed by its own text, not its links' text.
    assert _words_of(index, "https://a.example.cn/") == ["欢迎"]
    assert index.term_stats([("body_tokens", "探索引擎")])[1] == [2]
    answer = SearchService(cfg, index).search("探索引擎")
    assert [r["url"] for r in answer["results"]][:2] == [PAGES[0][0], PAGES[1][0]]
    assert one.step() == 0  # nothing left to do
