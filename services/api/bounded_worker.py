"""gunicorn's gthread worker, changed in three ways so that waiting stays bounded.

1. Every request is stamped with the moment it became ready for a thread (its
   connection turned readable) and the stamp rides in the WSGI environ as
   ``tansuo.queued_at``. The admission middleware (services/api/admission.py) refuses
   a request that waited longer than the deadline with a 503, instead of serving an
   answer nobody waits for any more. gunicorn itself does not know how long a
   request sat in its thread pool's queue; only the worker sees both ends.
2. A new connection that has sent nothing yet goes back to the poller at once.
   Stock gthread lets it hold a thread for up to 5 s, so a few hundred silent
   connections would starve every thread.
3. At the connection limit the oldest idle connection (silent ones first, then
   kept-alive ones) is closed to make room, where stock gthread stops accepting:
   idle clients never keep a new one out (a client reopens a closed idle
   connection, which HTTP allows at any time). gunicorn itself already answers
   "Connection: close" once its kept-alive connections fill the limit.

The queue depth (stamped, not yet started) is the gauge ``tansuo_api_queue_depth``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from gunicorn.workers import gthread

from services.common.metrics import API_QUEUE_DEPTH

QUEUED_AT = "tansuo.queued_at"  # environ key: time.monotonic() when the request was ready

SILENT_S = 1.0  # a connection that sent nothing for this long may be closed at the limit

_current = threading.local()


class BoundedThreadWorker(gthread.ThreadWorker):
    """The gthread worker with arrival stamps, no thread held by silent connections,
    and eviction of idle connections at the limit."""

    def enqueue_req(self, conn: gthread.TConn) -> None:
        conn.tansuo_queued_at = time.monotonic()
        API_QUEUE_DEPTH.inc()
        super().enqueue_req(conn)

    def handle(self, conn: gthread.TConn) -> Any:
        API_QUEUE_DEPTH.dec()
        if not conn.initialized and not conn.data_ready and not conn.wait_for_data(0):
            return gthread._DEFER  # nothing sent yet: wait in the poller, not in a thread
        _current.queued_at = getattr(conn, "tansuo_queued_at", None)
        try:
            return super().handle(conn)
        finally:
            _current.queued_at = None

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi = _stamping(self.wsgi)

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


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _stamping(app: WsgiApp) -> WsgiApp:
    def stamped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        queued_at = getattr(_current, "queued_at", None)
        if queued_at is not None:
            environ[QUEUED_AT] = queued_at
        return app(environ, start_response)

    return stamped
