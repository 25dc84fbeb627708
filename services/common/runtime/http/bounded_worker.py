"""gunicorn's gthread worker, changed in three ways so that waiting stays bounded.

1. Every request is stamped with the moment it became ready for a thread (its
   connection turned readable) and the stamp rides in the WSGI environ as
   ``tansuo.queued_at``. The admission middleware (services/common/runtime/http/admission.py) refuses
   a request that waited longer than the deadline with a 503, instead of serving an
   answer nobody waits for any more. gunicorn itself does not know how long a
   request sat in its thread pool's queue; only the worker sees both ends.
   And when the queue is already so long that a new request would be answered only
   after the deadline (queued x mean time a request holds a thread / threads, plus
   its own turn), a plain GET is refused on arrival by the poller thread, without
   entering the queue: the client hears "busy" at once rather than after the deadline.
2. A new connection that has sent nothing yet goes back to the poller at once.
   Stock gthread lets it hold a thread for up to 5 s, so a few hundred silent
   connections would starve every thread.
3. At the connection limit the oldest idle connection (silent ones first, then
   kept-alive ones) is closed to make room, where stock gthread stops accepting:
   idle clients never keep a new one out (a client reopens a closed idle
   connection, which HTTP allows at any time). gunicorn itself already answers
   "Connection: close" once its kept-alive connections fill the limit.

The queue depth (stamped, not yet started) is the gauge ``tansuo_api_queue_depth``,
set once per turn of the worker's poller loop.
"""

from __future__ import annotations

import json
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from gunicorn.workers import gthread

from services.common.runtime.http.retry_after import RetryAfter
from services.common.runtime.metrics import API_QUEUE_DEPTH, API_REFUSALS, API_REQUESTS

QUEUED_AT = "tansuo.queued_at"  # environ key: time.monotonic() when the request was ready
# Never refused, so that probes and scrapes see the process even while it sheds searches.
NEVER_REFUSED = frozenset({"/livez", "/healthz", "/readyz", "/metrics"})

SILENT_S = 1.0  # a connection that sent nothing for this long may be closed at the limit

_current = threading.local()


class BoundedThreadWorker(gthread.ThreadWorker):
    """The gthread worker with arrival stamps, refusal on arrival when the queue is
    already longer than the deadline, no thread held by silent connections, and
    eviction of idle connections at the limit."""

    wsgi: Any  # the app gunicorn loads into the worker (gunicorn is untyped)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline_s = float(getattr(self.app, "tansuo_deadline_s", 2.0))
        self._lock = threading.Lock()
        self._queued = 0
        self._drain = DrainEstimate()
        self._retry_after: RetryAfter | None = None

    def enqueue_req(self, conn: gthread.TConn) -> None:
        with self._lock:
            queued = self._queued
        if self._drain.answer_s(queued, self.cfg.threads) > self.deadline_s and self._refuse_on_arrival(conn):
            return
        conn.tansuo_queued_at = time.monotonic()
        with self._lock:
            self._queued += 1
        super().enqueue_req(conn)

    def murder_keepalived(self, force: bool = False) -> None:
        # Once per turn of the poller loop rather than twice per request: in
        # multiprocess mode every metric write takes a process-wide lock.
        API_QUEUE_DEPTH.set(self._queued)
        super().murder_keepalived(force)

    def handle(self, conn: gthread.TConn) -> Any:
        with self._lock:
            self._queued -= 1
        if not conn.initialized and not conn.data_ready and not conn.wait_for_data(0):
            return gthread._DEFER  # nothing sent yet: wait in the poller, not in a thread
        _current.queued_at = getattr(conn, "tansuo_queued_at", None)
        started = time.monotonic()
        try:
            return super().handle(conn)
        finally:
            _current.queued_at = None
            self._drain.observe(time.monotonic() - started)

    def _refuse_on_arrival(self, conn: gthread.TConn) -> bool:
        """Answer 503 from the poller thread, without queueing, when the request is
        whole in the socket and may be refused; True when done. Anything unusual (a
        body, a partial request, bytes already buffered, a probe) goes the normal way."""
        if conn.parser is not None and conn.parser.unreader.buf.getvalue():
            return False
        try:
            data = conn.sock.recv(READ_AHEAD, socket.MSG_PEEK)
        except OSError:  # nothing sent yet (EAGAIN), or a broken connection
            return False
        request = refusable_request(data)
        if request is None:
            return False
        try:
            conn.sock.recv(len(data))
            conn.sock.send(refusal(self._retry_seconds(), self.deadline_s, request.keep_alive))
        except OSError:
            self.nr_conns -= 1
            conn.close()
            return True
        API_REQUESTS.inc()
        API_REFUSALS.inc()
        if request.keep_alive and self.alive:
            conn.set_timeout()
            self.keepalived_conns.append(conn)
            self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_client_socket_readable, conn))
        else:
            self.nr_conns -= 1
            conn.close()
        return True

    def load_wsgi(self) -> None:
        super().load_wsgi()
        # The admission middleware's policy, so both kinds of refusal back off alike.
        self._retry_after = getattr(self.wsgi, "retry_after", None)
        self.wsgi = _stamping(self.wsgi)

    def _retry_seconds(self) -> int:
        return self._retry_after.refused() if self._retry_after is not None else 1

    def set_accept_enabled(self, enabled: bool) -> None:
        if not enabled and self.alive:
            self._evict_idle(self.nr_conns - self.worker_connections + 1)
            if self.nr_conns < self.worker_connections:
                return  # room made: keep accepting
        super().set_accept_enabled(enabled)

    def _evict_idle(self, count: int) -> None:
        """Close up to ``count`` idle connections: those that have sent nothing for
        ``SILENT_S`` first, then kept-alive ones, the longest idle first. A connection
        silent for less may have its request on the way (it was accepted before its
        first bytes came), so it is left alone."""
        silent_since = time.monotonic() - SILENT_S + self.cfg.keepalive  # compared with conn.timeout
        count = self._close_oldest(self.pending_conns, count, lambda conn: conn.timeout <= silent_since)
        self._close_oldest(self.keepalived_conns, count, lambda conn: True)

    def _close_oldest(self, idle: Any, count: int, eligible: Callable[[Any], bool]) -> int:
        while count > 0 and idle and eligible(idle[0]):
            conn = idle.popleft()
            try:
                self.poller.unregister(conn.sock)
            except (OSError, KeyError, ValueError):
                pass
            self.nr_conns -= 1
            conn.close()
            count -= 1
        return count


