"""Cluster mode end to end: every service its own process, on real servers (Redis, a
Kafka-protocol broker, an S3 server, an Elasticsearch-API server), crawling the Debian
Chinese docs site; results compared with the embedded mode's."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from services.common.adapters.redis.frontier import RedisFrontierState
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from tests.cluster import DELAY, Cluster, cluster_env, unranked_documents
from tests.servers.net import wait_for_port

from .conftest import check_indexed_exactly_once, serve_site

pytestmark = [pytest.mark.e2e, pytest.mark.integration]


def _frontier(env: dict[str, str]) -> RedisFrontierState:
    return RedisFrontierState.from_url(env["TANSUO_STATE"])


def _index(env: dict[str, str]):
    return build_search_index(Settings(index=env["TANSUO_INDEX"]), read_only=True)


def wait_until_crawled(cluster: Cluster, expected_docs: int, timeout_s: float = 420) -> None:
    """Idle frontier, then every document indexed and ranked, stable for a few seconds."""
    frontier = _frontier(cluster.env)

    def observe() -> tuple[bool, tuple[int, int, int, int]]:
        counts = frontier.counts(time.time())
        try:
            index = _index(cluster.env)
            docs = index.count()
            idle = counts.queued == 0 and counts.leased == 0 and docs >= expected_docs
            # Only once the crawl looks over, so that the check does not load the
            # index server while the crawl runs.
            done = idle and unranked_documents(cluster.env["TANSUO_INDEX"]) == 0
        except Exception:  # the index may not exist before the first page
            docs, done = 0, False
        return done, (counts.queued, counts.leased, counts.fetched, docs)

    cluster.settle(observe, rounds=3, timeout_s=timeout_s, what="the crawl (queued, leased, fetched, docs)")


@pytest.fixture
def cluster(tmp_path, redis_server, kafka_broker, s3_endpoint, es_url) -> Iterator[Cluster]:
    c = Cluster(cluster_env(tmp_path, redis_server, kafka_broker, s3_endpoint, es_url), tmp_path)
    yield c
    c.stop()


def _start_services(cluster: Cluster, crawlers: int) -> None:
    """Every service at once, as an orchestrator starts them: none waits for another."""
    cluster.start("scheduler", "scheduler", wait=False)
    for n in range(crawlers):
        cluster.start(f"crawler{n}", "crawler", wait=False)
    cluster.start("extractor", "extractor", wait=False)  # the site's text files are documents
    cluster.start("indexer", "indexer", wait=False)
    cluster.start("ranker", "ranker", wait=False)
    cluster.start("api", "api", "--host", "127.0.0.1", wait=False)
    for name, proc in cluster.procs.items():
        wait_for_port(proc.health_port, proc, timeout_s=60)  # type: ignore[attr-defined]
        cluster.ready(name)


def test_the_cluster_crawls_the_docs_site_like_embedded_mode_though_a_crawler_is_killed(
    cluster, site_copy, embedded_reference
):
    """Four crawlers, one SIGKILLed midway and replaced: nothing is lost, no page is
    indexed twice, politeness holds, and searches answer as in embedded mode. (One
    crawl for both: each costs the suite a minute.)"""
    # The dead crawler's jobs come back when their leases expire: 10 s, not 30.
    cluster.env["TANSUO_FRONTIER_LEASE_TIMEOUT_S"] = "10"
    site = serve_site(site_copy)
    crawl_until_midway(cluster, site, crawlers=4)
    victim = cluster.procs.pop("crawler0")
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    cluster.start("crawler4", "crawler")
    wait_until_crawled(cluster, len(_index_urls(embedded_reference)))

    # Politeness held across the crawler processes, by the server's own clock.
    times = sorted(r.time for r in site.server.requests)
    gaps = [b - a for a, b in pairwise(times)]
    assert len(gaps) > 200 and min(gaps) >= DELAY, f"smallest gap {min(gaps):.4f}s"

    index = _index(cluster.env)
    check_indexed_exactly_once(site, index.urls())
    site.server.stop()
    embedded = build_search_index(Settings(data_dir=embedded_reference), read_only=True)
    _same_top_results(embedded, index, cluster.env, embedded_reference)


def _index_urls(data: Path) -> list[str]:
    return build_search_index(Settings(data_dir=data), read_only=True).urls()


def _same_top_results(embedded, clustered, env: dict[str, str], data: Path) -> None:
    """Titles and words as queries: the first result agrees for at least 90% of them and
    the top five overlap by 80% on average (BM25 statistics differ slightly between
    tantivy and Lucene on sparse fields; see test_search_index_parity)."""
    from services.search.search_service import SearchService

    titles = defaultdict(list)
    for url in embedded.urls():
        titles[embedded.get(url).title.strip()].append(url)
    # Each query costs the test server about 2 s: a dozen titles and six topics.
    queries = sorted(t for t, urls in titles.items() if t and len(urls) == 1)[:12]
    queries += ["软件包 管理", "安装 系统", "网络 配置", "apt-get", "内核 模块", "Debian 社区"]
    one = SearchService(Settings(data_dir=data), embedded)
    two = SearchService(Settings(index=env["TANSUO_INDEX"]), clustered)
    agree, overlap = 0, []
    for q in queries:
        # Each crawl served the site on its own port: compare paths.
        a = [urlsplit(r["url"]).path for r in one.search(q, size=5)["results"]]
        b = [urlsplit(r["url"]).path for r in two.search(q, size=5)["results"]]
        agree += bool(a and b and a[0] == b[0])
        overlap.append(len(set(a) & set(b)) / max(len(a), 1))
    assert agree / len(queries) >= 0.9, f"first results agree on {agree}/{len(queries)}"
    assert sum(overlap) / len(overlap) >= 0.8


def crawl_until_midway(cluster: Cluster, site, crawlers: int = 2, fetched: int = 60) -> None:
    """Start every service, seed the site and return once ``fetched`` pages are done:
    the moment fault tests break something."""
    _start_services(cluster, crawlers=crawlers)
    subprocess.run([sys.executable, "-m", "services.cli.main", "seed", site.url], env=cluster.env, check=True,
                   capture_output=True)  # fmt: skip
    wait_for_fetched(cluster, fetched)


def wait_for_fetched(cluster: Cluster, fetched: int, timeout_s: float = 120) -> None:
    frontier = _frontier(cluster.env)
    deadline = time.monotonic() + timeout_s
    while fetched_count(frontier) < fetched:
        assert time.monotonic() < deadline, cluster.log("scheduler")[-2000:]
        time.sleep(0.2)


def fetched_count(frontier: RedisFrontierState, timeout_s: float = 30) -> int:
    """Pages fetched so far, asked again while Redis cannot answer: a Redis restarted with
    its append-only file refuses commands while it loads it (BusyLoadingError)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return frontier.counts(time.time()).fetched
        except ConnectionError:
            assert time.monotonic() < deadline, "Redis did not answer again"
            time.sleep(0.2)
