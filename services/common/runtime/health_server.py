"""Health and metrics endpoints of a worker service: ``/livez``, ``/readyz``, ``/metrics``.

Liveness and readiness answer different questions and are kept apart on purpose:

- ``/livez`` is 503 only when the main loop has stopped ticking (a deadlock, a hung
  call), the one case that a restart fixes.
- ``/readyz`` runs every backend ping and is 503 when one fails: a Kafka outage
  takes the pod out of rotation without restarting it again and again.

The API has its own Flask routes for these (services/api/health.py) but the same
``Readiness`` underneath, so both answer alike.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from services.common.runtime.metrics import BACKEND_UP
from services.common.runtime.retry_backoff import describe

log = logging.getLogger(__name__)

Check = Callable[[], None]

# Below the probe timeouts a chart would set (3 s or more), so a hung ping is
# reported as such instead of the probe timing out with no body.
CHECK_TIMEOUT_S = 2.0


class Heartbeat:
    """When the main loop last ticked. ``beat`` is one clock read and one store, so a
    loop may call it every iteration.

    ``busy()`` covers a step known to be long (a PageRank run over the whole graph):
    inside it the loop counts as alive for up to ``busy_limit_s`` instead of
    ``stale_after_s``, so liveness neither restarts a ranker mid-run nor waits an
    hour to notice a stuck poll loop.
    """

    def __init__(
        self, stale_after_s: float = 120.0, busy_limit_s: float = 3600.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stale_after_s = stale_after_s
        self.busy_limit_s = busy_limit_s
        self._clock = clock
        self._last = clock()
        self._busy_since: float | None = None

    def beat(self) -> None:
        self._last = self._clock()

    @contextmanager
    def busy(self) -> Iterator[None]:
        self._busy_since = self._clock()
        try:
            yield
        finally:
            self._busy_since = None
            self.beat()

    def status(self) -> tuple[bool, dict[str, Any]]:
        """(alive, details for the /livez body)."""
        now = self._clock()
        busy_since = self._busy_since
        if busy_since is not None:
            busy_for = now - busy_since
            return busy_for <= self.busy_limit_s, {"busy_for_s": round(busy_for, 1), "limit_s": self.busy_limit_s}
        idle_for = now - self._last
        return idle_for <= self.stale_after_s, {"last_tick_s_ago": round(idle_for, 1), "limit_s": self.stale_after_s}


class Readiness:
    """Named backend pings, run concurrently, each within ``timeout_s``.

    Checks may be added or replaced while serving (a backend that connects late);
    ``tansuo_backend_up{backend=NAME}`` follows every run. A ping still running from
    an earlier probe is not started again, so a hung backend cannot pile up threads.
    """

    def __init__(self, checks: Mapping[str, Check] | Sequence[Check] = (), timeout_s: float = CHECK_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._checks: dict[str, Check] = {}
        self._running: dict[str, threading.Thread] = {}
        self._down: set[str] = set()  # failing at the last run, to log changes only
        items = checks.items() if isinstance(checks, Mapping) else ((_check_name(c), c) for c in checks)
        for name, check in items:
            self.set(name, check)

    def set(self, name: str, check: Check) -> None:
        with self._lock:
            self._checks[name] = check

    def failures(self) -> dict[str, str]:
        """Name -> error of every check that failed or did not answer in time."""
        with self._lock:
            checks = dict(self._checks)
        results: dict[str, str] = {}
        started: dict[str, threading.Thread] = {}
        for name, check in checks.items():
            with self._lock:
                busy = self._running.get(name)
                if busy is not None and busy.is_alive():  # registered until it has answered
                    results[name] = "the previous check has not answered yet"
                    continue
                thread = threading.Thread(
                    target=self._run, args=(name, check, results), name=f"readyz-{name}", daemon=True
                )
                self._running[name] = thread
            thread.start()
            started[name] = thread
        deadline = time.monotonic() + self.timeout_s
        for thread in started.values():
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            failed = {n: results.get(n, f"no answer within {self.timeout_s:g} s") for n in checks}
        failed = {n: error for n, error in failed.items() if error}
        for name in checks:
            BACKEND_UP.labels(backend=name).set(0 if name in failed else 1)
        self._log_changes(failed)
        return failed

    def _log_changes(self, failed: dict[str, str]) -> None:
        # Probes come every few seconds: one line when a backend goes down or comes
        # back says everything, and the retry loops log each attempt anyway.
        with self._lock:
            down, up = set(failed) - self._down, self._down - set(failed)
            self._down = set(failed)
        for name in sorted(down):
            log.warning("not ready: %s: %s", name, failed[name], extra={"backend": name, "error": failed[name]})
        for name in sorted(up):
            log.info("ready again: %s answers", name, extra={"backend": name})

    def _run(self, name: str, check: Check, results: dict[str, str]) -> None:
        try:
            check()
        except Exception as exc:  # any failure means "not ready", whatever its type
            error = describe(exc)
        else:
            error = ""
        with self._lock:
            results[name] = error
            # Done once answered, not once the thread has ended: the next probe, which
            # may come before this thread is scheduled again, starts a check of its own.
            if self._running.get(name) is threading.current_thread():
                del self._running[name]

    def response(self) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) of a readiness probe."""
        failed = self.failures()
        if not failed:
            return 200, {"status": "ready"}
        error = "; ".join(f"{name}: {err}" for name, err in failed.items())
        return 503, {"status": "unavailable", "error": error, "failed": failed}


