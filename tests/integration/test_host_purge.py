"""A purge from `tansuo serve`'s console reaches the embedded crawl sharing its data
directory: the console (its own app, index read-only) sends the removals over the
durable bus, and the crawl's indexer, polling that bus, takes the host's documents
out of the index while the other host's stay."""

from __future__ import annotations

import re
from pathlib import Path

from services.api.app import create_app
from services.common.adapters.sqlite.bus import SqliteBus
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.bootstrap import build_frontier_state
from services.common.config import Settings
from services.common.domain.messages import TOPIC_PAGES, TOPIC_REMOVALS
from services.indexer.indexer import GROUP, Indexer
from tests.integration.test_api_host_actions import A, B, crawl_two_alike_hosts
from tests.page_events import page_event

TOKEN = "purge-token-0123456789"


def test_a_purge_from_the_console_leaves_the_index_through_the_crawls_indexer(tmp_path: Path) -> None:
    cfg = Settings(data_dir=tmp_path, api_token=TOKEN, frontier_sitemaps=False, frontier_host_delay_s=0.0,
                   indexer_commit_interval_s=3600)  # fmt: skip
    state = build_frontier_state(cfg)
    crawl_two_alike_hosts(cfg, state)
    # The crawl's side: its bus groups, its writable index and indexer.
    bus = SqliteBus(tmp_path / "bus.sqlite3")
    for topic in (TOPIC_PAGES, TOPIC_REMOVALS):
        bus.subscribe(topic, GROUP)
    index = TantivySearchIndex(tmp_path / "index", cfg)
    indexer = Indexer(cfg, bus, index)
    urls = [f"http://{h}/{p}" for h in (A, B) for p in ("", "x", "y")]
    for n, url in enumerate(urls):
        event = page_event(url, f"第{n}页", f"关于主机清除的第{n}篇文章。")
        bus.publish(TOPIC_PAGES, event.to_bytes(), key=event.host)

    def drain() -> None:
        while indexer.step(0.0):
            pass
        indexer.flush()

    drain()
    assert sorted(index.urls()) == sorted(urls)

    # The server's side: another app over the same directory, its index read-only.
    console = create_app(cfg, index=TantivySearchIndex(tmp_path / "index", cfg, read_only=True)).test_client()
    console.post("/admin/login", data={"token": TOKEN})
    csrf = re.search(r'name="csrf" value="([^"]+)"', console.get("/admin").get_data(as_text=True)).group(1)
    done = console.post(f"/admin/hosts/{A}", data={"action": "purge", "csrf": csrf, "confirm": A})
    assert done.status_code == 303 and "n=4" in done.headers["Location"]  # /, x, y and the 404 z

    drain()
    assert sorted(index.urls()) == sorted(u for u in urls if B in u)
    assert state.get_host(A).paused and not state.get_host(B).paused
    index.close()
    bus.close()
    state.close()


def test_a_pause_from_the_server_reaches_the_crawls_own_frontier_connection(tmp_path: Path) -> None:
    from services.scheduler.frontier import Frontier
    from services.scheduler.scope import Scope

    cfg = Settings(data_dir=tmp_path, api_token=TOKEN, frontier_sitemaps=False, frontier_host_delay_s=0.0)
    crawl_state = build_frontier_state(cfg)  # the crawl's connection to frontier.sqlite3
    crawl_two_alike_hosts(cfg, crawl_state)
    crawl_state.recrawl_host(A, 0.0)
    crawl_state.recrawl_host(B, 0.0)
    server = create_app(cfg, index=TantivySearchIndex(tmp_path / "index", cfg)).test_client()
    assert server.post(f"/api/hosts/{A}/pause", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    frontier = Frontier(cfg, crawl_state, Scope.from_settings(cfg, [f"http://{A}/"]), clock=lambda: 2_000_000.0)
    jobs = frontier.dispatch(limit=100)
    assert jobs and {job.host for job in jobs} == {B}
    crawl_state.close()
