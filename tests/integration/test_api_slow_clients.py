"""Clients that send their requests a byte at a time, beside clients that search:
a slow client costs the server a connection, not a worker thread, so probes and
searches go on being answered, the slow requests are cut with 408, and once the slow
clients are gone the next searches are answered, not refused as "busy".

Behaviour, not speed: the probes' and searches' own timeouts (several seconds) are
far above what an answer takes on any machine, and far below how long the slow
clients hold on (a stock gthread worker held a thread per slow client, so every
probe waited the slow clients out).
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Callable

import pytest

from tests.integration.test_api_under_load import SEARCH, Server, start  # noqa: F401  (the fixture)

pytestmark = pytest.mark.integration

SLOW_CLIENTS = 30
TRICKLE_S = 9.0  # how long each slow client goes on sending
REQUEST_TIMEOUT_S = 3.0  # TANSUO_API_REQUEST_TIMEOUT_S of the server under test


def _trickle(port: int, answers: list[bytes], stop: threading.Event) -> None:
    """Send a search request one byte a second, never finishing it; keep what the
    server answers (a 408 once the request timeout passes)."""
    request = f"GET {SEARCH} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", port), timeout=TRICKLE_S + 5) as sock:
        sock.settimeout(0.0)
        got = b""
        for byte in request[:-1]:
            if stop.wait(1.0):
                break
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            try:
                got += sock.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                break
        answers.append(got)


def _ask(server: Server, path: str, timeout_s: float) -> int:
    try:
        return server.get(path, timeout_s=timeout_s)[0]
    except (TimeoutError, OSError):
        return 0  # no answer in time


def test_slow_clients_hold_no_thread_and_leave_no_false_busy(start: Callable[..., Server]) -> None:
    # One worker of 8 threads, the setting the issue measured; a short deadline, so
    # that slow connections counted as service time would turn every search into a
    # 503 afterwards, as they did.
    server = start("serve", TANSUO_API_WORKERS="1", TANSUO_API_THREADS="8", TANSUO_API_QUEUE_DEADLINE_S="0.5",
                   TANSUO_API_REQUEST_TIMEOUT_S=str(REQUEST_TIMEOUT_S))  # fmt: skip
    server.warm_up()
    stop = threading.Event()
    answers: list[bytes] = []
    slow = [threading.Thread(target=_trickle, args=(server.port, answers, stop)) for _ in range(SLOW_CLIENTS)]
    for thread in slow:
        thread.start()
    time.sleep(1.5)  # every slow client has sent its first bytes
    probes: list[int] = []
    searches: list[int] = []
    until = time.monotonic() + TRICKLE_S - 2
    while time.monotonic() < until:
        probes.append(_ask(server, "/healthz", timeout_s=3.0))
        probes.append(_ask(server, "/readyz", timeout_s=3.0))
        searches.append(_ask(server, SEARCH, timeout_s=5.0))
        time.sleep(0.2)
    stop.set()
    for thread in slow:
        thread.join(30)

    assert probes and set(probes) == {200}, probes
    assert searches and set(searches) == {200}, searches
    assert len(answers) == SLOW_CLIENTS
    assert all(answer.startswith(b"HTTP/1.1 408 ") for answer in answers), {a[:40] for a in answers}
    after = [_ask(server, SEARCH, timeout_s=5.0) for _ in range(20)]
    assert after == [200] * 20, after


def test_a_request_whose_body_trickles_is_cut_and_a_whole_one_on_the_same_server_is_served(
    start: Callable[..., Server],
) -> None:
    server = start("serve", TANSUO_API_WORKERS="1", TANSUO_API_THREADS="1", TANSUO_API_REQUEST_TIMEOUT_S="1")
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/seeds HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        started = time.monotonic()
        answer = sock.recv(4096)  # the server cuts it, however long the client would wait
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert time.monotonic() - started < 9
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/api/seeds", body=b'{"urls": []}', headers={"Content-Type": "application/json"})
    assert conn.getresponse().status == 403  # served (no token configured), not cut
    conn.close()


def test_one_slow_client_on_a_fresh_server_leaves_no_false_busy(start: Callable[..., Server]) -> None:
    """The issue's case: one connection held for a while, then an idle server. Its
    trickle is no service time, so the wait estimate never passes the deadline."""
    server = start("serve", TANSUO_API_WORKERS="1", TANSUO_API_QUEUE_DEADLINE_S="0.25",
                   TANSUO_API_REQUEST_TIMEOUT_S="30")  # fmt: skip
    server.warm_up()
    answers: list[bytes] = []
    stop = threading.Event()
    slow = threading.Thread(target=_trickle, args=(server.port, answers, stop))
    slow.start()
    time.sleep(8)
    stop.set()
    slow.join(30)
    after = [_ask(server, SEARCH, timeout_s=5.0) for _ in range(20)]
    assert after == [200] * 20, after
