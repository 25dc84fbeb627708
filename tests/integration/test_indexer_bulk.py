"""The indexer on the Elasticsearch-API server: a batch of pages is checked, written and
made searchable in a couple of requests, not two a page (issue 40)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.common.adapters.sqlite.bus import SqliteBus
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.domain.messages import TOPIC_PAGES, TOPIC_REMOVALS, PageRemoval
from services.common.ports import SearchIndex
from services.common.runtime.metrics import INDEX_REQUESTS
from services.indexer.indexer import GROUP, Indexer
from tests.page_events import page_event

pytestmark = pytest.mark.integration

PAGES = 200


def _sent() -> dict[str, float]:
    """Requests sent so far by this process's Elasticsearch clients, by endpoint."""
    return {
        s.labels["endpoint"]: s.value for m in INDEX_REQUESTS.collect() for s in m.samples if s.name.endswith("_total")
    }


def _since(before: dict[str, float]) -> dict[str, int]:
    return {e: int(n - before.get(e, 0.0)) for e, n in _sent().items() if n > before.get(e, 0.0)}


@pytest.fixture
def parts(tmp_path: Path, es_index_url: str) -> Iterator[tuple[SqliteBus, SearchIndex, Indexer]]:
    cfg = Settings(index=es_index_url, index_replicas=0, indexer_commit_interval_s=3600)
    bus = SqliteBus(tmp_path / "bus.sqlite3")
    for topic in (TOPIC_PAGES, TOPIC_REMOVALS):
        bus.subscribe(topic, GROUP)
    index = build_search_index(cfg)  # as a service builds it: its requests counted
    yield bus, index, Indexer(cfg, bus, index)
    index.close()
    bus.close()


def _drain(indexer: Indexer) -> None:
    while indexer.step(0.0):
        pass
    indexer.flush()


def test_a_batch_of_pages_costs_a_lookup_and_a_bulk_request(parts: tuple[SqliteBus, SearchIndex, Indexer]) -> None:
    bus, index, indexer = parts
    pages = [page_event(f"https://s{i % 20}.example.cn/{i}", f"页面 {i}", f"第 {i} 页的正文。") for i in range(PAGES)]
    copy = page_event("https://s0.example.cn/0?print=1", "页面 0", "第 0 页的正文。")  # same site, same text
    for e in [*pages, copy]:
        bus.publish(TOPIC_PAGES, e.to_bytes(), key=e.host)
    before = _sent()
    _drain(indexer)
    # One collapsed search for the batch's content hashes, one _bulk carrying the refresh.
    assert _since(before) == {"search": 1, "bulk": 1}
    assert index.count() == PAGES and (indexer.indexed, indexer.duplicates) == (PAGES, 1)

    # The next batch: a copy of a committed page (found by the lookup), a noindex page,
    # a page fetched again with new text, and removals checked in one _mget.
    again = dataclasses.replace(
        pages[1], body="新的正文。", content_hash="changed", fetched_at=pages[1].fetched_at + 10
    )
    for e in (page_event("https://s2.example.cn/2?from=feed", "页面 2", "第 2 页的正文。"),
              page_event("https://s3.example.cn/3", noindex=True), again):  # fmt: skip
        bus.publish(TOPIC_PAGES, e.to_bytes(), key=e.host)
    for url in ("https://s4.example.cn/4", "https://s5.example.cn/5", "https://nowhere.example.cn/"):
        bus.publish(TOPIC_REMOVALS, PageRemoval(url, "gone (404, then 404)", pages[0].fetched_at + 1).to_bytes())
    before = _sent()
    _drain(indexer)
    assert _since(before) == {"search": 1, "mget": 1, "bulk": 1}
    urls = set(index.urls())
    assert len(urls) == PAGES - 3 and not {"https://s3.example.cn/3", "https://s4.example.cn/4"} & urls
    assert index.get(pages[1].url).body == "新的正文。"  # type: ignore[union-attr]
    assert (indexer.duplicates, indexer.deleted) == (2, 3)
