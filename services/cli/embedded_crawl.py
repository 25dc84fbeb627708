"""Embedded mode: every service in one process, talking over the durable in-process bus.

The services are the same classes that run alone in a cluster; only the adapters that
bootstrap picks differ. Scrapy's reactor needs the main thread, so the crawler runs
there and the scheduler, indexer and ranker loops run in threads beside it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from services.common.bootstrap import (
    build_bus,
    build_frontier_state,
    build_link_graph,
    build_page_store,
    build_search_index,
)
from services.common.model import TOPIC_FETCHES, TOPIC_INDEXED, TOPIC_LINKS, TOPIC_PAGES, TOPIC_REMOVALS
from services.common.ports import SearchIndex
from services.common.settings import Settings
from services.crawler.worker import CrawlerWorker
from services.indexer.indexer import Indexer
from services.ranker.ranker import Ranker
from services.scheduler.frontier import Frontier
from services.scheduler.frontier_metrics import MeteredFrontierState
from services.scheduler.lease_check import lease_checker
from services.scheduler.scheduler import Scheduler
from services.scheduler.scope import Scope

log = logging.getLogger(__name__)
# How long a resumed crawl gives the jobs a killed run left on the bus to come back
# and be fetched, before the leases still open are taken for orphans.
RESUME_GRACE_S = 30.0

_GROUPS = {
    TOPIC_FETCHES: ("crawler",),
    TOPIC_PAGES: ("scheduler", "indexer"),
    TOPIC_LINKS: ("scheduler", "ranker"),
    TOPIC_REMOVALS: ("indexer",),
    TOPIC_INDEXED: ("ranker",),
}


@dataclass(frozen=True)
class CrawlProgress:
    fetched: int
    queued: int
    in_flight: int
    errors: int
    indexed: int
    elapsed_s: float

    @property
    def pages_per_s(self) -> float:
        return self.fetched / self.elapsed_s if self.elapsed_s > 0 else 0.0


@dataclass(frozen=True)
class CrawlSummary:
    finished: bool  # False when interrupted before the frontier emptied
    progress: CrawlProgress
    documents: int
    pagerank_nodes: int
    given_up: list[tuple[str, str]] = field(default_factory=list)  # (host, why) unreachable this pass


class EmbeddedCrawl:
    def __init__(
        self, cfg: Settings, seeds: Sequence[str], index: SearchIndex | None = None, continuous: bool = False
    ) -> None:
        """``continuous``: never finish; recrawl pages when due (see the recrawl settings)."""
        self.cfg = cfg
        self.bus = build_bus(cfg)
        for topic, groups in _GROUPS.items():
            for group in groups:
                self.bus.subscribe(topic, group)  # type: ignore[attr-defined]
        self.index = index if index is not None else build_search_index(cfg)
        # Metered as in `tansuo scheduler`, so `tansuo run`'s /metrics counts the same things.
        state = MeteredFrontierState(build_frontier_state(cfg))
        self.frontier = Frontier(cfg, state, Scope.from_settings(cfg, seeds))
        self.seeds = self.frontier.add_seeds(seeds)
        self.scheduler = Scheduler(self.frontier, self.bus, continuous=continuous)
        self.continuous = continuous
        self.indexer = Indexer(cfg, self.bus, self.index)
        self.ranker = Ranker(cfg, self.bus, build_link_graph(cfg), self.index)
        self.worker = CrawlerWorker(cfg, self.bus, build_page_store(cfg), lease_check=lease_checker(self.frontier.state))
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._started = time.monotonic()
        self._started_wall = time.time()
        self._fetched_at_start = self.frontier.counts().fetched

    def progress(self) -> CrawlProgress:
        counts = self.frontier.counts()
        return CrawlProgress(
            fetched=counts.fetched,
            queued=counts.queued,
            in_flight=counts.leased,
            errors=counts.failed + self.worker.stats.errors,
            indexed=self.indexer.indexed,
            elapsed_s=time.monotonic() - self._started,
        )

    def pages_per_s(self) -> float:
        """Rate of this run only, so a resumed crawl does not count old pages."""
        elapsed = time.monotonic() - self._started
        return (self.frontier.counts().fetched - self._fetched_at_start) / elapsed if elapsed > 0 else 0.0

    def run(self, on_tick: Callable[["EmbeddedCrawl"], None] | None = None) -> CrawlSummary:
        if not self.seeds and self.frontier.finished():
            log.warning("nothing to crawl: no seed is in scope and the frontier is empty")
        threads = [
            threading.Thread(target=self._loop, args=(self.scheduler.step,), name="scheduler", daemon=True),
            threading.Thread(target=self.indexer.run, args=(self._stop,), name="indexer", daemon=True),
            # The final PageRank run happens in _finish, after the indexer has drained.
            threading.Thread(
                target=self.ranker.run, args=(self._stop,), kwargs={"final_recompute": False}, name="ranker", daemon=True
            ),
            threading.Thread(target=self._watch, args=(on_tick,), name="watch", daemon=True),
        ]
        for t in threads:
            t.start()
        try:
            self.worker.run()  # blocks until the watcher or Ctrl-C stops it
        finally:
            self._stop.set()
            for t in threads:
                t.join(timeout=120)
        return self._finish()

    def _loop(self, step: Callable[[], int]) -> None:
        while not self._stop.is_set():
            try:
                step()
            except Exception:  # keep the crawl alive; the error is logged with its traceback
                log.exception("scheduler step failed")
                time.sleep(1.0)

    def _watch(self, on_tick: Callable[["EmbeddedCrawl"], None] | None) -> None:
        """Stop the crawler once the frontier is empty twice in a row with no job pending."""
        quiet = 0
        orphans_due = time.monotonic() + RESUME_GRACE_S
        while not self._stop.wait(0.2):
            if orphans_due and time.monotonic() >= orphans_due:
                orphans_due = 0.0
                self._release_orphaned_leases()
            if on_tick is not None:
                on_tick(self)
            done = (
                not self.continuous
                and self.scheduler.idle()
                and self.bus.pending(TOPIC_FETCHES, "crawler") == 0
            )
            quiet = quiet + 1 if done else 0
            if quiet >= 2:
                self._finished.set()
                self.worker.stop()
                return

    def _release_orphaned_leases(self) -> None:
        """A run killed between leasing a URL and publishing its job left a lease that no
        job will ever finish. This process is the only crawler, so once every job the
        dead run left on the bus has had time to come back and be fetched, its leases
        still open are orphans: back to the queue now, not after the lease timeout."""
        now = time.time()
        # Expires exactly the leases taken before this run started.
        released = self.frontier.state.expire_leases(now, now - self._started_wall)
        released += len(self.frontier.state.expire_robots_claims(now, now - self._started_wall))
        if released:
            log.info("%d URL(s) leased by an earlier run and never fetched are queued again", released)

    def _finish(self) -> CrawlSummary:
        """Index and rank whatever the crawl produced, even when interrupted."""
        while self.indexer.step(0.0):
            pass
        self.indexer.flush()
        while self.ranker.step(0.0):
            pass
        run = self.ranker.recompute()
        self.bus.compact()  # type: ignore[attr-defined]
        return CrawlSummary(
            finished=self._finished.is_set(),
            progress=self.progress(),
            documents=self.index.count(),
            pagerank_nodes=run.nodes,
            given_up=self.frontier.given_up_hosts(),
        )
