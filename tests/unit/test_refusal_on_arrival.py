"""Which requests the API's poller thread may refuse without queueing them, what it
sends, and the wait estimate that decides (services/common/runtime/http/)."""

from __future__ import annotations

import json

from services.common.runtime.http.admission import refusal
from services.common.runtime.http.bounded_worker import refusable
from services.common.runtime.http.drain_estimate import DrainEstimate
from services.common.runtime.http.request_framing import Complete, frame
from tests.manual_clock import ManualClock


def _head(data: bytes):  # type: ignore[no-untyped-def]
    framing = frame(data)
    assert isinstance(framing, Complete), framing
    return framing.head


def test_a_whole_get_is_refusable_and_keeps_its_connection_by_http_version() -> None:
    assert refusable(_head(b"GET /api/search?q=x HTTP/1.1\r\nHost: a\r\n\r\n"))
    assert _head(b"GET /api/search?q=x HTTP/1.1\r\nHost: a\r\n\r\n").keep_alive
    assert not _head(b"GET /api/search?q=x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").keep_alive
    assert not _head(b"GET / HTTP/1.0\r\n\r\n").keep_alive
    assert _head(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive


def test_probes_and_requests_with_a_body_are_never_refused_on_arrival() -> None:
    for data in (
        b"GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /livez?x=1 HTTP/1.1\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\n\r\n",
        b"POST /api/seeds HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
        b"POST /api/seeds HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    ):
        assert not refusable(_head(data)), data


def test_the_refusal_is_a_503_with_retry_after_and_a_json_error() -> None:
    head, _, body = refusal(1, 2.0, keep_alive=True).partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 503 Service Unavailable"
    assert "Retry-After: 1" in lines and "Connection: keep-alive" in lines
    assert f"Content-Length: {len(body)}" in lines
    answer = json.loads(body)
    assert "busy" in answer["error"] and "retry in 1 s" in answer["error"] and answer["retry_after_s"] == 1


def test_the_wait_is_the_requests_waiting_times_the_time_a_request_holds_a_thread() -> None:
    clock = ManualClock()
    drain = DrainEstimate(cap_s=2.0, weight=1.0, clock=clock)
    assert drain.wait_s(100, 8) == 0.0  # nothing measured yet: never refuse on a guess
    drain.observe(0.08)
    assert drain.wait_s(100, 8) == 100 * 0.08 / 8
    assert drain.wait_s(0, 8) == 0.0  # nobody waiting: no wait, however slow a request is


def test_one_slow_request_cannot_carry_the_estimate_past_the_deadline() -> None:
    """A search that held its thread for a minute counts as the deadline, so that with
    fewer requests waiting than threads the estimate stays under the deadline."""
    drain = DrainEstimate(cap_s=2.0, clock=ManualClock())
    drain.observe(60.0)
    assert drain.mean_s <= 0.05 * 2.0
    assert drain.wait_s(7, 8) < 2.0


def test_the_estimate_decays_while_nothing_is_measured() -> None:
    clock = ManualClock()
    drain = DrainEstimate(cap_s=2.0, weight=1.0, half_life_s=10.0, clock=clock)
    drain.observe(2.0)
    clock.now += 10.0
    assert abs(drain.mean_s - 1.0) < 1e-9
    clock.now += 60.0
    assert drain.mean_s < 0.02


def test_the_pollers_liveness_answer_is_the_apps_and_keeps_the_connection_as_asked() -> None:
    from services.common.runtime.http.bounded_worker import liveness_answer, request_id

    given = b"GET /healthz HTTP/1.1\r\nHost: a\r\nX-Request-Id: lb-7f3a\r\n\r\n"
    head, _, body = liveness_answer(_head(given), request_id(given)).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK") and b"Connection: keep-alive" in head
    assert b"X-Request-ID: lb-7f3a" in head  # the caller's id kept, as the app does
    assert json.loads(body) == {"status": "ok"}
    assert len(request_id(b"GET /livez HTTP/1.1\r\nX-Request-ID: two words\r\n\r\n")) == 32  # a new one
    closing = liveness_answer(_head(b"HEAD /livez HTTP/1.0\r\n\r\n"), "x")
    assert closing.endswith(b"Connection: close\r\n\r\n")
