"""A cluster of Tansuo services, each its own process (``python -m services.cli.main``),
on real servers: what the cluster end-to-end tests and ``bench/cluster/cluster_parity.py`` run.

Kept out of the test modules so that the benchmark starts services exactly as the
tests do, from one definition.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from tests.servers.net import free_port, stop_process, wait_for_http_ok, wait_for_port

T = TypeVar("T")
DELAY = 0.05  # seconds between two requests to one host


@dataclass
class Cluster:
    env: dict[str, str]
    logs: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def start(self, name: str, *command: str, wait: bool = True) -> None:
        port = free_port()
        # The api serves users on its own port and /metrics, /livez, /readyz on the health port.
        env = {**self.env, "TANSUO_HEALTH_PORT": str(port), "TANSUO_API_PORT": str(free_port())}
        log = open(self.logs / f"{name}.log", "w")  # closed with the process
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", *command], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        self.procs[name].health_port = port  # type: ignore[attr-defined]
        if wait:
            wait_for_port(port, self.procs[name], timeout_s=60)

    def ready(self, name: str, timeout_s: float = 60) -> None:
        port = self.procs[name].health_port  # type: ignore[attr-defined]
        wait_for_http_ok(f"http://127.0.0.1:{port}/readyz", self.procs[name], timeout_s, request_timeout_s=5,
                         interval_s=0.3, why=lambda: f"{name} not ready: {self.log(name)[-2000:]}")  # fmt: skip

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def settle(self, observe: Callable[[], tuple[bool, T]], rounds: int, timeout_s: float, what: str) -> T:
        """Poll ``observe`` (done?, what it saw) once a second until it is done and has
        seen the same thing ``rounds`` times in a row; every service must stay up."""
        deadline, last, stable = time.monotonic() + timeout_s, None, 0
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                assert proc.poll() is None, f"{name} died: {self.log(name)[-3000:]}"
            done, seen = observe()
            stable = stable + 1 if done and seen == last else 0
            if stable >= rounds:
                return seen
            last = seen
            time.sleep(1.0)
        raise AssertionError(f"{what} did not settle: last seen {str(last)[:300]}\n{self.own_logs()}")

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


def cluster_env(tmp: Path, redis_server, kafka_broker, s3_endpoint, es_url: str) -> dict[str, str]:
    """The environment of every service of one cluster: its own prefix, topic prefix,
    bucket and index alias on shared servers, and short timings so that a test (or a
    benchmark) sees a killed crawler's leases and a ranker run within seconds."""
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
        "TANSUO_API_TOKEN": "e2e-token-0123456789",
        "TANSUO_LOG_FORMAT": "json",
    }


def unranked_documents(index_url: str) -> int:
    """Documents of a cluster's Elasticsearch index without PageRank yet, in one count
    request: reading each document back costs the test server tens of milliseconds a
    page, which made waiting for a 250-page crawl to settle take a minute."""
    from elasticsearch import Elasticsearch

    endpoint, alias = index_url.replace("elasticsearch://", "http://", 1).rsplit("/", 1)
    with Elasticsearch(endpoint) as es:
        es.indices.refresh(index=alias)
        query = {"bool": {"must_not": [{"range": {"pagerank": {"gt": 0}}}]}}
        return int(es.count(index=alias, query=query)["count"])
