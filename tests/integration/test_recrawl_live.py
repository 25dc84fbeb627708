"""Recrawl against a live server whose pages change on command.

A real Scrapy worker fetches over HTTP; the frontier runs on an injected clock, so
hours pass in microseconds and nothing sleeps. Twisted's reactor runs once per
process, so one worker (in a background thread) serves every test of this module.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
import time
from pathlib import Path

import pytest

from services.cli.static_site_server import RequestRecord, SiteServer
from services.common.adapters.packs.page_store import PackPageStore
from services.common.adapters.sqlite.bus import SqliteBus
from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.domain.messages import TOPIC_FETCHES, TOPIC_LINKS, TOPIC_PAGES
from services.crawler.worker import CrawlerWorker
from services.indexer.indexer import Indexer
from services.scheduler.frontier import Frontier
from services.scheduler.scheduler import Scheduler
from services.scheduler.scope import Scope
from tests.manual_clock import ManualClock as Clock

HOUR = 3600.0


class ChangingPage:
    """A page whose body changes on command, with ETag validation (304s)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.status = 200
        self.retry_after = ""

    def __call__(self, request: RequestRecord):
        if self.status != 200:
            headers = {"Retry-After": self.retry_after} if self.retry_after else {}
            return self.status, headers, b"unavailable"
        body = f"<html><head><title>变化的页面</title></head><body><p>{self.text}</p></body></html>".encode()
        etag = '"' + hashlib.sha1(body).hexdigest()[:12] + '"'
        if request.headers.get("If-None-Match") == etag:
            return 304, {"ETag": etag}, b""
        return 200, {"Content-Type": "text/html; charset=utf-8", "ETag": etag}, body


@pytest.fixture(scope="module")
def shared_bus(tmp_path_factory):
    """One bus and one crawler worker for the module (the reactor cannot restart)."""
    root = tmp_path_factory.mktemp("live")
    bus = SqliteBus(root / "bus.sqlite3")
    cfg = Settings(data_dir=root, crawler_allow_private_networks=True, crawler_concurrency=4)
    worker = CrawlerWorker(cfg, bus, PackPageStore(root / "pages"))
    thread = threading.Thread(target=worker.run, name="crawler", daemon=True)
    thread.start()
    yield bus
    worker.stop()
    thread.join(30)


class Harness:
    def __init__(self, bus: SqliteBus, data: Path, site: SiteServer, clock: Clock, sitemaps: bool = False) -> None:
        cfg = Settings(
            data_dir=data, frontier_host_delay_s=0, frontier_sitemaps=sitemaps, crawler_allow_private_networks=True
        )
        self.cfg, self.bus, self.site, self.clock = cfg, bus, site, clock
        self.frontier = Frontier(cfg, SqliteFrontierState(data / "frontier.sqlite3"), Scope.from_settings(cfg, [site.url]), clock)
        self.scheduler = Scheduler(self.frontier, bus)
        self.index = build_search_index(cfg)
        self.indexer = Indexer(cfg, bus, self.index)

    def settle(self) -> None:
        """Run the scheduler and indexer until every job is fetched and handled."""
        deadline = time.monotonic() + 30
        quiet = 0
        while time.monotonic() < deadline:
            self.scheduler.step(0.02)
            self.indexer.step(0.0)
            busy = (
                self.frontier.counts().leased
                or self.bus.pending(TOPIC_FETCHES, "crawler")
                or self.bus.pending(TOPIC_PAGES, "scheduler")
                or self.bus.pending(TOPIC_LINKS, "scheduler")
            )
            quiet = 0 if busy else quiet + 1
            if quiet >= 3:
                self.indexer.flush()
                return
        raise AssertionError("the crawl did not settle")

    def later(self, seconds: float) -> None:
        self.clock.now += seconds
        self.frontier.sweep_recrawl()

    def due_in(self, path: str) -> float:
        return self.frontier.state.url_info(self.site.url + path.lstrip("/")).due_at - self.clock.now

    def requests_for(self, path: str) -> list[RequestRecord]:
        return [r for r in self.site.requests if r.path == path]


@pytest.fixture
def harness(shared_bus, tmp_path):
    page, leaf = ChangingPage("第一版 内容"), ChangingPage("叶子 页面")
    page_route = page
    routes = {
        "/": lambda r: _with_link(page_route(r)),
        "/leaf": leaf,
    }
    site = SiteServer(tmp_path, extra_routes=routes).start()
    h = Harness(shared_bus, tmp_path / "data", site, Clock(time.time()))
    h.page, h.leaf = page, leaf
    h.frontier.add_seeds([site.url])
    yield h
    site.stop()


