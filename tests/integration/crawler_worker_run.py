"""Run one CrawlerWorker in this process until a number of page events arrived.

Used by test_crawler_worker.py through a subprocess, because a Twisted reactor runs
once per process. The jobs are already on the bus in ``data_dir``; this script runs
the worker in the main thread, as the CLI does, and stops it from a watcher thread.
Prints a JSON summary on stdout.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path
from typing import Any

from services.common.adapters.packs.page_store import PackPageStore
from services.common.bootstrap import build_bus, build_page_store
from services.common.config import Settings
from services.common.domain.documents import StoredPage
from services.common.domain.messages import (
    TOPIC_FETCHES,
    TOPIC_PAGES,
    FetchJob,
    PageEvent,
)
from services.common.ports import Bus
from services.crawler.worker import CrawlerWorker

WATCH_GROUP = "test-watcher"
DEADLINE_S = 30.0


def main() -> None:
    args = _parse_args()
    cfg = Settings(data_dir=Path(args.data_dir), **json.loads(args.settings))
    bus, store = build_bus(cfg), build_page_store(cfg)
    if args.store_fails_for or args.slow_store_s:
        store = WatchedStore(cfg.data_dir / "pages", args.store_fails_for, args.slow_store_s)
    worker = CrawlerWorker(cfg, bus, store)
    summary: dict[str, Any] = {}
    late = FetchJob.from_dict(json.loads(args.late_job)) if args.late_job else None
    if args.until_committed:
        watcher = threading.Thread(target=_watch_commits, args=(bus, worker), daemon=True)
    else:
        watcher = threading.Thread(target=_watch, args=(bus, worker, args.expect, late, summary), daemon=True)
    started = time.monotonic()
    watcher.start()
    worker.run()
    summary["run_s"] = time.monotonic() - started
    summary["stats"] = {"fetched": worker.stats.fetched, "errors": worker.stats.errors,
                        "bytes": worker.stats.bytes}
    if isinstance(store, WatchedStore):
        summary["puts"] = {"threads": sorted(store.threads), "most_at_once": store.most_at_once}
    bus.close()
    print(json.dumps(summary))


class WatchedStore(PackPageStore):
    """The embedded store, slowed down as a store across a network is, failing for
    URLs holding a given text, and noting which threads put and how many at once."""

    remote = True

    def __init__(self, root: Path, fails_for: str, delay_s: float) -> None:
        super().__init__(root)
        self.fails_for, self.delay_s = fails_for, delay_s
        self.threads: set[str] = set()
        self.at_once = self.most_at_once = 0
        self._count_lock = threading.Lock()

    def put(self, key: str, page: StoredPage) -> None:
        with self._count_lock:
            self.threads.add("main" if threading.current_thread() is threading.main_thread() else "other")
            self.at_once += 1
            self.most_at_once = max(self.most_at_once, self.at_once)
        try:
            time.sleep(self.delay_s)
            if self.fails_for and self.fails_for in page.url:
                raise OSError("the store is full")
            super().put(key, page)
        finally:
            with self._count_lock:
                self.at_once -= 1


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    parser.add_argument("--expect", type=int, required=True, help="page events to wait for")
    parser.add_argument("--settings", default="{}", help="Settings keyword arguments, as JSON")
    parser.add_argument("--late-job", default="", help="a FetchJob (JSON) to publish once idle")
    parser.add_argument("--store-fails-for", default="", help="puts of URLs holding this text fail")
    parser.add_argument("--slow-store-s", type=float, default=0.0, help="each put takes this long")
    parser.add_argument("--until-committed", action="store_true",
                        help="stop once every fetch job is committed, not on page events")
    return parser.parse_args()


def _watch(bus: Bus, worker: CrawlerWorker, expect: int, late: FetchJob | None,
           summary: dict[str, Any]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    seen = _wait_for(bus, expect, deadline)
    if late is not None:
        time.sleep(0.5)  # let the engine go idle: the case where Scrapy's heartbeat is 5 s
        published = time.monotonic()
        bus.publish(TOPIC_FETCHES, late.to_bytes(), key=late.host)
        _wait_for(bus, 1, deadline, url=late.url)
        summary["late_latency_s"] = time.monotonic() - published
    summary["events_seen"] = seen
    worker.stop()


def _watch_commits(bus: Bus, worker: CrawlerWorker) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while bus.pending(TOPIC_FETCHES, "crawler") and time.monotonic() < deadline:
        time.sleep(0.1)
    worker.stop()


def _wait_for(bus: Bus, count: int, deadline: float, url: str = "") -> int:
    seen = 0
    while seen < count and time.monotonic() < deadline:
        for message in bus.poll(TOPIC_PAGES, WATCH_GROUP, timeout_s=0.2):
            if not url or PageEvent.from_bytes(message.payload).url == url:
                seen += 1
    return seen


if __name__ == "__main__":
    main()
