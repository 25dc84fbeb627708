"""The Elasticsearch-API server frozen mid-crawl (SIGSTOP) and thawed (SIGCONT): the
indexer waits, then catches up; every page is indexed once, and its lag falls back to
the commit interval while the crawl goes on (issue 40).

A server of its own, so that no other test meets it frozen. The many-host site
(bench/sites/many_host_site.py) gives a known set of pages and a crawl paced by the
per-host delay, long enough to go on after the thaw; the indexer's lag is read from
its /metrics every 0.2 s.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from bench.indexing.freshness_watch import fetches, gauge, round_trips
from bench.sites.loopback_hosts import LoopbackHosts
from bench.sites.many_host_site import loopback_addresses, page_path, paragraphs_of, write_site
from services.common.adapters.redis.frontier import RedisFrontierState
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.ports import SearchIndex
from tests.cluster import Cluster, cluster_env
from tests.servers.es_server import EsServer

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

HOSTS = 20
PAGES = 30  # a host's pages take at least PAGES * DELAY_S = 15 s: the crawl outlasts the stop
DELAY_S = 0.5
STOP_S = 5.0
INTERVAL_S = 0.5  # the commit interval (tests/cluster.py sets it)
# What the lag may exceed the interval by once caught up: the page's trip from its
# fetch through the page store and the bus to the indexer, on a busy machine.
TRANSIT_S = 2.0


class LagSamples:
    """The indexer's tansuo_indexer_lag_seconds, read every 0.2 s on a thread."""

    def __init__(self, health_port: int) -> None:
        self.port = health_port
        self.samples: list[tuple[float, float]] = []  # (monotonic time, lag)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lag-samples", daemon=True)

    def __enter__(self) -> LagSamples:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                lag = gauge(self.port, "tansuo_indexer_lag_seconds")
            except OSError:
                continue
            if lag is not None:
                self.samples.append((time.monotonic(), lag))

    def between(self, start: float, end: float) -> list[float]:
        return [lag for t, lag in self.samples if start <= t <= end]


@pytest.fixture
def es_server(tmp_path: Path) -> Iterator[EsServer]:
    server = EsServer(tmp_path / "noida-db")
    server.start()
    yield server
    assert server.proc is not None
    server.proc.send_signal(signal.SIGCONT)  # however the test ended, so that it can stop
    server.stop()


@pytest.fixture
def paragraphs(docs_site_dir: Path) -> list[str]:
    return paragraphs_of(docs_site_dir)


def test_the_index_server_frozen_mid_crawl_loses_nothing_and_the_lag_falls_back(
    tmp_path, paragraphs, redis_server, kafka_broker, s3_endpoint, es_server
) -> None:  # fmt: skip
    env = cluster_env(tmp_path, redis_server, kafka_broker, s3_endpoint, es_server.url) | {
        "TANSUO_FRONTIER_HOST_DELAY_S": str(DELAY_S),
        "TANSUO_FRONTIER_SITEMAPS": "false",
        "TANSUO_INDEXER_COMMIT_INTERVAL_S": str(INTERVAL_S),
    }
    assert es_server.proc is not None
    with ExitStack() as stack:
        hosts = stack.enter_context(LoopbackHosts(tmp_path / "site", loopback_addresses(HOSTS)))
        write_site(tmp_path / "site", hosts.addresses, hosts.port, PAGES, paragraphs)
        pages = {f"http://{a}:{hosts.port}{page_path(n)}" for a in hosts.addresses for n in range(PAGES)}
        cluster = Cluster(env, tmp_path)
        stack.callback(cluster.stop)
        for name in ("scheduler", "crawler", "indexer"):
            cluster.start(name, name)
        for name in cluster.procs:
            cluster.ready(name)
        lags = stack.enter_context(LagSamples(cluster.procs["indexer"].health_port))  # type: ignore[attr-defined]
        subprocess.run([sys.executable, "-m", "services.cli.main", "seed", *hosts.front_pages()], env=env,
                       check=True, capture_output=True)  # fmt: skip
        frontier = RedisFrontierState.from_url(env["TANSUO_STATE"])
        _wait(cluster, lambda: frontier.counts(time.time()).fetched >= len(pages) // 5, "a fifth of the pages")

        es_server.proc.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        time.sleep(STOP_S)
        es_server.proc.send_signal(signal.SIGCONT)
        resumed = time.monotonic()
        fetched_at_thaw = frontier.counts(time.time()).fetched

        def crawled() -> tuple[bool, tuple[int, int, int]]:
            counts = frontier.counts(time.time())
            docs = _index(env).count() if counts.queued == 0 and counts.leased == 0 else 0
            return docs >= len(pages), (counts.queued, counts.leased, docs)

        cluster.settle(crawled, rounds=2, timeout_s=120, what="the crawl (queued, leased, docs)")
        indexer_port = cluster.procs["indexer"].health_port  # type: ignore[attr-defined]
        trips = round_trips(indexer_port)
        last_fetch = max(t for times in fetches(hosts.requests(), hosts.port).values() for t in times)

    indexed = _index(env).urls()
    assert len(indexed) == len(set(indexed)) and set(indexed) == pages
    # Written once each: no batch was written twice around the stop (nor replayed).
    assert trips.pages == len(pages), trips.describe()
    assert fetched_at_thaw < len(pages), "the crawl ended during the stop: nothing to fall back on"

    # The stop was felt: pages waited through it...
    worst = max(lags.between(stopped, resumed + 1.0), default=0.0)
    assert worst >= STOP_S - 1.0, lags.samples
    # ...and once caught up, with pages still coming, they waited no longer than the
    # interval (plus their trip to the indexer) again.
    after = [(t, lag) for t, lag in lags.samples if t > resumed]
    fresh = [t for t, lag in after if t < last_fetch - 1.0 and 0 < lag <= INTERVAL_S + TRANSIT_S]
    seen = [(round(t - resumed, 1), lag) for t, lag in after]
    assert fresh, f"the lag never fell back while the crawl went on (s after the thaw, lag): {seen}"
    print(f"\n{len(pages)} pages; index server stopped {STOP_S:.0f} s, thawed at {fetched_at_thaw} fetches; lag up to "
          f"{worst:.1f} s, back within {INTERVAL_S + TRANSIT_S:.1f} s {fresh[0] - resumed:.1f} s after the thaw; "
          f"{trips.describe()}")  # fmt: skip


def _index(env: dict[str, str]) -> SearchIndex:
    return build_search_index(Settings(index=env["TANSUO_INDEX"]), read_only=True)


def _wait(cluster: Cluster, done: Callable[[], bool], what: str, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        for name, proc in cluster.procs.items():
            assert proc.poll() is None, f"{name} died: {cluster.log(name)[-3000:]}"
        assert time.monotonic() < deadline, f"waited {timeout_s:.0f} s for {what}\n{cluster.own_logs()}"
        time.sleep(0.1)
