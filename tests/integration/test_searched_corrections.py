"""The did-you-mean weighs its corrections by what users search: searches made over
the API are written to the real search log (SQLite, or Redis in a cluster), read back
in the background, and change which correction a typo gets."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask

from services.api.app import create_app
from services.api.context import EXTENSION, ApiContext
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.indexer.document_builder import build_document
from tests.page_events import page_event

# By the pages, 亲菜 is 亲爱 (60 pages, a letter apart) rather than 青菜 (5, a near
# syllable): docs/ranking.md, "Did you mean".
PAGES = [(f"/greens/{i}", f"青菜{i}", "青菜很好吃。") for i in range(5)] + [
    (f"/dear/{i}", f"亲爱{i}", "亲爱的朋友。") for i in range(60)
]


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.integration)])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Flask]:
    state = {} if request.param == "sqlite" else {"state": request.getfixturevalue("redis_url")}
    cfg = Settings(data_dir=tmp_path, search_typo_log_refresh_s=0.2, **state)
    index = TantivySearchIndex(tmp_path / "index", cfg)
    index.upsert(
        [build_document(page_event(f"https://shop.example.cn{path}", title, body)) for path, title, body in PAGES]
    )
    index.commit()
    app = create_app(cfg, index=index)
    yield app
    app.extensions[EXTENSION].analytics.stop()
    index.close()


def _correction(app: Flask, q: str) -> str:
    return app.test_client().get("/api/search", query_string={"q": q}).get_json()["did_you_mean"]["query"]


def test_a_typo_is_corrected_to_the_word_users_search(app: Flask) -> None:
    assert _correction(app, "亲菜") == "亲爱"
    client = app.test_client()
    for _ in range(5):
        assert client.get("/api/search?q=青菜").get_json()["total"] == 5
    context: ApiContext = app.extensions[EXTENSION]
    context.analytics.flush()
    deadline = time.monotonic() + 10
    while _correction(app, "亲菜") != "青菜" and time.monotonic() < deadline:
        time.sleep(0.1)  # the log is read again every 0.2 s
    assert _correction(app, "亲菜") == "青菜"
