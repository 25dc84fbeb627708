"""Cluster mode end to end: every service its own process, on real servers (Redis, a
Kafka-protocol broker, an S3 server, an Elasticsearch-API server), crawling the Debian
Chinese docs site; results compared with the embedded mode's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from services.common.adapters.frontier_redis import RedisFrontierState
from services.common.bootstrap import build_search_index
from services.common.settings import Settings
from tests.servers.net import free_port, stop_process, wait_for_port

from .conftest import check_indexed_exactly_once, serve_site

pytestmark = [pytest.mark.e2e, pytest.mark.integration]
DELAY = 0.05


@dataclass
class Cluster:
    env: dict[str, str]
    logs: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def start(self, name: str, *command: str, wait: bool = True) -> None:
        port = free_port()
        # The api serves users on its own port and /metrics, /livez, /readyz on the health port.
        env = {**self.env, "TANSUO_HEALTH_PORT": str(port), "TANSUO_API_PORT": str(free_port())}
        log = open(self.logs / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", *command], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        self.procs[name].health_port = port  # type: ignore[attr-defined]
        if wait:
            wait_for_port(port, self.procs[name], timeout_s=60)

    def ready(self, name: str, timeout_s: float = 60) -> None:
        port = self.procs[name].health_port  # type: ignore[attr-defined]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise AssertionError(f"{name} not ready: {self.log(name)[-2000:]}")

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def own_logs(self, lines: int = 15) -> str:
        """The last lines each service logged itself (client libraries' lines left out),
        for a failure message that says where a crawl got stuck."""
        parts = []
        for name in self.procs:
            own = [line[:300] for line in self.log(name).splitlines() if '"logger": "kafka' not in line]
            parts.append(f"--- {name} ---\n" + "\n".join(own[-lines:]))
        return "\n".join(parts)

    def freeze(self) -> None:
        """SIGSTOP every service: nothing is sent until ``thaw``."""
        for proc in self.procs.values():
            proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        for proc in self.procs.values():
            proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """SIGTERM to every service at once, then wait for each to drain."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            stop_process(proc, timeout_s=20)


def _env(tmp: Path, redis_server, kafka_broker, s3_endpoint, es_url: str) -> dict[str, str]:
    run = uuid.uuid4().hex[:8]
    return {
        **os.environ,
        "TANSUO_DATA_DIR": str(tmp / "data"),
        "TANSUO_BUS": f"kafka://{kafka_broker.bootstrap}?prefix=e2e{run}.",
        "TANSUO_STATE": f"{redis_server.url}?prefix=e2e{run}",
        "TANSUO_STORE": s3_endpoint.url(f"e2e{run}"),
        "TANSUO_INDEX": f"{es_url.replace('http://', 'elasticsearch://')}/e2e{run}",
        "TANSUO_INDEX_REPLICAS": "0",
        "TANSUO_BUS_SESSION_TIMEOUT_MS": "6000",
        "TANSUO_BUS_HEARTBEAT_INTERVAL_MS": "1000",
        "TANSUO_BUS_FETCH_MAX_WAIT_MS": "50",  # Tansu holds every empty fetch this long
        "TANSUO_BUS_PARTITIONS": "4",
        "TANSUO_FRONTIER_HOST_DELAY_S": str(DELAY),
        "TANSUO_FRONTIER_LEASE_TIMEOUT_S": "30",
        "TANSUO_CRAWLER_ALLOW_PRIVATE_NETWORKS": "true",
        "TANSUO_RANKER_INTERVAL_S": "2",
        "TANSUO_INDEXER_COMMIT_INTERVAL_S": "0.5",
        "TANSUO_API_TOKEN": "e2e-token",
        "TANSUO_LOG_FORMAT": "json",
    }


def _frontier(env: dict[str, str]) -> RedisFrontierState:
    return RedisFrontierState.from_url(env["TANSUO_STATE"])


def _index(env: dict[str, str]):
    return build_search_index(Settings(index=env["TANSUO_INDEX"]), read_only=True)


def wait_until_crawled(cluster: Cluster, expected_docs: int, timeout_s: float = 420) -> None:
    """Idle frontier, then every document indexed and ranked, stable for a few seconds."""
    frontier, deadline, stable = _frontier(cluster.env), time.monotonic() + timeout_s, 0
    last = None
    while time.monotonic() < deadline:
        for name, proc in cluster.procs.items():
            assert proc.poll() is None, f"{name} died: {cluster.log(name)[-3000:]}"
        counts = frontier.counts(time.time())
        try:
            index = _index(cluster.env)
            docs = index.count()
            idle = counts.queued == 0 and counts.leased == 0 and docs >= expected_docs
            # One read per document: only once the crawl looks over, so that the
            # check does not load the index server while the crawl runs.
            done = idle and all(index.get(u).pagerank > 0 for u in index.urls())
        except Exception:  # noqa: BLE001 - the index may not exist before the first page
            docs, done = 0, False
        state = (counts.queued, counts.leased, counts.fetched, docs)
        stable = stable + 1 if done and state == last else 0
        if stable >= 3:
            return
        last = state
        time.sleep(1.0)
    raise AssertionError(f"crawl did not finish: (queued, leased, fetched, docs) = {last}\n{cluster.own_logs()}")


@pytest.fixture
def cluster(tmp_path, redis_server, kafka_broker, s3_endpoint, es_url) -> Iterator[Cluster]:
    c = Cluster(_env(tmp_path, redis_server, kafka_broker, s3_endpoint, es_url), tmp_path)
    yield c
    c.stop()


def _start_services(cluster: Cluster, crawlers: int) -> None:
    """Every service at once, as an orchestrator starts them: none waits for another."""
    cluster.start("scheduler", "scheduler", wait=False)
    for n in range(crawlers):
        cluster.start(f"crawler{n}", "crawler", wait=False)
    cluster.start("indexer", "indexer", wait=False)
    cluster.start("ranker", "ranker", wait=False)
    cluster.start("api", "api", "--host", "127.0.0.1", wait=False)
    for name, proc in cluster.procs.items():
        wait_for_port(proc.health_port, proc, timeout_s=60)  # type: ignore[attr-defined]
        cluster.ready(name)


def test_the_cluster_crawls_the_docs_site_like_embedded_mode(cluster, site_copy, embedded_reference):
    site = serve_site(site_copy)
    _start_services(cluster, crawlers=4)
    seeded = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "seed", site.url], env=cluster.env, capture_output=True, text=True
    )
    assert seeded.returncode == 0, seeded.stderr
    expected = len(_index_urls(embedded_reference))
    wait_until_crawled(cluster, expected)

    # Politeness held across four crawler processes, by the server's own clock.
    times = sorted(r.time for r in site.server.requests)
    gaps = [b - a for a, b in zip(times, times[1:])]
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
    from services.api.search_service import SearchService

    titles = defaultdict(list)
    for url in embedded.urls():
        titles[embedded.get(url).title.strip()].append(url)
    queries = sorted(t for t, urls in titles.items() if t and len(urls) == 1)[:30]
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
    frontier = _frontier(cluster.env)
    deadline = time.monotonic() + 120
    while frontier.counts(time.time()).fetched < fetched:
        assert time.monotonic() < deadline, cluster.log("scheduler")[-2000:]
        time.sleep(0.2)


def test_a_crawler_killed_mid_crawl_loses_nothing(cluster, site_copy, embedded_reference):
    site = serve_site(site_copy)
    crawl_until_midway(cluster, site)
    victim = cluster.procs.pop("crawler0")
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    cluster.start("crawler2", "crawler")
    wait_until_crawled(cluster, expected_docs=len(_index_urls(embedded_reference)))
    check_indexed_exactly_once(site, _index(cluster.env).urls())
    site.server.stop()
