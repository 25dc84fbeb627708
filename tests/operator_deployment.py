"""A small deployment for the operator features of issue 38 (search analytics,
dictionaries, per-host crawl settings, cached copies and dates), in either mode:

- ``embedded``: everything under one data directory (SQLite, tantivy, page packs);
- ``cluster``: Redis for the state, the search log and the dictionaries, an
  Elasticsearch API (noida-db) for the index, S3 (SeaweedFS) for the page store.

Its pages are served by a real HTTP server on 127.0.0.1, so a click on a result lands
somewhere, and they are indexed and stored as a crawl would have left them (their
raw bytes in the page store, a Last-Modified on some), without running a crawl.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from services.common.bootstrap import build_frontier_state, build_page_store, build_search_index
from services.common.config import Settings
from services.common.domain.documents import StoredPage
from services.common.domain.frontier_types import NewUrl
from services.common.domain.messages import url_fingerprint
from services.common.ports import SearchIndex
from services.indexer.document_builder import build_document
from tests.page_events import page_event

TOKEN = "operator-features-token-0123456789"
FETCHED_AT = 1_790_000_000.0  # 2026-09-21


@dataclass(frozen=True)
class SitePage:
    path: str
    title: str
    text: str  # what the indexer would have extracted
    html: bytes  # what the server sends
    last_modified: str = ""
    content_type: str = "text/html; charset=utf-8"


def _html(title: str, body: str, extra_head: str = "", charset: str = "utf-8") -> bytes:
    return (f'<!doctype html><html lang="zh-CN"><head><meta charset="{charset}"><title>{title}</title>{extra_head}'
            f"</head><body><h1>{title}</h1><p>{body}</p></body></html>").encode(charset)  # fmt: skip


PAGES = (
    SitePage("/docs/install.html", "安装探索引擎", "本文介绍如何安装探索引擎和它需要的软件包。",
             _html("安装探索引擎", '本文介绍如何安装探索引擎和它需要的软件包。<script>document.body.innerHTML="脚本运行了";'
                   'parent.document.title="脚本运行了"</script><form action="https://example.org/steal"><input name=x></form>',
                   extra_head='<meta http-equiv="refresh" content="0;url=https://example.org/">'),
             last_modified="Tue, 01 Mar 2022 10:00:00 GMT"),
    SitePage("/docs/wifi.html", "无线网络配置", "配置无线网络，然后安装驱动软件包。",
             _html("无线网络配置", "配置无线网络，然后安装驱动软件包。"), last_modified="Mon, 05 Aug 2024 08:30:00 GMT"),
    SitePage("/docs/printer.html", "打印机设置", "打印机的安装与设置。",
             _html("打印机设置", "打印机的安装与设置。", charset="gb18030"), content_type="text/html"),
    SitePage("/private/notes.html", "内部笔记", "这一页要求不保留快照，但可以搜索到安装说明。",
             _html("内部笔记", "这一页要求不保留快照，但可以搜索到安装说明。", '<meta name="robots" content="noarchive">')),
)  # fmt: skip


class _Site(BaseHTTPRequestHandler):
    pages: dict[str, SitePage] = {}

    def do_GET(self) -> None:
        page = self.pages.get(self.path)
        if page is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", page.content_type)
        self.send_header("Content-Length", str(len(page.html)))
        self.end_headers()
        self.wfile.write(page.html)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def site_server() -> Iterator[str]:
    """The pages on http://127.0.0.1:PORT; yields that base URL."""
    _Site.pages = {p.path: p for p in PAGES}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Deployment:
    mode: str
    cfg: Settings
    site: str  # base URL of the site
    index: SearchIndex  # a writer, handed to the app as `tansuo run` does

    @property
    def host(self) -> str:
        return self.site.removeprefix("http://")

    def url(self, path: str) -> str:
        return self.site + path


def fill(cfg: Settings, site: str, index: SearchIndex) -> None:
    """Index and store the site's pages as a crawl leaves them, and put its host in the frontier."""
    store = build_page_store(cfg)
    docs = []
    for page in PAGES:
        url = site + page.path
        headers = {"Content-Type": page.content_type}
        if page.last_modified:
            headers["Last-Modified"] = page.last_modified
        digest = hashlib.sha1(page.html).hexdigest()
        store.put(url_fingerprint(url), StoredPage(url, 200, headers, FETCHED_AT, page.html, digest))
        event = replace(page_event(url, page.title, page.text), fetched_at=FETCHED_AT, last_modified=page.last_modified,
                        store_key=url_fingerprint(url))  # fmt: skip
        docs.append(build_document(event))
    index.upsert(docs)
    index.commit()
    host = site.removeprefix("http://")
    state = build_frontier_state(cfg)
    state.ensure_host(host, "http", cfg.frontier_host_delay_s)
    state.add_urls([NewUrl(site + p, host, 1) for p in ("/more/a.html", "/more/b.html", "/private/c.html")], FETCHED_AT, 1000)
    state.close()
    close = getattr(store, "close", None)
    if close is not None:
        close()


def settings(mode: str, request: pytest.FixtureRequest, data_dir: Path) -> Settings:
    """Settings of a fresh deployment in ``mode``; cluster mode uses the session's servers
    with names of its own (key prefix, index alias, bucket)."""
    common = {"data_dir": data_dir, "api_token": TOKEN, "analysis_refresh_s": 0.5, "frontier_host_delay_s": 1.0}
    if mode == "embedded":
        return Settings(**common)
    own = uuid.uuid4().hex[:12]
    redis = request.getfixturevalue("redis_server")
    es_url = request.getfixturevalue("es_url")
    s3 = request.getfixturevalue("s3_endpoint")
    return Settings(**common, state=f"{redis.url}?prefix=test-{own}",
                    index=es_url.replace("http://", "elasticsearch://", 1) + f"/tansuo-test-{own}",
                    store=s3.url(f"test-{own}"))  # fmt: skip


@contextmanager
def deployment(mode: str, request: pytest.FixtureRequest, data_dir: Path) -> Iterator[Deployment]:
    with site_server() as site:
        cfg = settings(mode, request, data_dir)
        index = build_search_index(cfg)
        fill(cfg, site, index)
        try:
            yield Deployment(mode, cfg, site, index)
        finally:
            index.close()
            if mode == "cluster":
                _drop_cluster_data(request, cfg)


def _drop_cluster_data(request: pytest.FixtureRequest, cfg: Settings) -> None:
    import redis

    from tests.servers.es_server import drop_alias

    drop_alias(request.getfixturevalue("es_client"), cfg.index.rsplit("/", 1)[1])
    client = redis.Redis(host="127.0.0.1", port=request.getfixturevalue("redis_server").port)
    try:
        keys = list(client.scan_iter(match=f"{cfg.state.rsplit('prefix=', 1)[1]}:*", count=5000))
        if keys:
            client.unlink(*keys)
    finally:
        client.close()


MODES = ["embedded", pytest.param("cluster", marks=pytest.mark.integration)]
