"""The API's request ids, /metrics and search counters, and its answer while the
index is still being connected."""

from __future__ import annotations

import time
import urllib.request

import pytest
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY

from services.api.app import create_app
from services.common.config import Settings
from services.common.domain.search_types import SearchHits, SearchQuery
from services.common.runtime.http.metrics_port import serve_metrics_port
from services.search.pending_index import PendingSearchIndex


class EmptyIndex:
    def search(self, query: SearchQuery) -> SearchHits:
        return SearchHits(total=0, hits=[])

    def ping(self) -> None:
        pass

    def sites(self) -> list[str]:
        return []

    def term_stats(self, terms):  # type: ignore[no-untyped-def]
        return 0, [0] * len(terms)

    def count(self) -> int:
        return 0

    def view_version(self) -> None:
        return None


def outcome(name: str) -> float:
    return REGISTRY.get_sample_value("tansuo_search_requests_total", {"outcome": name}) or 0.0


def test_a_caller_s_request_id_is_echoed_and_a_bad_one_replaced() -> None:
    client = create_app(Settings(), index=EmptyIndex()).test_client()  # type: ignore[arg-type]
    assert client.get("/livez", headers={"X-Request-ID": "lb-7f3a"}).headers["X-Request-ID"] == "lb-7f3a"
    replaced = client.get("/livez", headers={"X-Request-ID": "id with spaces; and \"quotes\""}).headers["X-Request-ID"]
    assert len(replaced) == 32  # a new id: the given one could smuggle text into the logs
    assert client.get("/livez").headers["X-Request-ID"] != client.get("/livez").headers["X-Request-ID"]


def test_searches_are_counted_by_outcome_and_timed() -> None:
    client = create_app(Settings(), index=EmptyIndex()).test_client()  # type: ignore[arg-type]
    ok, bad = outcome("ok"), outcome("bad_request")
    timed = REGISTRY.get_sample_value("tansuo_search_duration_seconds_count") or 0.0
    assert client.get("/api/search?q=网络").status_code == 200
    assert client.get("/api/search?q=").status_code == 400
    assert outcome("ok") == ok + 1 and outcome("bad_request") == bad + 1
    assert REGISTRY.get_sample_value("tansuo_search_duration_seconds_count") == timed + 1


def test_metrics_are_served_on_the_health_port_in_prometheus_format_not_by_the_app() -> None:
    client = create_app(Settings(), index=EmptyIndex()).test_client()  # type: ignore[arg-type]
    assert client.get("/metrics").status_code == 404
    server = serve_metrics_port("127.0.0.1", 0, required=True)
    assert server is not None
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=10) as resp:
            assert resp.headers["Content-Type"] == CONTENT_TYPE_LATEST
            assert "# TYPE tansuo_search_requests_total counter" in resp.read().decode()
    finally:
        server.close()


def test_a_taken_metrics_port_stops_tansuo_api_but_not_tansuo_serve() -> None:
    first = serve_metrics_port("127.0.0.1", 0, required=True)
    assert first is not None
    try:
        assert serve_metrics_port("127.0.0.1", first.port, required=False) is None
        with pytest.raises(OSError):
            serve_metrics_port("127.0.0.1", first.port, required=True)
    finally:
        first.close()


def test_while_the_index_is_connecting_searches_and_readyz_are_503_then_work() -> None:
    pending = PendingSearchIndex()
    client = create_app(Settings(), index=pending).test_client()  # type: ignore[arg-type]
    errors = outcome("error")
    resp = client.get("/api/search?q=网络")
    assert resp.status_code == 503 and "not reachable" in resp.get_json()["error"]
    assert outcome("error") == errors + 1
    assert client.get("/?q=网络").status_code == 503
    ready = client.get("/readyz")
    assert ready.status_code == 503 and "not connected" in ready.get_json()["failed"]["index"]
    assert client.get("/livez").status_code == 200
    pending.attach(EmptyIndex())  # type: ignore[arg-type]
    assert client.get("/api/search?q=网络").status_code == 200
    # /readyz answers from a background check, refreshed every second: ready soon after.
    deadline = time.monotonic() + 30
    while client.get("/readyz").get_json() != {"status": "ready"}:
        assert time.monotonic() < deadline, client.get("/readyz").get_json()
        time.sleep(0.05)