class DrainEstimate:
    """How long a request arriving now would wait for a thread: the requests queued
    ahead of it times the mean time a request holds a thread (a moving average, so it
    follows the load; it includes the waits for Python's lock, which is what limits
    threads in one process), divided by the threads."""

    def __init__(self, weight: float = 0.05) -> None:
        self._weight = weight
        self.mean_s = 0.0

    def observe(self, held_s: float) -> None:
        self.mean_s += self._weight * (held_s - self.mean_s)

    def wait_s(self, queued: int, threads: int) -> float:
        return queued * self.mean_s / max(1, threads)

    def answer_s(self, queued: int, threads: int) -> float:
        """When a request arriving now would be answered: its wait, then its own turn."""
        return self.wait_s(queued, threads) + self.mean_s


@dataclass(frozen=True)
class _Request:
    keep_alive: bool


READ_AHEAD = 16_384  # a request line and headers; a larger request is never refused early


def refusable_request(data: bytes) -> _Request | None:
    """The request in ``data`` when it is exactly one whole GET or HEAD without a body,
    and not for a probe or /metrics; else None."""
    end = data.find(b"\r\n\r\n")
    if end < 0 or end + 4 != len(data):
        return None
    head = data[:end].decode("latin-1")
    line, _, header_block = head.partition("\r\n")
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] not in ("GET", "HEAD") or not parts[2].startswith("HTTP/1."):
        return None
    if parts[1].split("?", 1)[0] in NEVER_REFUSED:
        return None
    headers = {k.strip().lower(): v.strip().lower() for k, _, v in (h.partition(":") for h in header_block.split("\r\n"))}
    if "content-length" in headers or "transfer-encoding" in headers:
        return None
    connection = headers.get("connection", "")
    keep_alive = "keep-alive" in connection if parts[2] == "HTTP/1.0" else "close" not in connection
    return _Request(keep_alive)


def refusal(retry_after_s: int, deadline_s: float, keep_alive: bool) -> bytes:
    """The bytes of a 503 with Retry-After, as the admission middleware sends it."""
    body = busy_body(deadline_s, retry_after_s)
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nServer: tansuo\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: {retry_after_s}\r\n"
        f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def busy_body(deadline_s: float, retry_after_s: int) -> bytes:
    """The refusal's JSON: the wait it asks for in words as well as in Retry-After, since
    under sustained overload that wait is a minute or more, not "shortly"."""
    message = (f"the server is busy: the request could not start within {deadline_s:g} s; "
               f"retry in {retry_after_s} s")  # fmt: skip
    return json.dumps({"error": message, "retry_after_s": retry_after_s}).encode()


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _stamping(app: WsgiApp) -> WsgiApp:
    def stamped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        queued_at = getattr(_current, "queued_at", None)
        if queued_at is not None:
            environ[QUEUED_AT] = queued_at
        return app(environ, start_response)

    return stamped
