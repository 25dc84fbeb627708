"""The indexer loop over the embedded bus and the tantivy index."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.common.adapters.sqlite.bus import SqliteBus
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.common.domain.messages import TOPIC_PAGES, PageEvent
from services.common.domain.search_types import SearchQuery
from services.indexer.indexer import GROUP, Indexer
from services.search.query_plan import words_query
from tests.page_events import page_event

# Long intervals: a test decides when to commit by calling flush().
CFG = Settings(indexer_commit_interval_s=3600, indexer_batch_size=1000)


class Pipeline:
    """A bus file and an index directory, reopened after a simulated crash."""

    def __init__(self, root: Path, cfg: Settings = CFG) -> None:
        self.root, self.cfg = root, cfg
        self._open()

    def _open(self) -> None:
        self.bus = SqliteBus(self.root / "bus.sqlite3")
        self.bus.subscribe(TOPIC_PAGES, GROUP)
        self.index = TantivySearchIndex(self.root / "index", self.cfg)
        self.indexer = Indexer(self.cfg, self.bus, self.index)

    def publish(self, *events: PageEvent) -> None:
        for e in events:
            self.bus.publish(TOPIC_PAGES, e.to_bytes(), key=e.host)

    def drain(self) -> None:
        while self.indexer.step(0.0):
            pass
        self.indexer.flush()

    def crash(self) -> None:
        """Lose everything not committed, as a kill -9 would, and start again."""
        self.index.close()  # drops uncommitted index writes
        self.bus.close()
        self._open()

    def search(self, *terms: str) -> list[str]:
        return [h.url for h in self.index.search(SearchQuery(tree=words_query(Settings(), terms))).hits]

    def close(self) -> None:
        self.index.close()
        self.bus.close()


@pytest.fixture
def pipe(tmp_path: Path) -> Iterator[Pipeline]:
    p = Pipeline(tmp_path)
    yield p
    p.close()


def test_indexable_pages_become_searchable(pipe: Pipeline) -> None:
    pipe.publish(
        page_event("https://example.cn/a", "网络配置指南", "如何配置无线网络。", ["无线网络"]),
        page_event("https://example.cn/b", "打印机", "安装打印机驱动。"),
    )
    pipe.drain()
    assert pipe.indexer.indexed == 2
    assert pipe.search("网络") == ["https://example.cn/a"]
    assert pipe.search("打印机") == ["https://example.cn/b"]
    assert pipe.bus.pending(TOPIC_PAGES, GROUP) == 0


def test_the_same_content_twice_on_one_site_is_indexed_once_and_a_mirror_stays(pipe: Pipeline) -> None:
    first = page_event("https://example.cn/a", "相同页面", "一模一样的正文。")
    copy = page_event("https://example.cn/a?print=1", "相同页面", "一模一样的正文。")
    mirror = page_event("https://mirror.example.cn/a", "相同页面", "一模一样的正文。")
    pipe.publish(first, copy)  # both in one uncommitted batch
    pipe.drain()
    pipe.publish(page_event("https://example.cn/a?from=2", "相同页面", "一模一样的正文。"), mirror)  # a later batch
    pipe.drain()
    # The mirror is another site: kept, so that site:mirror.example.cn finds it; the
    # search service folds it into one result with the original.
    assert pipe.index.urls() == ["https://example.cn/a", "https://mirror.example.cn/a"]
    assert (pipe.indexer.indexed, pipe.indexer.duplicates) == (2, 2)


def test_a_recrawl_of_the_same_url_is_not_a_duplicate(pipe: Pipeline) -> None:
    event = page_event("https://example.cn/a", "页面", "正文。")
    pipe.publish(event, event)
    pipe.drain()
    pipe.publish(event)
    pipe.drain()
    assert pipe.index.urls() == ["https://example.cn/a"]
    assert (pipe.indexer.indexed, pipe.indexer.duplicates) == (3, 0)


def test_a_page_is_indexed_under_its_canonical_url(pipe: Pipeline) -> None:
    pipe.publish(page_event("https://example.cn/a?utm=x", "规范", "正文。", canonical="https://example.cn/a"))
    pipe.drain()
    assert pipe.index.urls() == ["https://example.cn/a"]


def test_a_page_that_becomes_noindex_is_deleted(pipe: Pipeline) -> None:
    pipe.publish(page_event("https://example.cn/a", "页面", "正文。"))
    pipe.drain()
    pipe.publish(page_event("https://example.cn/a", noindex=True))
    pipe.drain()
    assert pipe.index.urls() == []
    assert pipe.indexer.deleted == 1


def test_errors_redirects_and_robots_jobs_change_nothing(pipe: Pipeline) -> None:
    pipe.publish(page_event("https://example.cn/a", "页面", "正文。"))
    pipe.drain()
    pipe.publish(
        page_event("https://example.cn/a", status=404),
        page_event("https://example.cn/a", status=301),
        page_event("https://example.cn/a", status=0, error="timeout"),
        page_event("https://example.cn/robots.txt", kind="robots"),
        page_event("https://example.cn/a", status=500, noindex=True),
    )
    pipe.drain()
    assert pipe.index.urls() == ["https://example.cn/a"]
    assert (pipe.indexer.indexed, pipe.indexer.deleted) == (1, 0)
    assert pipe.bus.pending(TOPIC_PAGES, GROUP) == 0


def test_a_malformed_message_is_skipped_not_retried_forever(pipe: Pipeline) -> None:
    pipe.bus.publish(TOPIC_PAGES, b"{not json", key="example.cn")
    pipe.publish(page_event("https://example.cn/a", "页面", "正文。"))
    pipe.drain()
    assert pipe.index.urls() == ["https://example.cn/a"]
    assert pipe.bus.pending(TOPIC_PAGES, GROUP) == 0


def test_redelivery_after_a_crash_before_any_commit_changes_nothing(pipe: Pipeline) -> None:
    events = [page_event(f"https://example.cn/{i}", f"页面 {i}", f"第 {i} 页的正文。") for i in range(5)]
    pipe.publish(*events)
    while pipe.indexer.step(0.0):  # handled, never committed
        pass
    pipe.crash()
    assert pipe.index.count() == 0
    pipe.drain()
    assert pipe.index.count() == 5
    assert pipe.indexer.duplicates == 0


def test_redelivery_after_the_index_commit_but_before_the_bus_commit_changes_nothing(pipe: Pipeline) -> None:
    events = [page_event(f"https://example.cn/{i}", f"页面 {i}", f"第 {i} 页的正文。") for i in range(5)]
    pipe.publish(*events)
    pipe.publish(page_event("https://example.cn/0?print=1", "页面 0", "第 0 页的正文。"))

    def killed(*args: object) -> None:  # the crash hits between the index commit and the bus commit
        raise KeyboardInterrupt

    pipe.bus.commit = killed  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        pipe.drain()
    before = sorted(pipe.index.urls())
    pipe.crash()
    pipe.drain()
    assert sorted(pipe.index.urls()) == before
    assert len(before) == 5
    assert pipe.indexer.duplicates == 1
    assert pipe.bus.pending(TOPIC_PAGES, GROUP) == 0


def test_a_full_batch_commits_without_waiting_for_the_interval(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path, Settings(indexer_commit_interval_s=3600, indexer_batch_size=3))
    try:
        pipe.publish(*[page_event(f"https://example.cn/{i}", f"页面{i}", f"正文{i}") for i in range(4)])
        pipe.indexer.step(0.0)
        assert pipe.index.count() == 3
        assert pipe.bus.pending(TOPIC_PAGES, GROUP) == 1
    finally:
        pipe.close()


def _wait_for(condition, timeout_s: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    stop = threading.Event()
    for _ in range(int(timeout_s / 0.02)):
        if condition():
            return True
        stop.wait(0.02)
    return False


def test_run_commits_once_the_interval_has_passed(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path, Settings(indexer_commit_interval_s=0.2, indexer_batch_size=1000))
    stop = threading.Event()
    worker = threading.Thread(target=pipe.indexer.run, args=(stop, 1.0))
    try:
        worker.start()
        pipe.publish(page_event("https://example.cn/a", "页面", "正文。"))
        # The poll timeout is long: the loop must wake up for the commit on its own.
        assert _wait_for(lambda: pipe.index.count() == 1, timeout_s=3.0)
        assert _wait_for(lambda: pipe.bus.pending(TOPIC_PAGES, GROUP) == 0)
    finally:
        stop.set()
        worker.join(10)
        pipe.close()


def test_run_flushes_what_is_pending_when_stopped(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path)
    stop = threading.Event()
    worker = threading.Thread(target=pipe.indexer.run, args=(stop, 0.05))
    try:
        worker.start()
        pipe.publish(page_event("https://example.cn/a", "页面", "正文。"))
        assert _wait_for(lambda: pipe.indexer.held == 1)
        assert pipe.index.count() == 0  # the hour-long interval has not passed
    finally:
        stop.set()
        worker.join(10)
    assert not worker.is_alive()
    assert pipe.index.count() == 1
    assert pipe.bus.pending(TOPIC_PAGES, GROUP) == 0
    pipe.close()


def test_each_commit_announces_the_documents_it_made_searchable(pipe: Pipeline) -> None:
    from services.common.domain.messages import TOPIC_INDEXED, IndexedDocuments

    pipe.publish(
        page_event("https://example.cn/a", "甲", "第一页的正文"),
        page_event("https://example.cn/b", "乙", "第二页的正文"),
        page_event("https://example.cn/b?print=1", "乙", "第二页的正文"),  # a copy of b: not indexed
    )
    pipe.drain()
    announced = [
        url
        for m in pipe.bus.poll(TOPIC_INDEXED, "ranker", 0.1)
        for url in IndexedDocuments.from_bytes(m.payload).urls
    ]
    assert sorted(announced) == sorted(pipe.index.urls()) == ["https://example.cn/a", "https://example.cn/b"]


def test_a_page_of_links_is_found_by_its_own_text_not_by_its_link_texts(pipe: Pipeline) -> None:
    hub = dataclasses.replace(
        page_event("https://example.cn/", "文档首页", "欢迎阅读。\n防火墙配置\n打印机设置"),
        link_page=True, own_text="欢迎阅读。",
    )  # fmt: skip
    pipe.publish(hub, page_event("https://example.cn/fw", "防火墙配置", "配置防火墙规则。"))
    pipe.drain()
    assert pipe.search("防火墙") == ["https://example.cn/fw"]
    assert pipe.search("欢迎") == ["https://example.cn/"]
    assert "防火墙配置" in pipe.index.get("https://example.cn/").body  # shown with its links


IDLE = Settings(indexer_commit_interval_s=0.05, indexer_search_idle_after_s=0.3, indexer_idle_commit_interval_s=3600)


def _step_for(pipe: Pipeline, seconds: float) -> None:
    stop = threading.Event()
    for _ in range(int(seconds / 0.05)):
        pipe.indexer.step(0.0)
        stop.wait(0.05)


def test_while_nobody_searches_the_index_commits_wait_for_the_idle_interval(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path, IDLE)
    try:
        threading.Event().wait(0.4)  # idle since the indexer started
        pipe.publish(page_event("https://example.cn/a", "页面", "正文。"))
        _step_for(pipe, 0.5)
        assert pipe.indexer.held == 1 and pipe.index.count() == 0
        # A search from another process (a read-only view, as `tansuo serve` holds)
        # brings the commits back to their interval.
        TantivySearchIndex(tmp_path / "index", IDLE, read_only=True).search(
            SearchQuery(tree=words_query(Settings(), ("页面",))))  # fmt: skip
        _step_for(pipe, 0.2)
        assert pipe.index.count() == 1
        assert pipe.bus.pending(TOPIC_PAGES, GROUP) == 0
    finally:
        pipe.close()


def test_with_the_idle_rule_off_commits_keep_their_interval(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path, IDLE.model_copy(update={"indexer_search_idle_after_s": 0}))
    try:
        threading.Event().wait(0.4)
        pipe.publish(page_event("https://example.cn/a", "页面", "正文。"))
        _step_for(pipe, 0.2)
        assert pipe.index.count() == 1
    finally:
        pipe.close()


def _commits(pipe: Pipeline) -> list[float]:
    """The commit time of each documents.indexed announcement: one or more a commit."""
    from services.common.domain.messages import TOPIC_INDEXED, IndexedDocuments

    return [IndexedDocuments.from_bytes(m.payload).at for m in pipe.bus.poll(TOPIC_INDEXED, "ranker", 0.1, 1000)]


def test_a_commit_falls_due_inside_a_poll_not_only_after_it(tmp_path: Path) -> None:
    # Building 300 documents takes far longer than 10 ms: the old indexer committed once,
    # after the whole poll, so the first pages waited for the last ones.
    pipe = Pipeline(tmp_path, Settings(indexer_commit_interval_s=0.01, indexer_batch_size=1000))
    try:
        pipe.publish(*[page_event(f"https://example.cn/{i}", f"页面 {i}", f"第 {i} 页的正文。") for i in range(300)])
        assert pipe.indexer.step(0.0) == 300  # one poll
        pipe.indexer.flush()
        assert len(set(_commits(pipe))) > 1
        assert pipe.index.count() == 300 and pipe.bus.pending(TOPIC_PAGES, GROUP) == 0
    finally:
        pipe.close()


def test_a_removal_spares_a_page_fetched_again_in_the_same_batch(pipe: Pipeline) -> None:
    from services.common.domain.messages import TOPIC_REMOVALS, PageRemoval

    old = dataclasses.replace(page_event("https://example.cn/a", "页面", "旧的正文。"), fetched_at=100.0)
    gone = dataclasses.replace(page_event("https://example.cn/b", "页面", "另一页。"), fetched_at=100.0)
    pipe.publish(old, gone)
    pipe.drain()
    # a is fetched again after the scheduler decided its removal, and the new copy
    # reaches the indexer first, in a batch not yet committed; b is not fetched again.
    pipe.bus.subscribe(TOPIC_REMOVALS, GROUP)
    pipe.publish(dataclasses.replace(old, body="新的正文。", content_hash="new", fetched_at=300.0))
    pipe.indexer.step(0.0)
    for url in ("https://example.cn/a", "https://example.cn/b"):
        pipe.bus.publish(TOPIC_REMOVALS, PageRemoval(url, "redirected", 200.0).to_bytes(), key="example.cn")
    pipe.drain()
    assert pipe.index.urls() == ["https://example.cn/a"]
    assert pipe.index.fetch_times(["https://example.cn/a"]) == {"https://example.cn/a": 300.0}


def test_the_lag_is_the_wait_of_the_oldest_page_held(pipe: Pipeline) -> None:
    assert pipe.indexer.lag() == 0.0
    now = time.time()
    pipe.publish(*(dataclasses.replace(page_event(f"https://example.cn/{i}", "页", f"正文 {i}"), fetched_at=now - age)
                   for i, age in enumerate((5.0, 30.0, 10.0))))  # fmt: skip
    pipe.indexer.step(0.0)
    assert 30.0 <= pipe.indexer.lag() < 60.0
    pipe.indexer.flush()
    assert pipe.indexer.lag() == 0.0
