"""Which requests the API's poller thread may refuse without queueing them, and what
it sends (services/common/runtime/http/bounded_worker.py)."""

from __future__ import annotations

import json

from services.common.runtime.http.bounded_worker import (
    DrainEstimate,
    refusable_request,
    refusal,
)


def test_a_whole_get_is_refusable_and_keeps_its_connection_by_http_version() -> None:
    assert refusable_request(b"GET /api/search?q=x HTTP/1.1\r\nHost: a\r\n\r\n").keep_alive  # type: ignore[union-attr]
    closing = refusable_request(b"GET /api/search?q=x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    assert closing is not None and not closing.keep_alive
    assert not refusable_request(b"GET / HTTP/1.0\r\n\r\n").keep_alive  # type: ignore[union-attr]


def test_probes_bodies_partial_and_pipelined_requests_go_the_normal_way() -> None:
    for data in (
        b"GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /livez?x=1 HTTP/1.1\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\n\r\n",
        b"POST /api/seeds HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
        b"POST /api/seeds HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
        b"GET /api/search?q=x HTTP/1.1\r\nHost: a\r\n",
        b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n",
        b"\x16\x03\x01 not http at all\r\n\r\n",
    ):
        assert refusable_request(data) is None, data


def test_the_refusal_is_a_503_with_retry_after_and_a_json_error() -> None:
    head, _, body = refusal(1, 2.0, keep_alive=True).partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 503 Service Unavailable"
    assert "Retry-After: 1" in lines and "Connection: keep-alive" in lines
    assert f"Content-Length: {len(body)}" in lines
    answer = json.loads(body)
    assert "busy" in answer["error"] and "retry in 1 s" in answer["error"] and answer["retry_after_s"] == 1


def test_the_wait_estimate_is_the_queue_times_the_time_a_request_holds_a_thread() -> None:
    drain = DrainEstimate(weight=1.0)
    assert drain.wait_s(100, 8) == 0.0  # nothing measured yet: never refuse on a guess
    drain.observe(0.08)
    assert drain.wait_s(100, 8) == 100 * 0.08 / 8
    assert drain.answer_s(100, 8) == 100 * 0.08 / 8 + 0.08  # then its own turn
