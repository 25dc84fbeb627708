"""Scale-out end to end: two schedulers and two crawlers crawl 104 hosts in cluster mode,
one scheduler and one crawler are SIGKILLed midway, and every page is indexed once with
no host ever asked twice within its delay, on a single Redis and on Redis Cluster; the
indexer sends Elasticsearch at most a request per ten pages.

The hosts are loopback addresses (127.0.0.2 onwards) on one port, served by this
process (bench/sites/loopback_hosts.py, bench/sites/many_host_site.py): each server's own request
log is the politeness evidence. Four pages a host, a 0.2 s delay and 10 s leases keep
a run near a minute on two cores. Fetch to searchable is printed, not asserted: it is
a figure of the machine (bench/indexing/cluster_freshness.py, docs/benchmarks.md).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from itertools import pairwise
from pathlib import Path

import pytest

from bench.crawl.host_fetch_log import CLOCK_SLACK_S
from bench.indexing.freshness_watch import IndexWatch, fetches, freshness, round_trips
from bench.sites.loopback_hosts import LoopbackHosts
from bench.sites.many_host_site import (
    loopback_addresses,
    page_path,
    paragraphs_of,
    write_site,
)
from services.common.adapters.redis.frontier import RedisFrontierState
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from tests.cluster import Cluster, cluster_env
from tests.servers.net import wait_for_port

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

HOSTS = 104
PAGES = 4  # a front page and the pages it lists
DELAY_S = 0.2
PARTITIONS = 4  # of every topic, so of the frontier: two for each scheduler
# The requests that index pages; start-up (other) and readiness pings (count) are not.
INDEXING_ENDPOINTS = ("bulk", "search", "msearch", "mget", "get", "refresh")


@pytest.fixture(scope="module")
def paragraphs(docs_site_dir: Path) -> list[str]:
    # Stepping through 14,000 paragraphs by 7,919, no two of these 416 pages share one,
    # so none is dropped as a near-duplicate of another.
    return paragraphs_of(docs_site_dir)


@pytest.fixture(params=["redis_server", "redis_cluster"])
def cluster(request, tmp_path, kafka_broker, s3_endpoint, es_url) -> Iterator[Cluster]:
    redis = request.getfixturevalue(request.param)
    env = cluster_env(tmp_path, redis, kafka_broker, s3_endpoint, es_url) | {
        "TANSUO_BUS_PARTITIONS": str(PARTITIONS),
        "TANSUO_FRONTIER_HOST_DELAY_S": str(DELAY_S),
        # What the killed processes held comes back after this.
        "TANSUO_FRONTIER_LEASE_TIMEOUT_S": "10",
        # No /sitemap.xml probe: a quarter fewer requests, and nothing here has a sitemap.
        "TANSUO_FRONTIER_SITEMAPS": "false",
        # The product's commit interval, for the indexer's requests a page (issue 40).
        "TANSUO_INDEXER_COMMIT_INTERVAL_S": "1",
    }
    c = Cluster(env, tmp_path)
    yield c
    c.stop()


def test_two_schedulers_and_two_crawlers_crawl_104_hosts_though_one_of_each_is_killed(cluster, paragraphs, tmp_path):
    started = time.monotonic()
    with ExitStack() as stack:
        hosts = stack.enter_context(LoopbackHosts(tmp_path / "site", loopback_addresses(HOSTS)))
        write_site(tmp_path / "site", hosts.addresses, hosts.port, PAGES, paragraphs)
        pages = {f"http://{a}:{hosts.port}{page_path(n)}" for a in hosts.addresses for n in range(PAGES)}

        names = ["scheduler0", "scheduler1", "crawler0", "crawler1", "indexer"]
        for name in names:
            cluster.start(name, name.rstrip("01"), wait=False)
        for name, proc in cluster.procs.items():
            wait_for_port(proc.health_port, proc, timeout_s=60)  # type: ignore[attr-defined]
            cluster.ready(name)
        watch = stack.enter_context(IndexWatch(cluster.env["TANSUO_INDEX"], pages))
        subprocess.run([sys.executable, "-m", "services.cli.main", "seed", *hosts.front_pages()], env=cluster.env,
                       check=True, capture_output=True)  # fmt: skip

        frontier = RedisFrontierState.from_url(cluster.env["TANSUO_STATE"])
        # Midway, and once each scheduler has dispatched from its own half of the shards.
        _wait(cluster, lambda: frontier.counts(time.time()).fetched >= len(pages) // 3, "a third of the pages")
        for name in ("scheduler0", "scheduler1"):
            _wait(cluster, lambda n=name: "dispatching from 2 of 4 frontier shards" in cluster.log(n), f"{name} half")
        for victim in ("scheduler1", "crawler1"):
            proc = cluster.procs.pop(victim)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        killed_at = frontier.counts(time.time()).fetched

        def crawled() -> tuple[bool, tuple[int, int, int, int]]:
            counts = frontier.counts(time.time())
            docs = _index(cluster.env).count() if counts.queued == 0 and counts.leased == 0 and counts.fetched else 0
            return docs >= len(pages), (counts.queued, counts.leased, counts.fetched, docs)

        cluster.settle(crawled, rounds=2, timeout_s=150, what="the crawl (queued, leased, fetched, docs)")
        # The survivor takes over the dead scheduler's shards once the group notices the
        # death (the session timeout): the crawl may have ended first, when the dead
        # one's hosts had nothing left to dispatch at the kill.
        _wait(cluster, lambda: "dispatching from 4 of 4 frontier shards" in cluster.log("scheduler0"),
              "scheduler0 to take over the dead scheduler's shards")  # fmt: skip

        indexed = _index(cluster.env).urls()
        assert len(indexed) == len(set(indexed)), "a page is indexed twice"
        assert set(indexed) == pages, f"missing {sorted(pages - set(indexed))[:5]}, extra {sorted(set(indexed) - pages)[:5]}"
        # The indexer's work costs a request per ten pages at most (issue 40): a batch's
        # checks in one search, its writes and commit in one bulk request.
        trips = round_trips(cluster.procs["indexer"].health_port)  # type: ignore[attr-defined]
        assert trips.per_page(INDEXING_ENDPOINTS) <= 0.1, trips.describe()
        fresh = freshness(fetches(hosts.requests(), hosts.port), watch.first_seen, pages)

        # Politeness by the servers' own clocks: robots.txt and pages alike.
        gaps = {a: _gaps([r.time for r in log]) for a, log in hosts.requests().items()}
        closest = min((g, a) for a, host_gaps in gaps.items() for g in host_gaps)
        assert closest[0] >= DELAY_S - CLOCK_SLACK_S, f"{closest[1]} got two requests {closest[0]:.3f} s apart"
    took = time.monotonic() - started
    print(f"\n{HOSTS} hosts, {len(pages)} pages; killed after {killed_at} fetched; {took:.0f} s in all\n"
          f"{fresh.describe()}\n{trips.describe()}")  # fmt: skip


def _gaps(times: list[float]) -> list[float]:
    times = sorted(times)
    return [b - a for a, b in pairwise(times)]


def _index(env: dict[str, str]):  # a SearchIndex
    return build_search_index(Settings(index=env["TANSUO_INDEX"]), read_only=True)


def _wait(cluster: Cluster, done, what: str, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        for name, proc in cluster.procs.items():
            assert proc.poll() is None, f"{name} died: {cluster.log(name)[-3000:]}"
        assert time.monotonic() < deadline, f"waited {timeout_s:.0f} s for {what}\n{cluster.own_logs()}"
        time.sleep(0.2)
