"""`tansuo scheduler|crawler|extractor|indexer|ranker|api`: each service as its own process.

Every one has the same shape (services/common/runtime/service_runtime.py): adapters from
bootstrap, health endpoints, a loop until SIGTERM, then a drain. Backends come from
TANSUO_BUS, TANSUO_STATE, TANSUO_STORE and TANSUO_INDEX; empty means embedded.
"""

from __future__ import annotations

import argparse
import logging
import threading
from collections.abc import Callable, Sequence

from services.cli.api_servers import api_server
from services.common.bootstrap import (
    Backends,
    build_bus,
    build_dictionary_store,
    build_frontier_state,
    build_link_graph,
    build_page_store,
    build_search_index,
)
from services.common.domain.messages import (
    TOPIC_DOCUMENTS,
    TOPIC_FETCHES,
    TOPIC_INDEXED,
    TOPIC_LINKS,
    TOPIC_PAGES,
    TOPIC_REMOVALS,
    TOPIC_SEEDS,
)
from services.common.ports import Bus
from services.common.runtime.metrics import CONSUMER_LAG
from services.common.runtime.service_runtime import (
    LoopBody,
    ServiceRuntime,
    Stopped,
)

log = logging.getLogger(__name__)

# One second: SIGTERM is noticed well inside Kubernetes' grace period.
POLL_TIMEOUT_S = 1.0


def consumer_lag(bus: Bus, group: str, topics: Sequence[str]) -> Callable[[], None]:
    """A refresh that sets ``tansuo_consumer_lag_messages`` for ``group`` on ``topics``."""

    def refresh() -> None:
        for topic in topics:
            CONSUMER_LAG.labels(topic=topic, group=group).set(bus.pending(topic, group))

    return refresh


def scheduler(backends: Backends, args: argparse.Namespace) -> int:
    """Continuous crawling: admit links and outcomes, dispatch due jobs, sweep recrawls."""
    cfg = backends.settings
    from services.scheduler.frontier import Frontier
    from services.scheduler.frontier_metrics import (
        MeteredFrontierState,
        set_frontier_gauges,
    )
    from services.scheduler.scheduler import GROUP, Scheduler
    from services.scheduler.scope import Scope

    scope = Scope.from_settings(cfg)
    if not cfg.frontier_allow_domains:
        log.warning(
            "TANSUO_FRONTIER_ALLOW_DOMAINS is empty: the scope is the hosts of submitted seeds, "
            "or any host when none are known"
        )
    rt = ServiceRuntime(cfg, "scheduler", backends=("bus", "state"))

    def open_body() -> LoopBody:
        bus = rt.connect("bus", lambda: build_bus(cfg))
        state = rt.connect("state", lambda: build_frontier_state(cfg))
        frontier = Frontier(cfg, MeteredFrontierState(state), scope)
        sched = Scheduler(frontier, bus, continuous=True)
        lag = consumer_lag(bus, GROUP, (TOPIC_SEEDS, TOPIC_LINKS, TOPIC_PAGES))

        def refresh() -> None:
            set_frontier_gauges(frontier.counts())
            lag()

        return LoopBody(step=sched.step, refresh=refresh)

    with rt:
        return rt.supervise(open_body)


def indexer(backends: Backends, args: argparse.Namespace) -> int:
    """Page events in, documents out; on stop, commit the batch held."""
    cfg = backends.settings
    from services.dictionaries.reanalysis import Reanalysis
    from services.dictionaries.sync import DictionarySync
    from services.indexer.indexer import GROUP, Indexer

    rt = ServiceRuntime(cfg, "indexer", backends=("bus", "index"))

    def open_body() -> LoopBody:
        bus = rt.connect("bus", lambda: build_bus(cfg))
        index = rt.connect("index", lambda: build_search_index(cfg))
        store = build_dictionary_store(cfg)
        # The operator's dictionaries, loaded before the first page; the reanalysis job
        # after a change of user words runs in this loop, a batch every few seconds.
        sync = DictionarySync(cfg, lambda: store).start()
        reanalysis = Reanalysis(cfg, store, index, sync)
        ix = Indexer(cfg, bus, index)

        def step() -> None:
            ix.step(POLL_TIMEOUT_S)
            if reanalysis.due():
                reanalysis.step()

        def drain() -> None:
            ix.flush()
            log.info("indexer drained: %s indexed, %s duplicates, %s deleted", ix.indexed, ix.duplicates, ix.deleted)

        return LoopBody(
            step=step,
            drain=drain,
            refresh=consumer_lag(bus, GROUP, (TOPIC_PAGES, TOPIC_REMOVALS)),
        )

    with rt:
        return rt.supervise(open_body)


