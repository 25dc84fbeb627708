"""Embedded mode: every service on one machine, talking over the durable SQLite bus.

The services are the same classes that run alone in a cluster; only the adapters that
bootstrap picks differ. Scrapy's reactor needs the main thread, so the crawler runs
there and the scheduler loop and the watcher run in threads beside it. The indexer
and ranker run in a second process (services/cli/index_process.py) that owns the
writable index, so that segmenting pages and extracting them use a core each; with
TANSUO_EMBEDDED_PROCESSES=1 they run as threads of this process instead
(services/cli/index_side.py), as they all did before.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from services.cli.index_process import IndexProcess, IndexProcessDied
from services.cli.indexing_result import Finished
from services.common.bootstrap import (
    build_bus,
    build_frontier_state,
    build_page_store,
    build_search_index,
)
from services.common.config import Settings
from services.common.domain.messages import (
    TOPIC_DOCUMENTS,
    TOPIC_FETCHES,
    TOPIC_INDEXED,
    TOPIC_LINKS,
    TOPIC_PAGES,
    TOPIC_REMOVALS,
)
from services.common.ports import SearchIndex
from services.crawler.worker import CrawlerWorker
from services.scheduler.frontier import Frontier
from services.scheduler.frontier_metrics import MeteredFrontierState
from services.scheduler.lease_check import lease_checker
from services.scheduler.scheduler import Scheduler
from services.scheduler.scope import Scope

if TYPE_CHECKING:
    from services.extractor.extractor import Extractor

log = logging.getLogger(__name__)
# How long a resumed crawl gives the jobs a killed run left on the bus to come back
# and be fetched, before the leases still open are taken for orphans.
RESUME_GRACE_S = 30.0
# The watcher's tick: the end of the crawl is noticed after two quiet ticks in a row,
# and progress drawn every DRAW_EVERY ticks.
WATCH_INTERVAL_S = 0.05
DRAW_EVERY = 2

_GROUPS = {
    TOPIC_FETCHES: ("crawler",),
    TOPIC_PAGES: ("scheduler", "indexer"),
    TOPIC_LINKS: ("scheduler", "ranker"),
    TOPIC_REMOVALS: ("indexer",),
    TOPIC_INDEXED: ("ranker",),
    TOPIC_DOCUMENTS: ("extractor",),
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
    # Every seed of this run went unanswered (no connection, DNS, timeouts): a crawl of
    # nothing, which exits non-zero.
    seeds_unreachable: bool = False


class Indexing(Protocol):
    """The indexer and ranker, in this process (IndexSide) or in their own (IndexProcess)."""

    @property
    def indexed(self) -> int: ...

    def start(self) -> None: ...

    def wait_ready(self) -> None: ...

    def alive(self) -> bool: ...

    def finish(self) -> Finished: ...

    def close(self) -> None: ...


class EmbeddedCrawl:
    def __init__(self, cfg: Settings, seeds: Sequence[str], continuous: bool = False) -> None:
        """``continuous``: never finish; recrawl pages when due (see the recrawl settings)."""
        self.cfg = cfg
        self.bus = build_bus(cfg)
        # Every group, before anything is published, and whichever process consumes it,
        # so that compact() never drops a message a group has not seen.
        for topic, groups in _GROUPS.items():
            for group in groups:
                self.bus.subscribe(topic, group)  # type: ignore[attr-defined]
        self.index: SearchIndex | None = None
        self._indexing: Indexing | None = None
        # Metered as in `tansuo scheduler`, so `tansuo run`'s /metrics counts the same things.
        state = MeteredFrontierState(build_frontier_state(cfg))
        self.frontier = Frontier(cfg, state, Scope.from_settings(cfg, seeds))
        self.seeds = self.frontier.add_seeds(seeds)
        self.scheduler = Scheduler(self.frontier, self.bus, continuous=continuous)
        self.continuous = continuous
        self.worker = CrawlerWorker(cfg, self.bus, build_page_store(cfg), lease_check=lease_checker(self.frontier.state))
        self.extractor = _extractor(cfg) if cfg.documents_enabled else None
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
            errors=counts.errors,
            indexed=self._indexing.indexed if self._indexing is not None else 0,
            elapsed_s=time.monotonic() - self._started,
        )

    def pages_per_s(self) -> float:
        """Rate of this run only, so a resumed crawl does not count old pages."""
        elapsed = time.monotonic() - self._started
        return (self.frontier.counts().fetched - self._fetched_at_start) / elapsed if elapsed > 0 else 0.0

    def start_indexing(self) -> None:
        """Start the indexer and ranker, once; the index process loads while the
        crawler starts."""
        if self._indexing is not None:
            return
        if self.cfg.embedded_processes == 1:
            from services.cli.index_side import (
                IndexSide,  # only here: see index_process.child_main
            )

            side = IndexSide(self.cfg, self.bus, build_search_index(self.cfg))
            self._indexing, self.index = side, side.index
            side.start()
            return
        self._indexing = IndexProcess(self.cfg)
        self._indexing.start()

    def readable_index(self) -> SearchIndex:
        """The index for reading: the writable one in a single process, else a
        read-only view that sees every commit of the index process, as `tansuo serve`
        beside a crawl does."""
        self.start_indexing()
        if self.index is None:
            assert self._indexing is not None
            self._indexing.wait_ready()
            self.index = build_search_index(self.cfg, read_only=True)
        return self.index

    def close(self) -> None:
        """Stop the indexing side if the crawl did not finish it (an error, a second
        Ctrl-C): no index process outlives the command, nor an extraction worker."""
        if self._indexing is not None:
            self._indexing.close()
        if self.extractor is not None:
            self.extractor.close()

    def run(self, on_tick: Callable[[EmbeddedCrawl], None] | None = None) -> CrawlSummary:
        if not self.seeds and self.frontier.finished():
            log.warning("nothing to crawl: no seed is in scope and the frontier is empty")
        self.start_indexing()
        threads = [
            threading.Thread(target=self._loop, args=(self.scheduler.step,), name="scheduler", daemon=True),
            threading.Thread(target=self._watch, args=(on_tick,), name="watch", daemon=True),
        ]
        if self.extractor is not None:
            extractor = self.extractor
            # Its worker processes extract; this thread only waits on their pipes and the bus.
            threads.append(threading.Thread(target=self._loop, args=(lambda: extractor.step(0.05),),
                                            name="extractor", daemon=True))  # fmt: skip
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

    def _watch(self, on_tick: Callable[[EmbeddedCrawl], None] | None) -> None:
        """Stop the crawler once the frontier is empty twice in a row with no job pending."""
        quiet = ticks = 0
        orphans_due = time.monotonic() + RESUME_GRACE_S
        compact_due = time.monotonic() + self.cfg.embedded_bus_compact_interval_s
        while not self._stop.wait(WATCH_INTERVAL_S):
            ticks += 1
            now = time.monotonic()
            if orphans_due and now >= orphans_due:
                orphans_due = 0.0
                self._release_orphaned_leases()
            if now >= compact_due:
                compact_due = now + self.cfg.embedded_bus_compact_interval_s
                self.bus.compact()  # type: ignore[attr-defined]
            if on_tick is not None and ticks % DRAW_EVERY == 0:
                on_tick(self)
            if self._indexing is not None and not self._indexing.alive():
                log.error("the index process ended during the crawl; stopping (run the same command to resume)")
                self.worker.stop()
                return
            done = (
                not self.continuous
                and self.scheduler.idle()
                and self.bus.pending(TOPIC_FETCHES, "crawler") == 0
                # A document's extracted event is committed after it is published.
                and (self.extractor is None or self.bus.pending(TOPIC_DOCUMENTS, "extractor") == 0)
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
        finished = self._finish_indexing()
        self.bus.compact()  # type: ignore[attr-defined]
        self.close()  # while the bus was compacted, the index process closed its writer
        self.frontier.record_max_pages_cut()
        progress = self.progress()
        return CrawlSummary(
            finished=self._finished.is_set(),
            progress=dataclasses.replace(progress, indexed=finished.documents),
            documents=finished.documents,
            pagerank_nodes=finished.nodes,
            given_up=self.frontier.given_up_hosts(),
            seeds_unreachable=self._seeds_unreachable(),
        )

    def _seeds_unreachable(self) -> bool:
        """Whether this run had seeds and none of them got an answer."""
        if not self.seeds:
            return False
        for url in self.seeds:
            info = self.frontier.state.url_info(url)
            if info is None or info.state not in ("failed", "done") or (info.state == "done" and info.status):
                return False
        return True

    def _finish_indexing(self) -> Finished:
        """Drain through the indexing side; if the index process died, here instead
        (its writer lock went with it), on a fresh bus connection whose offsets are
        the ones that process committed."""
        assert self._indexing is not None
        try:
            return self._indexing.finish()
        except IndexProcessDied as exc:
            log.error("%s; indexing the rest in this process", exc)
        from services.cli.index_side import IndexSide

        side = IndexSide(self.cfg, build_bus(self.cfg), build_search_index(self.cfg))
        self.index = side.index
        return side.finish()


def _extractor(cfg: Settings) -> Extractor:
    """The document extractor, on a bus connection of its own, and its worker processes
    (each started when its first document comes)."""
    from services.extractor.extraction_pool import ExtractionPool
    from services.extractor.extractor import Extractor

    return Extractor(cfg, build_bus(cfg), ExtractionPool(cfg))