def _with_link(response):
    status, headers, body = response
    return status, headers, body.replace(b"</p>", b'</p><a href="/leaf">leaf</a>')


def test_intervals_grow_and_shrink_and_304s_are_used(harness):
    h = harness
    h.settle()
    assert h.due_in("/") == pytest.approx(HOUR)
    assert "If-None-Match" not in h.requests_for("/")[0].headers

    h.later(HOUR)
    h.settle()
    second = h.requests_for("/")[-1]
    assert second.headers.get("If-None-Match"), "the recrawl did not send the ETag"
    assert h.frontier.state.url_info(h.site.url).note == "not_modified"
    assert h.due_in("/") == pytest.approx(2 * HOUR)

    h.later(2 * HOUR)
    h.settle()
    assert h.due_in("/") == pytest.approx(4 * HOUR)

    h.page.text = "第二版 内容 已经 更新"
    h.later(4 * HOUR)
    h.settle()
    assert h.due_in("/") == pytest.approx(2 * HOUR)
    assert "第二版" in h.index.get(h.site.url).body


def test_a_removed_page_leaves_the_index(harness):
    h = harness
    h.settle()
    leaf = h.site.url + "leaf"
    assert h.index.get(leaf) is not None
    h.leaf.status = 404
    h.later(HOUR)
    h.settle()
    assert h.index.get(leaf) is not None, "one 404 may be a hiccup"
    h.later(HOUR)
    h.settle()
    assert h.index.get(leaf) is None
    assert h.index.get(h.site.url) is not None


def test_retry_after_is_honoured_to_the_second(harness):
    h = harness
    h.settle()
    h.page.status, h.page.retry_after = 503, "120"
    h.later(HOUR)
    h.settle()
    asked = len(h.requests_for("/"))
    h.page.status, h.page.retry_after = 200, ""
    h.clock.now += 119
    h.settle()
    assert len(h.requests_for("/")) == asked, "fetched before Retry-After ran out"
    h.clock.now += 1.5
    h.settle()
    assert len(h.requests_for("/")) == asked + 1


def _urlset(base: str, paths: list[str]) -> bytes:
    entries = "".join(f"<url><loc>{base}{p}</loc><lastmod>2026-01-01</lastmod></url>" for p in paths)
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode()


def test_a_sitemap_index_with_gzipped_sitemaps_finds_pages_nobody_links_to(shared_bus, tmp_path):
    def orphan(n: int):
        body = f"<html><head><title>孤立页面 {n}</title></head><body><p>没有链接指向第{n}页</p></body></html>"
        return 200, {"Content-Type": "text/html; charset=utf-8"}, body.encode()

    routes = {f"/orphans/{n}.html": orphan(n) for n in range(6)}
    site = SiteServer(tmp_path, robots_txt="", extra_routes=routes).start()
    base = site.url.rstrip("/")
    site.robots_txt = f"User-agent: *\nSitemap: {base}/sitemap-index.xml\n"
    index_xml = (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{base}/maps/a.xml.gz</loc></sitemap><sitemap><loc>{base}/maps/b.xml.gz</loc></sitemap>"
        "</sitemapindex>"
    ).encode()
    site.extra_routes.update(
        {
            "/": (200, {"Content-Type": "text/html"}, b"<html><title>home</title><body>no links</body></html>"),
            "/sitemap-index.xml": (200, {"Content-Type": "application/xml"}, index_xml),
            "/maps/a.xml.gz": (200, {"Content-Type": "application/gzip"}, gzip.compress(_urlset(base, [f"/orphans/{n}.html" for n in range(3)]))),
            "/maps/b.xml.gz": (200, {"Content-Type": "application/gzip"}, gzip.compress(_urlset(base, [f"/orphans/{n}.html" for n in range(3, 6)]))),
        }
    )
    h = Harness(shared_bus, tmp_path / "data", site, Clock(time.time()), sitemaps=True)
    h.frontier.add_seeds([site.url])
    h.settle()
    site.stop()
    found = {u for u in h.index.urls() if "/orphans/" in u}
    assert found == {f"{base}/orphans/{n}.html" for n in range(6)}
    fetched = [r.path for r in site.requests]
    assert fetched.index("/robots.txt") < fetched.index("/sitemap-index.xml") < fetched.index("/maps/a.xml.gz")