def extractor(backends: Backends, args: argparse.Namespace) -> int:
    """Documents fetched in, their text out as page events, ``documents_workers`` at a
    time in worker processes; on stop, the batch in hand is finished and committed."""
    cfg = backends.settings
    from services.extractor.extraction_pool import ExtractionPool
    from services.extractor.extractor import GROUP, Extractor

    rt = ServiceRuntime(cfg, "extractor", backends=("bus", "store"))
    pool = ExtractionPool(cfg)

    def open_body() -> LoopBody:
        bus = rt.connect("bus", lambda: build_bus(cfg))
        # The workers read documents from the store themselves; this checks it answers.
        rt.connect("store", lambda: build_page_store(cfg))
        ex = Extractor(cfg, bus, pool)

        def step() -> None:
            with rt.heartbeat.busy():  # one document may take up to documents_timeout_s
                ex.step(POLL_TIMEOUT_S)

        return LoopBody(step=step, refresh=consumer_lag(bus, GROUP, (TOPIC_DOCUMENTS,)))

    try:
        with rt:
            return rt.supervise(open_body)
    finally:
        pool.close()


def ranker(backends: Backends, args: argparse.Namespace) -> int:
    """Links in, PageRank out every ``ranker_interval_s``; on stop, rank once more if needed."""
    cfg = backends.settings
    from services.dictionaries.sync import DictionarySync
    from services.ranker.ranker import GROUP, Ranker

    rt = ServiceRuntime(cfg, "ranker", backends=("bus", "graph", "index"))

    def open_body() -> LoopBody:
        bus = rt.connect("bus", lambda: build_bus(cfg))
        graph = rt.connect("graph", lambda: build_link_graph(cfg))
        index = rt.connect("index", lambda: build_search_index(cfg))
        store = build_dictionary_store(cfg)
        DictionarySync(cfg, lambda: store).start()  # anchors are split as page text is
        rk = Ranker(cfg, bus, graph, index)

        def step() -> None:
            rk.step(POLL_TIMEOUT_S)
            if rk.recompute_due():
                with rt.heartbeat.busy():  # a whole-graph run may take minutes
                    rk.recompute()

        def drain() -> None:
            # The final run leaves the index with current ranks when a crawl has ended.
            if rk.stats().dirty:
                rk.recompute()

        return LoopBody(step=step, drain=drain, refresh=consumer_lag(bus, GROUP, (TOPIC_LINKS, TOPIC_INDEXED)))

    with rt:
        return rt.supervise(open_body)


def crawler(backends: Backends, args: argparse.Namespace) -> int:
    """Fetch jobs until SIGTERM; Scrapy then finishes the fetches in flight, and jobs
    not started stay uncommitted, so they come back to another crawler."""
    cfg = backends.settings
    from services.crawler.crawl_session import CONSUMER_GROUP
    from services.crawler.worker import CrawlerWorker
    from services.scheduler.lease_check import lease_checker

    rt = ServiceRuntime(cfg, "crawler", backends=("bus", "store", "state"))
    with rt:
        try:
            bus = rt.connect("bus", lambda: build_bus(cfg))
            store = rt.connect("store", lambda: build_page_store(cfg))
            state = rt.connect("state", lambda: build_frontier_state(cfg))
        except Stopped:
            return 0
        worker = CrawlerWorker(cfg, bus, store, lease_check=lease_checker(state), heartbeat=rt.heartbeat.beat)
        rt.refresh = consumer_lag(bus, CONSUMER_GROUP, (TOPIC_FETCHES,))
        # Scrapy installs its own SIGTERM handler (a graceful stop) only once its
        # reactor runs; a signal that comes before reaches ours, and this passes it on.
        def relay_stop() -> None:
            rt.stop.wait()
            worker.stop()

        threading.Thread(target=relay_stop, name="stop-relay", daemon=True).start()
        # Outages during the crawl are ridden out inside the worker (its poll loop backs off).
        worker.run()
        try:
            bus.flush()
        except Exception as exc:  # the jobs stay uncommitted and are fetched again
            log.warning("crawler: could not flush the bus on the way out (%s)", exc)
    return 0


def api(backends: Backends, args: argparse.Namespace) -> int:
    """Serve the search API and web UI with gunicorn's worker processes until SIGTERM,
    then drain requests (services/api/serving.py)."""
    cfg = backends.settings
    return api_server("serve_service")(cfg)