def _check_name(check: Check) -> str:
    owner = getattr(check, "__self__", None)
    return type(owner).__name__ if owner is not None else getattr(check, "__qualname__", repr(check))


class HealthServer:
    """A threaded HTTP server in a daemon thread; ``close()`` stops it."""

    def __init__(self, server: ThreadingHTTPServer, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread

    @property
    def port(self) -> int:
        """The bound port: the real one when 0 was asked for."""
        return int(self._server.server_address[1])

    def close(self) -> None:
        self._server.shutdown()
        self._thread.join(10)
        self._server.server_close()

    def close_inherited_socket(self) -> None:
        """In a process forked from the one serving: drop the copy of the listening
        socket (the serving thread did not survive the fork), so the port is freed
        when the serving process stops, however long the child lives."""
        self._server.socket.close()


def serve_health(
    port: int,
    host: str = "0.0.0.0",
    ready: Readiness | Mapping[str, Check] | Sequence[Check] = (),
    heartbeat: Heartbeat | None = None,
    registry: Callable[[], Any] = lambda: REGISTRY,
) -> HealthServer:
    """Serve ``/livez``, ``/readyz`` and ``/metrics`` on ``host:port`` (0 = any free port).

    ``ready`` is a Readiness, or the pings to build one from (a list is named after
    each ping's adapter class). Without a ``heartbeat``, ``/livez`` is 200 while the
    process answers at all. ``registry`` gives the registry a scrape renders: the API's
    sums its worker processes' files, made anew on each scrape.
    """
    readiness = ready if isinstance(ready, Readiness) else Readiness(ready)
    handler = type(
        "HealthHandler",
        (_HealthHandler,),
        {"readiness": readiness, "heartbeat": heartbeat, "registry": staticmethod(registry)},
    )
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=f"health-{server.server_address[1]}", daemon=True)
    thread.start()
    return HealthServer(server, thread)


class _HealthHandler(BaseHTTPRequestHandler):
    readiness: Readiness
    heartbeat: Heartbeat | None
    registry: Callable[[], Any]

    def do_GET(self) -> None:  # the name http.server dispatches to
        path = self.path.split("?", 1)[0]
        if path in ("/livez", "/healthz"):
            alive, details = self.heartbeat.status() if self.heartbeat is not None else (True, {})
            self._json(200 if alive else 503, {"status": "ok" if alive else "stalled", **details})
        elif path == "/readyz":
            self._json(*self.readiness.response())
        elif path == "/metrics":
            try:
                body = generate_latest(self.registry())
            except Exception as exc:  # a scrape that fails says why, never drops the connection
                log.exception("metrics: cannot render")
                self._json(500, {"error": f"cannot render metrics: {exc}"})
                return
            self._send(200, CONTENT_TYPE_LATEST, body)
        else:
            self._json(404, {"error": f"no such endpoint: {path}"})

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._send(status, "application/json", json.dumps(body, ensure_ascii=False).encode("utf-8"))

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the base class's name
        # Probes come every few seconds: an access log line each would drown the rest.
        pass
