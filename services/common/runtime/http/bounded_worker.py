"""gunicorn's gthread worker, changed so that a client costs a connection, never a
thread, and waiting stays bounded.

Stock gthread hands a connection to a thread as soon as it turns readable, and the
thread reads the request from the socket: a client that sends one byte every few
seconds holds that thread for as long as it likes, and a few dozen such clients hold
every thread, health probes included. Here the worker's poller thread does all the
socket work, without blocking:

1. **Reading.** The poller reads each request whole (head and body; see
   services/common/runtime/http/request_framing.py) before any thread sees it. A request
   must arrive within ``request_timeout_s`` of its first byte, else it is answered 408
   and closed; a connection that sends nothing is closed after the keep-alive time.
2. **Serving.** A thread gets the request's bytes and returns the response's bytes
   (services/common/runtime/http/request_exchange.py). Its time is the application's
   only, and that is what the wait estimate measures.
3. **Writing.** The poller sends the response; a client that does not read it within
   ``response_timeout_s`` is closed. Then the connection waits for its next request.

Bounded waiting (docs/serving.md, 'Bounded waiting'): every request is stamped when it
was read whole (the WSGI environ's ``tansuo.queued_at``), and the admission middleware
(admission.py) refuses one that waited for a thread past the deadline. While requests
wait and the estimated wait (services/common/runtime/http/drain_estimate.py) passes the
deadline, a plain GET is answered 503 by the poller at once, without entering the queue.

Liveness probes (``/livez``, ``/healthz``) are answered by the poller itself, and
``/readyz`` runs on threads of its own, so a probe never waits behind searches. At the connection limit the longest-idle
connection is closed to let a new one in (idle ones first, then requests that have
trickled for over a second), where stock gthread stops accepting.

HTTP/1.x without TLS only: TLS ends at the proxy or the Ingress in front.
"""

from __future__ import annotations

import logging
import re
import selectors
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from gunicorn.workers import gthread

from services.common.runtime.http.admission import NEVER_REFUSED, refusal
from services.common.runtime.http.drain_estimate import DrainEstimate
from services.common.runtime.http.request_exchange import Answer, Exchange, exchange
from services.common.runtime.http.request_framing import (
    Complete,
    Incomplete,
    Refused,
    RequestHead,
    escape_request_line,
    frame,
)
from services.common.runtime.http.retry_after import RetryAfter
from services.common.runtime.metrics import API_QUEUE_DEPTH, API_REFUSALS, API_REQUESTS

log = logging.getLogger(__name__)

SILENT_S = 1.0  # a connection quiet this long may be closed at the limit; a real request arrives faster
TICK_S = 0.25  # the poller checks deadlines at least this often
LINGER_S = 2.0  # a closing connection drains what the client still sends for this long (RFC 9112 9.6)
READ_CHUNK = 64 * 1024
PROBE_THREADS = 2

IDLE, READING, BUSY, WRITING, CLOSING, CLOSED = range(6)
LIVENESS = frozenset({"/livez", "/healthz"})


class _Conn:
    """One client connection, owned by the poller thread."""

    __slots__ = ("sock", "client", "server", "state", "serial", "inbuf", "head", "out", "keep_alive",
                 "continue_sent", "since", "served", "events")  # fmt: skip

    def __init__(self, sock: socket.socket, client: Any, server: Any, now: float) -> None:
        self.sock = sock
        self.client = client
        self.server = server
        self.state = IDLE
        self.serial = 0  # bumped at every change of state; a timer entry holds the serial it was set for
        self.inbuf = bytearray()
        self.head: RequestHead | None = None
        self.out: memoryview | None = None
        self.keep_alive = False
        self.continue_sent = False
        self.since = now  # when the current state began
        self.served = 0
        self.events = 0  # what the poller watches for; 0 = not registered


