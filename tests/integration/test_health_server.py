"""The workers' health server: /livez follows the heartbeat, /readyz the backend pings,
/metrics is valid Prometheus exposition."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY

from services.common.runtime.health_server import (
    HealthServer,
    Heartbeat,
    Readiness,
    serve_health,
)
from tests.manual_clock import ManualClock as Clock


def get(server: HealthServer, path: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=10) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read()


def ok() -> None:
    pass


def broken() -> None:
    raise ConnectionError("kafka:9092 refused")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def healthy(clock: Clock) -> Iterator[tuple[HealthServer, Heartbeat]]:
    heartbeat = Heartbeat(stale_after_s=30, busy_limit_s=600, clock=clock)
    server = serve_health(0, "127.0.0.1", ready={"bus": ok, "index": ok}, heartbeat=heartbeat)
    yield server, heartbeat
    server.close()


def test_port_zero_picks_a_free_port_and_every_endpoint_answers(healthy: tuple[HealthServer, Heartbeat]) -> None:
    server, _ = healthy
    assert server.port > 0
    assert get(server, "/livez")[0] == 200
    assert get(server, "/readyz")[0] == 200
    assert get(server, "/metrics")[0] == 200
    assert get(server, "/nothing")[0] == 404


def test_livez_is_503_once_the_loop_stops_ticking(healthy: tuple[HealthServer, Heartbeat], clock: Clock) -> None:
    server, heartbeat = healthy
    clock.now += 29
    assert get(server, "/livez")[0] == 200
    clock.now += 2
    status, _, body = get(server, "/livez")
    assert status == 503 and json.loads(body)["status"] == "stalled"
    heartbeat.beat()
    assert get(server, "/livez")[0] == 200


def test_a_long_step_marked_busy_stays_alive_up_to_its_own_limit(
    healthy: tuple[HealthServer, Heartbeat], clock: Clock
) -> None:
    server, heartbeat = healthy
    with heartbeat.busy():
        clock.now += 500
        assert get(server, "/livez")[0] == 200
        clock.now += 200
        assert get(server, "/livez")[0] == 503
    assert get(server, "/livez")[0] == 200  # leaving the block is a tick


def test_readyz_is_503_and_names_the_backend_whose_ping_raised() -> None:
    server = serve_health(0, "127.0.0.1", ready={"bus": broken, "index": ok})
    try:
        status, content_type, body = get(server, "/readyz")
        assert get(server, "/livez")[0] == 200  # an outage is not a reason to restart
    finally:
        server.close()
    assert status == 503 and content_type == "application/json"
    answer = json.loads(body)
    assert answer["failed"] == {"bus": "ConnectionError: kafka:9092 refused"}
    assert REGISTRY.get_sample_value("tansuo_backend_up", {"backend": "bus"}) == 0
    assert REGISTRY.get_sample_value("tansuo_backend_up", {"backend": "index"}) == 1


def test_a_list_of_pings_is_named_after_their_adapters() -> None:
    class SqliteBus:
        def ping(self) -> None:
            raise OSError("database is locked")

    readiness = Readiness([SqliteBus().ping])
    assert readiness.failures() == {"SqliteBus": "OSError: database is locked"}


def test_a_hung_ping_is_reported_within_the_timeout_and_not_started_twice() -> None:
    release = threading.Event()
    calls: list[int] = []

    def hangs() -> None:
        calls.append(1)
        release.wait(30)

    readiness = Readiness({"state": hangs}, timeout_s=0.2)
    try:
        assert "no answer within 0.2 s" in readiness.failures()["state"]
        assert "has not answered yet" in readiness.failures()["state"]
        assert len(calls) == 1
    finally:
        release.set()


def test_a_check_added_while_serving_is_used_from_then_on() -> None:
    readiness = Readiness({"index": broken})
    server = serve_health(0, "127.0.0.1", ready=readiness)
    try:
        assert get(server, "/readyz")[0] == 503
        readiness.set("index", ok)
        assert get(server, "/readyz")[0] == 200
    finally:
        server.close()


def test_metrics_are_prometheus_text_with_the_catalog_names(healthy: tuple[HealthServer, Heartbeat]) -> None:
    server, _ = healthy
    get(server, "/readyz")  # sets tansuo_backend_up
    status, content_type, body = get(server, "/metrics")
    text = body.decode()
    assert status == 200 and content_type == CONTENT_TYPE_LATEST
    for name in ("tansuo_backend_up", "tansuo_errors_total", "tansuo_pages_indexed_total", "process_cpu_seconds_total"):
        assert f"# TYPE {name}" in text or f"# HELP {name}" in text, name
    if shutil.which("promtool") is None:
        pytest.skip("promtool is not installed (apt-get install prometheus): exposition format not linted")
    # Exit 0 means no format error and no lint finding (naming, units, help text).
    lint = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, timeout=30)
    assert lint.returncode == 0, (lint.stdout + lint.stderr).decode()


def test_close_frees_the_port() -> None:
    server = serve_health(0, "127.0.0.1")
    port = server.port
    server.close()
    again = serve_health(port, "127.0.0.1")
    again.close()
