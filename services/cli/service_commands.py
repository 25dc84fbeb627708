"""`tansuo scheduler|crawler|indexer|ranker|api`: each service as its own process.

Every one has the same shape (services/cli/service_runtime.py): adapters from
bootstrap, health endpoints, a loop until SIGTERM, then a drain. Backends come from
TANSUO_BUS, TANSUO_STATE, TANSUO_STORE and TANSUO_INDEX; empty means embedded.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from collections.abc import Callable, Sequence

from services.cli.service_runtime import (
    LoopBody,
    ServiceRuntime,
    Stopped,
)
from services.common.bootstrap import (
    build_bus,
    build_frontier_state,
    build_link_graph,
    build_page_store,
    build_search_index,
)
from services.common.config import Settings
from services.common.domain.messages import (
    TOPIC_FETCHES,
    TOPIC_INDEXED,
    TOPIC_LINKS,
    TOPIC_PAGES,
    TOPIC_REMOVALS,
    TOPIC_SEEDS,
)
from services.common.ports import Bus
from services.common.runtime.metrics import CONSUMER_LAG, SEARCH_REQUESTS

log = logging.getLogger(__name__)

# One second: SIGTERM is noticed well inside Kubernetes' grace period.
POLL_TIMEOUT_S = 1.0
# How long an API worker waits for its index before it starts serving anyway.
API_CONNECT_BEFORE_SERVING_S = 5.0


def consumer_lag(bus: Bus, group: str, topics: Sequence[str]) -> Callable[[], None]:
    """A refresh that sets ``tansuo_consumer_lag_messages`` for ``group`` on ``topics``."""

    def refresh() -> None:
        for topic in topics:
            CONSUMER_LAG.labels(topic=topic, group=group).set(bus.pending(topic, group))

    return refresh


def scheduler(cfg: Settings, args: argparse.Namespace) -> int:
    """Continuous crawling: admit links and outcomes, dispatch due jobs, sweep recrawls."""
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


def indexer(cfg: Settings, args: argparse.Namespace) -> int:
    """Page events in, documents out; on stop, commit the batch held."""
    from services.indexer.indexer import GROUP, Indexer

    rt = ServiceRuntime(cfg, "indexer", backends=("bus", "index"))

    def open_body() -> LoopBody:
        bus = rt.connect("bus", lambda: build_bus(cfg))
        index = rt.connect("index", lambda: build_search_index(cfg))
        ix = Indexer(cfg, bus, index)

        def drain() -> None:
            ix.flush()
            log.info("indexer drained: %s indexed, %s duplicates, %s deleted", ix.indexed, ix.duplicates, ix.deleted)

        return LoopBody(
            step=lambda: ix.step(POLL_TIMEOUT_S),
            drain=drain,
            refresh=consumer_lag(bus, GROUP, (TOPIC_PAGES, TOPIC_REMOVALS)),
        )

    with rt:
        return rt.supervise(open_body)


def ranker(cfg: Settings, args: argparse.Namespace) -> int:
    """Links in, PageRank out every ``ranker_interval_s``; on stop, rank once more if needed."""
    from services.ranker.ranker import GROUP, Ranker

    rt = ServiceRuntime(cfg, "ranker", backends=("bus", "graph", "index"))

    def open_body() -> LoopBody:
        bus = rt.connect("bus", lambda: build_bus(cfg))
        graph = rt.connect("graph", lambda: build_link_graph(cfg))
        index = rt.connect("index", lambda: build_search_index(cfg))
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


def crawler(cfg: Settings, args: argparse.Namespace) -> int:
    """Fetch jobs until SIGTERM; Scrapy then finishes the fetches in flight, and jobs
    not started stay uncommitted, so they come back to another crawler."""
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
        threading.Thread(target=lambda: rt.stop.wait() and worker.stop(), name="stop-relay", daemon=True).start()
        # Outages during the crawl are ridden out inside the worker (its poll loop backs off).
        worker.run()
        try:
            bus.flush()
        except Exception as exc:  # the jobs stay uncommitted and are fetched again
            log.warning("crawler: could not flush the bus on the way out (%s)", exc)
    return 0


def api(cfg: Settings, args: argparse.Namespace) -> int:
    """Serve the search API and web UI with gunicorn's worker processes until SIGTERM,
    then drain requests (services/common/runtime/http/gunicorn_server.py).

    Each worker waits up to API_CONNECT_BEFORE_SERVING_S for its index, then serves
    and goes on connecting in the background; until connected, /readyz and searches
    answer 503 rather than the process crash-looping.
    """
    from services.common.runtime.http import gunicorn_server

    for outcome in ("ok", "bad_request", "error"):
        SEARCH_REQUESTS.labels(outcome=outcome)  # exported at 0, so rate() has a series from the start
    return gunicorn_server.run(lambda: api_worker_app(cfg), gunicorn_server.ServerOptions.from_settings(cfg), "api")


def api_worker_app(cfg: Settings):  # type: ignore[no-untyped-def]  # a Flask app
    """The app of one API worker process, its index connected in the background."""
    from services.api.app import create_app
    from services.common.runtime.http import gunicorn_server
    from services.common.runtime.readiness_cache import CachedReadiness
    from services.search.pending_index import PendingSearchIndex

    rt = ServiceRuntime(cfg, "api", backends=("index",), serve_health_endpoints=False, handle_signals=False)
    rt.__enter__()
    index = PendingSearchIndex()
    app = create_app(cfg, index=index)
    app.extensions["tansuo.readiness"] = CachedReadiness(rt.readiness)  # names the last connection error

    def connect() -> None:
        try:
            index.attach(rt.connect("index", lambda: build_search_index(cfg, read_only=True)))
        except Stopped:
            pass
        except Exception:  # a bad TANSUO_INDEX: no retry makes it right, so the server stops
            log.exception("api: cannot open the search index; stopping")
            os.kill(os.getppid(), signal.SIGTERM)

    def stop() -> None:
        rt.stop.set()
        rt.close_backends()

    connecting = threading.Thread(target=connect, name="index-connect", daemon=True)
    connecting.start()
    gunicorn_server.on_worker_exit(stop)
    # Wait a little for the index before serving: every worker of a healthy start is
    # ready from its first request (readiness is each worker's own); an index that
    # takes longer is connected in the background while the worker answers 503.
    connecting.join(API_CONNECT_BEFORE_SERVING_S)
    return app
