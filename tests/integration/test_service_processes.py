"""`tansuo <service>` as real processes on the embedded backends: each starts, answers
its health endpoints with the catalog's metrics, and exits 0 soon after SIGTERM; with
its backend unreachable it stays up, says why, and is not ready.

The embedded SQLite bus is one process's, so each service runs alone here; the whole
pipeline of processes is the e2e tests' job, on the cluster backends.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from tests.servers.net import free_port, stop_process

# What a dashboard may ask of each service: metric families, and series that must
# exist from the start (so that rate() and absent() work before the first event).
SERVICE_METRICS: dict[str, tuple[list[str], list[str]]] = {
    "scheduler": (
        ["tansuo_frontier_urls", "tansuo_frontier_due_urls", "tansuo_frontier_hosts", "tansuo_frontier_blocked_hosts",
         "tansuo_fetch_jobs_dispatched_total", "tansuo_robots_blocked_total", "tansuo_politeness_wait_seconds",
         "tansuo_pages_removed_total", "tansuo_consumer_lag_messages", "tansuo_backend_up", "tansuo_errors_total"],
        ['tansuo_frontier_urls{state="queued"}', 'tansuo_consumer_lag_messages{group="scheduler",topic="pages.fetched"}',
         'tansuo_backend_up{backend="state"} 1.0', 'tansuo_errors_total{kind="step_failed",service="scheduler"}'],
    ),
    "indexer": (
        ["tansuo_pages_indexed_total", "tansuo_documents_deleted_total", "tansuo_duplicates_total",
         "tansuo_indexing_latency_seconds", "tansuo_consumer_lag_messages", "tansuo_backend_up", "tansuo_errors_total"],
        ['tansuo_consumer_lag_messages{group="indexer",topic="pages.fetched"}', 'tansuo_backend_up{backend="index"} 1.0'],
    ),
    "ranker": (
        ["tansuo_pagerank_duration_seconds", "tansuo_pagerank_graph_nodes", "tansuo_pagerank_graph_edges",
         "tansuo_consumer_lag_messages", "tansuo_backend_up", "tansuo_errors_total"],
        ['tansuo_consumer_lag_messages{group="ranker",topic="links.discovered"}', 'tansuo_backend_up{backend="graph"} 1.0'],
    ),
    "crawler": (
        ["tansuo_pages_fetched_total", "tansuo_fetch_duration_seconds", "tansuo_fetched_bytes_total",
         "tansuo_crawler_in_flight", "tansuo_crawler_stale_jobs_total", "tansuo_consumer_lag_messages",
         "tansuo_backend_up", "tansuo_errors_total"],
        ['tansuo_consumer_lag_messages{group="crawler",topic="fetches.scheduled"}', 'tansuo_backend_up{backend="store"} 1.0'],
    ),
    "api": (
        ["tansuo_search_duration_seconds", "tansuo_search_requests_total", "tansuo_backend_up", "tansuo_errors_total"],
        ['tansuo_search_requests_total{outcome="ok"}', 'tansuo_search_requests_total{outcome="bad_request"}'],
    ),
}  # fmt: skip


@dataclass
class Service:
    name: str
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path
    health_port: int  # the API's /metrics; the same as ``port`` for the other services

    def get(self, path: str, port: int | None = None) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port or self.port}{path}", timeout=10) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def metrics(self) -> tuple[int, bytes]:
        """/metrics, on the health port: the API serves it there, not beside the API."""
        return self.get("/metrics", self.health_port)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_until(self, what: str, ok: Callable[[], bool], timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"{self.name} exited with {self.proc.returncode}:\n{self.log()}"
            try:
                if ok():
                    return
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"{self.name}: {what} not within {timeout_s} s:\n{self.log()}")

    def terminate(self) -> float:
        """SIGTERM; seconds until it exited."""
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(15)
        return time.monotonic() - started


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Service]]:
    started: list[Service] = []

    def run(name: str, **env: str) -> Service:
        port = free_port()
        health_port = free_port() if name == "api" else port
        base = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}  # embedded unless told
        base.update(
            TANSUO_DATA_DIR=str(tmp_path / "data"),
            TANSUO_HEALTH_HOST="127.0.0.1",
            TANSUO_HEALTH_PORT=str(health_port),
            TANSUO_API_HOST="127.0.0.1",
            TANSUO_API_PORT=str(port),
            TANSUO_LOG_FORMAT="json",
        )
        base.update(env)
        log_path = tmp_path / f"{name}.log"
        with log_path.open("wb") as log_file:
            proc = subprocess.Popen(
                [sys.executable, "-m", "services.cli.main", name], env=base, stdout=log_file, stderr=subprocess.STDOUT
            )
        service = Service(name, proc, port, log_path, health_port)
        started.append(service)
        service.wait_until("/livez", lambda: service.get("/livez")[0] == 200)
        return service

    yield run
    for service in started:
        stop_process(service.proc)


def make_index(data_dir: Path) -> None:
    """An empty index, as the indexer leaves it: the API only opens one read-only."""
    TantivySearchIndex(data_dir / "index", Settings(data_dir=data_dir)).close()


@pytest.mark.parametrize("name", list(SERVICE_METRICS))
def test_a_service_starts_answers_its_probes_and_stops_on_sigterm(
    name: str, start: Callable[..., Service], tmp_path: Path
) -> None:
    if name == "api":
        make_index(tmp_path / "data")
    service = start(name)
    answers: list[tuple[int, bytes]] = []
    service.wait_until("/readyz 200", lambda: answers.append(service.get("/readyz")[:2]) or answers[-1][0] == 200)
    assert json.loads(answers[-1][1]) == {"status": "ready"}
    families, series = SERVICE_METRICS[name]
    service.wait_until("every expected series", lambda: all(s in service.metrics()[1].decode() for s in series))
    metrics = service.metrics()[1].decode()
    for family in families:
        assert f"# TYPE {family.removesuffix('_total')}" in metrics or f"# TYPE {family}" in metrics, family

    assert service.terminate() < 10
    assert service.proc.returncode == 0, service.log()
    lines = [json.loads(line) for line in service.log().splitlines() if line.startswith("{")]
    assert any(e["service"] == name and "connected" in e["message"] for e in lines if e["logger"] != "scrapy")
    assert lines[-1]["message"] == f"{name} stopped"


def test_the_api_gives_every_response_a_request_id(
    start: Callable[..., Service], tmp_path: Path
) -> None:
    make_index(tmp_path / "data")
    service = start("api")
    service.wait_until("/readyz 200", lambda: service.get("/readyz")[0] == 200)
    request = urllib.request.Request(
        f"http://127.0.0.1:{service.port}/api/search?q=%E7%BD%91%E7%BB%9C", headers={"X-Request-ID": "trace-42"}
    )
    with urllib.request.urlopen(request, timeout=30) as resp:
        assert resp.headers["X-Request-ID"] == "trace-42"
    with urllib.request.urlopen(f"http://127.0.0.1:{service.port}/livez", timeout=10) as resp:
        assert len(resp.headers["X-Request-ID"]) == 32  # a new uuid when none was given
    assert 'tansuo_search_requests_total{outcome="ok"} 1.0' in service.metrics()[1].decode()
    service.terminate()


@pytest.mark.parametrize("name", ["indexer", "api"])
def test_with_the_index_unreachable_a_service_stays_up_says_why_and_is_not_ready(
    name: str, start: Callable[..., Service]
) -> None:
    service = start(name, TANSUO_INDEX="elasticsearch://127.0.0.1:1/tansuo")
    status, body = service.get("/readyz")
    assert status == 503 and "index" in json.loads(body)["failed"]
    # Two failed attempts, one log line each, and the process still up between them.
    service.wait_until(
        "two retry lines",
        lambda: service.log().count("index backend (elasticsearch://127.0.0.1:1/tansuo) unavailable") >= 2,
    )
    assert service.proc.poll() is None
    assert service.get("/livez")[0] == 200  # an outage is not a reason to restart
    assert service.get("/readyz")[0] == 503
    retries = [json.loads(line) for line in service.log().splitlines() if "retrying in" in line]
    assert retries[0]["backend"] == "index backend (elasticsearch://127.0.0.1:1/tansuo)"
    assert "Connection" in retries[0]["error"] and "exception" not in retries[0]
    if name == "api":
        status, body = service.get("/api/search?q=test")
        assert status == 503 and "not reachable" in json.loads(body)["error"]
        service.wait_until("the request's log line", lambda: "/api/search" in service.log())
        logged = [json.loads(line) for line in service.log().splitlines() if "/api/search" in line]
        assert len(logged[0]["request_id"]) == 32  # log lines of a request carry its id
    assert service.terminate() < 10
    assert service.proc.returncode == 0, service.log()


def test_a_bad_backend_setting_fails_at_once_with_one_clear_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
    env.update(TANSUO_DATA_DIR=str(tmp_path), TANSUO_HEALTH_PORT="0", TANSUO_BUS="kafak://broker:9092")
    done = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "indexer"], env=env, capture_output=True, timeout=60, text=True
    )
    assert done.returncode == 2
    assert "tansuo indexer: error: TANSUO_BUS: unknown scheme 'kafak'" in done.stderr


def _dashboard_metrics() -> set[str]:
    """Every tansuo_* metric family that a dashboard panel's query names."""
    names: set[str] = set()
    for path in (Path(__file__).parents[2] / "deploy/grafana/dashboards").glob("*.json"):
        for expr in re.findall(r'"expr":\s*"((?:[^"\\]|\\.)*)"', path.read_text(encoding="utf-8")):
            for name in re.findall(r"\btansuo_\w+", expr):
                names.add(re.sub(r"_(bucket|sum|count)$", "", name))
    return names


def test_every_dashboard_metric_is_exported_by_a_running_service(
    start: Callable[..., Service], tmp_path: Path
) -> None:
    """Also: every service's /metrics passes `promtool check metrics`."""
    make_index(tmp_path / "data")
    promtool = shutil.which("promtool")
    exported: set[str] = set()
    wanted = _dashboard_metrics()
    assert len(wanted) > 10
    for name in SERVICE_METRICS:
        service = start(name)
        service.wait_until("/metrics", lambda: service.metrics()[0] == 200)
        text = service.metrics()[1].decode()
        if promtool:
            lint = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
            assert lint.returncode == 0, f"{name}: {lint.stdout}{lint.stderr}"
        exported |= {m.removesuffix("_total") for m in re.findall(r"^# TYPE (tansuo_\w+)", text, re.M)}
        exported |= set(re.findall(r"^(tansuo_\w+?)(?:_bucket|_sum|_count)?[{ ]", text, re.M))
        service.terminate()
    missing = {m for m in wanted if m not in exported and m.removesuffix("_total") not in exported}
    assert not missing, f"dashboards query metrics no service exports: {sorted(missing)}"
