"""`tansuo serve` runs several worker processes on one embedded index while another
process writes to it: every worker opens the index read-only and answers from each
new commit."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest

from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.common.domain.messages import PageEvent
from services.indexer.document_builder import build_document
from tests.integration.test_api_under_load import Server, start  # noqa: F401 - the fixture

pytestmark = pytest.mark.integration


def _page(i: int, word: str) -> PageEvent:
    return PageEvent(
        url=f"http://wiki.example.cn/{word}/{i}.html", host="wiki.example.cn", lease_id="", status=200,
        content_type="text/html; charset=utf-8", encoding="utf-8", title=f"{word} {i}", headings="",
        body=f"{word}的说明。" * 20, content_hash=f"{word}{i}",
    )  # fmt: skip


def test_every_worker_answers_from_the_latest_commit_of_a_writer_in_another_process(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    server = start("serve", TANSUO_API_WORKERS="2")
    deadline = time.monotonic() + 60
    while server.metric("tansuo_api_workers") != 2:  # the second may still be starting
        assert time.monotonic() < deadline
        time.sleep(0.1)
    search = "/api/search?q=" + quote("天文望远镜")
    assert json.loads(server.get(search)[2])["total"] == 0

    # The crawl's side: the writer lock is free, since every worker opened read-only.
    writer = TantivySearchIndex(tmp_path / "data" / "index", Settings(data_dir=tmp_path / "data"))
    writer.upsert([build_document(_page(i, "天文望远镜")) for i in range(3)])
    writer.commit()
    try:
        # A new connection each time: the kernel hands them to both workers.
        totals = {json.loads(server.get(search)[2])["total"] for _ in range(20)}
        assert totals == {3}
        writer.upsert([build_document(_page(i, "天文望远镜")) for i in range(3, 5)])
        writer.commit()
        totals = {json.loads(server.get(search)[2])["total"] for _ in range(20)}
        assert totals == {5}
    finally:
        writer.close()