class BoundedThreadWorker(gthread.ThreadWorker):
    """The gthread worker with a poller that reads requests and writes responses,
    deadlines for both, refusal on arrival while requests wait past the deadline,
    threads of their own for probes, and eviction of idle connections at the limit."""

    wsgi: Any  # the app gunicorn loads into the worker (gunicorn is untyped)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.cfg.is_ssl:
            raise RuntimeError("the bounded worker speaks plain HTTP/1.x: end TLS at a proxy in front")
        self.deadline_s = float(getattr(self.app, "tansuo_deadline_s", 2.0))
        self.request_timeout_s = float(getattr(self.app, "tansuo_request_timeout_s", 5.0))
        self.response_timeout_s = float(getattr(self.app, "tansuo_response_timeout_s", 30.0))
        self.idle_s = max(SILENT_S, float(self.cfg.keepalive))
        self._lock = threading.Lock()
        self._queued = 0
        self._drain = DrainEstimate(cap_s=self.deadline_s)
        self._retry_after: RetryAfter | None = None
        self._open: set[_Conn] = set()
        self._timers: dict[int, deque[tuple[float, int, _Conn]]] = {
            s: deque() for s in (IDLE, READING, WRITING, CLOSING)
        }
        self._probes: ThreadPoolExecutor | None = None

    # --- the loop

    def init_process(self) -> None:
        self._probes = ThreadPoolExecutor(PROBE_THREADS, thread_name_prefix="probe")
        super().init_process()  # last: it runs the loop

    def load_wsgi(self) -> None:
        super().load_wsgi()
        # The admission middleware's policy, so both kinds of refusal back off alike.
        self._retry_after = getattr(self.wsgi, "retry_after", None)

    def run(self) -> None:
        self.poller.register(self.method_queue.fileno(), selectors.EVENT_READ, self.method_queue.run_callbacks)
        self.set_accept_enabled(True)
        while self.alive:
            self.notify()
            self._make_room()
            self.wait_for_and_dispatch_events(timeout=TICK_S)
            if not self.is_parent_alive():
                break
            self._expire(time.monotonic())
            API_QUEUE_DEPTH.set(self._queued)  # once per turn: a multiprocess metric write takes a lock
        self._stop()

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        try:
            events = self.poller.select(timeout)
        except InterruptedError:
            return
        for key, mask in events:
            if isinstance(key.data, _Conn):
                self._on_ready(key.data, mask)
            else:
                key.data(key.fileobj)

    def handle_quit(self, sig: int, frame: Any) -> None:
        if self._probes is not None:
            self._probes.shutdown(wait=False)
        super().handle_quit(sig, frame)

    def _stop(self) -> None:
        """Stop accepting, let requests in flight finish and be written (up to the
        grace period); idle connections get LINGER_S for a request already on its way,
        which is then answered with "Connection: close"."""
        self.set_accept_enabled(False)
        now = time.monotonic()
        linger_until, give_up = now + LINGER_S, now + self.cfg.graceful_timeout
        while self._open and now < give_up:
            self.notify()
            self.wait_for_and_dispatch_events(timeout=TICK_S)
            now = time.monotonic()
            if now >= linger_until:
                for conn in [c for c in self._open if c.state == IDLE]:
                    self._close(conn)
            self._expire(now)
        for conn in list(self._open):
            if conn.state != BUSY:  # a thread may still send on a busy one: the exit closes it
                self._close(conn)
        self.tpool.shutdown(wait=False)
        if self._probes is not None:
            self._probes.shutdown(wait=False)
        self.poller.close()
        self.method_queue.close()
        for listener in self.sockets:
            listener.close()

    # --- accepting

    def accept(self, listener: socket.socket) -> None:
        for _ in range(64):  # a burst of connections in one turn, not one per turn
            if self.nr_conns >= self.worker_connections:
                return
            try:
                sock, client = listener.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            sock.setblocking(False)
            now = time.monotonic()
            conn = _Conn(sock, client, listener.getsockname(), now)
            self.nr_conns += 1
            self._open.add(conn)
            self._set_state(conn, IDLE, now, now + self.idle_s)
            self._watch(conn, selectors.EVENT_READ)

    def _make_room(self) -> None:
        if self.alive and self.nr_conns >= self.worker_connections:
            self._evict(self.nr_conns - self.worker_connections + 1)
        can_accept = self.nr_conns < self.worker_connections
        if can_accept != self._accepting:
            self.set_accept_enabled(can_accept)

    def _evict(self, count: int) -> None:
        """Close up to ``count`` connections that hold nothing a thread works on: idle
        ones first, the longest idle first, then requests that have trickled for over
        SILENT_S. A connection accepted less than SILENT_S ago may have its first
        request on the way, so it is left alone."""
        now = time.monotonic()
        victims: list[_Conn] = []
        for state in (IDLE, READING):
            for _, serial, conn in self._timers[state]:
                if len(victims) >= count:
                    break
                if conn.serial == serial and now - conn.since >= SILENT_S:
                    victims.append(conn)
        for conn in victims:
            self._close(conn)

    # --- reading

    def _on_ready(self, conn: _Conn, mask: int) -> None:
        if conn.state in (IDLE, READING):
            self._read(conn)
        elif conn.state == WRITING:
            self._write(conn)
        elif conn.state == CLOSING:
            self._linger(conn)

    def _read(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        if not data:
            self._close(conn)  # the client closed: nothing to answer
            return
        conn.inbuf += data
        if conn.state == IDLE:
            now = time.monotonic()
            self._set_state(conn, READING, now, now + self.request_timeout_s)
        self._advance(conn)

    def _advance(self, conn: _Conn) -> None:
        """Hand the buffered request to a thread once it is whole."""
        if conn.head is None:
            while conn.inbuf.startswith(b"\r\n"):  # RFC 9112 2.2: empty lines before a request are ignored
                del conn.inbuf[:2]
        framing = frame(conn.inbuf, conn.head)
        if isinstance(framing, Incomplete):
            conn.head = framing.head
            if conn.head is not None and conn.head.expect_continue and conn.head.has_body and not conn.continue_sent:
                conn.continue_sent = True
                try:
                    conn.sock.send(b"HTTP/1.1 100 Continue\r\n\r\n")
                except OSError:
                    pass  # the client sends its body after a second anyway
            return
        if isinstance(framing, Refused):
            self._answer(conn, plain_answer(framing.status, framing.reason), keep_alive=False)
            return
        assert isinstance(framing, Complete)
        data = bytes(conn.inbuf[: framing.size])
        del conn.inbuf[: framing.size]
        conn.head = None
        self._dispatch(conn, framing.head, data)

    # --- serving

    def _dispatch(self, conn: _Conn, head: RequestHead, data: bytes) -> None:
        now = time.monotonic()
        request = Exchange(escape_request_line(data), conn.client, conn.server, now)
        conn.continue_sent = False
        if head.path in LIVENESS and head.method in ("GET", "HEAD") and not head.has_body:
            # "This process answers": the poller's own answer, so that it holds under
            # any load of the threads (and of Python's lock, which they share).
            self._answer(conn, liveness_answer(head, request_id(data)), head.keep_alive)
            return
        if head.path in NEVER_REFUSED:
            pool, probe = self._probes, True
        elif refusable(head) and self._refusing():
            self._refuse(conn, head)
            return
        else:
            pool, probe = self.tpool, False
            with self._lock:
                self._queued += 1
        self._unwatch(conn)
        self._set_state(conn, BUSY, now, None)
        assert pool is not None
        future = pool.submit(self._serve, conn.sock, request, probe)
        future.add_done_callback(lambda done: self.method_queue.defer(self._served, conn, done))

    def _refusing(self) -> bool:
        """Refuse on arrival only while requests wait and their wait passes the deadline."""
        queued = self._queued
        return queued > 0 and self._drain.wait_s(queued, self.cfg.threads) > self.deadline_s

    def _refuse(self, conn: _Conn, head: RequestHead) -> None:
        API_REQUESTS.inc()
        API_REFUSALS.inc()
        seconds = self._retry_after.refused() if self._retry_after is not None else 1
        self._answer(conn, refusal(seconds, self.deadline_s, head.keep_alive), head.keep_alive)

    def _serve(self, sock: socket.socket, request: Exchange, probe: bool) -> tuple[Answer, int]:
        """In a thread: the application's answer to one whole request, and how much of
        it the thread could send at once (-1: the connection is gone). The socket is
        non-blocking and the poller leaves it alone until this returns; sending here
        spares the poller a system call per request, and each one it makes waits for
        Python's lock again behind the busy threads."""
        if not probe:
            with self._lock:
                self._queued -= 1
        started = time.monotonic()
        try:
            answer = exchange(self, self.wsgi, request)
        finally:
            if not probe:
                self._drain.observe(time.monotonic() - started)
        try:
            return answer, sock.send(answer.data)
        except (BlockingIOError, InterruptedError):
            return answer, 0
        except OSError:
            return answer, -1

    def _served(self, conn: _Conn, done: Future[tuple[Answer, int]]) -> None:
        if conn.state != BUSY:
            return
        try:
            answer, sent = done.result()
        except Exception:  # exchange() answers errors itself; this is a bug in it
            log.exception("request failed")
            self._close(conn)
            return
        if sent < 0:
            self._close(conn)
            return
        self._answer(conn, answer.data[sent:], answer.keep_alive)

    # --- writing

    def _answer(self, conn: _Conn, data: bytes, keep_alive: bool) -> None:
        conn.out = memoryview(data)
        conn.keep_alive = keep_alive
        self._write(conn)

    def _write(self, conn: _Conn) -> None:
        out = conn.out
        while out:
            try:
                sent = conn.sock.send(out)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self._close(conn)
                return
            out = out[sent:]
        conn.out = out
        if out:
            if conn.state != WRITING:
                now = time.monotonic()
                self._set_state(conn, WRITING, now, now + self.response_timeout_s)
                self._watch(conn, selectors.EVENT_WRITE)
            return
        conn.out = None
        if conn.keep_alive and self.alive:
            self._next_request(conn)
        else:
            self._close_gracefully(conn)

    def _next_request(self, conn: _Conn) -> None:
        now = time.monotonic()
        conn.served += 1
        if conn.inbuf:  # the client sent its next request already (pipelining)
            self._set_state(conn, READING, now, now + self.request_timeout_s)
            self._watch(conn, selectors.EVENT_READ)
            self._advance(conn)
        else:
            self._set_state(conn, IDLE, now, now + self.idle_s)
            self._watch(conn, selectors.EVENT_READ)

    # --- closing

    def _close_gracefully(self, conn: _Conn) -> None:
        """Send FIN, then drain what the client still sends for a while before closing:
        closing with unread bytes would send a reset that can cut off the answer."""
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._close(conn)
            return
        now = time.monotonic()
        self._set_state(conn, CLOSING, now, now + LINGER_S)
        self._watch(conn, selectors.EVENT_READ)

    def _linger(self, conn: _Conn) -> None:
        try:
            if conn.sock.recv(READ_CHUNK):
                return
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            pass
        self._close(conn)

    def _close(self, conn: _Conn) -> None:
        if conn.state == CLOSED:
            return
        self._unwatch(conn)
        conn.state = CLOSED
        conn.serial += 1
        conn.inbuf = bytearray()
        conn.out = None
        try:
            conn.sock.close()
        except OSError:
            pass
        self._open.discard(conn)
        self.nr_conns -= 1

    # --- bookkeeping

    def _set_state(self, conn: _Conn, state: int, now: float, deadline: float | None) -> None:
        conn.state = state
        conn.serial += 1
        conn.since = now
        if deadline is not None:
            # Each state has one duration, so its timers are appended in deadline order.
            self._timers[state].append((deadline, conn.serial, conn))

    def _expire(self, now: float) -> None:
        """Act on the deadlines that passed: an idle, writing or closing connection is
        closed; a request still arriving is answered 408 and closed."""
        handlers: dict[int, Callable[[_Conn], None]] = {
            IDLE: self._close,
            READING: self._too_slow,
            WRITING: self._close,
            CLOSING: self._close,
        }
        for state, handler in handlers.items():
            timers = self._timers[state]
            while timers and timers[0][0] <= now:
                _, serial, conn = timers.popleft()
                if conn.serial == serial:
                    handler(conn)

    def _too_slow(self, conn: _Conn) -> None:
        log.debug("request from %s not whole after %g s: 408", conn.client, self.request_timeout_s)
        self._answer(conn, plain_answer(408, "Request Timeout"), keep_alive=False)

    def _watch(self, conn: _Conn, events: int) -> None:
        if conn.events == events:
            return
        if conn.events:
            self.poller.modify(conn.sock, events, conn)
        else:
            self.poller.register(conn.sock, events, conn)
        conn.events = events

    def _unwatch(self, conn: _Conn) -> None:
        if conn.events:
            try:
                self.poller.unregister(conn.sock)
            except (KeyError, ValueError, OSError):
                pass
            conn.events = 0


def refusable(head: RequestHead) -> bool:
    """Whether the poller may refuse a request on arrival: a GET or HEAD without a
    body, not for a probe or /metrics (never refused)."""
    return head.method in ("GET", "HEAD") and not head.has_body and head.path not in NEVER_REFUSED


def plain_answer(status: int, reason: str) -> bytes:
    """A short text answer that closes the connection (the request was not served)."""
    body = f"{status} {reason}\n".encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nServer: tansuo\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "X-Content-Type-Options: nosniff\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")  # fmt: skip
    return head.encode("latin-1") + body


# services/api/request_ids.py's rule: the caller's X-Request-ID when it looks like an id.
_REQUEST_ID = re.compile(rb"\r\nx-request-id:[ \t]*([A-Za-z0-9._:-]{1,128})[ \t]*\r\n", re.IGNORECASE)


def request_id(data: bytes) -> str:
    """The request's X-Request-ID when it looks like an id, else a new one, as the app gives."""
    found = _REQUEST_ID.search(data)
    return found.group(1).decode() if found else uuid.uuid4().hex


def liveness_answer(head: RequestHead, request_id: str) -> bytes:
    """The answer of services/api/health.py's /livez, without running the app."""
    body = b'{"status":"ok"}\n'
    lines = ("HTTP/1.1 200 OK\r\nServer: tansuo\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
             f"X-Content-Type-Options: nosniff\r\nX-Request-ID: {request_id}\r\nContent-Length: {len(body)}\r\n"
             f"Connection: {'keep-alive' if head.keep_alive else 'close'}\r\n\r\n")  # fmt: skip
    return lines.encode("latin-1") + (b"" if head.method == "HEAD" else body)
