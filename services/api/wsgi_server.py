"""The production HTTP server of `tansuo api`: waitress, drained gracefully on stop.

waitress rather than werkzeug's threaded server (which `tansuo serve` keeps using):
werkzeug's is a development server, one thread per connection with no bound, so a
burst of slow clients grows the process without limit; waitress has a fixed pool of
worker threads, reads each request fully before a worker sees it (a slow client
costs a socket, not a thread), and limits connections and header sizes. It is pure
Python with no dependencies.

waitress has no "stop" call for a server started in a thread, so ``shutdown`` does it
the way its own event loop allows: work is handed to the loop thread through the
server's trigger.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.server import create_server

log = logging.getLogger(__name__)

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _InFlight:
    """WSGI middleware counting requests from the call until the response is closed."""

    def __init__(self, app: WsgiApp) -> None:
        self._app = app
        self._lock = threading.Lock()
        self.count = 0

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with self._lock:
            self.count += 1
        try:
            body = self._app(environ, start_response)
        except BaseException:
            self._done()
            raise
        return self._closing(body)

    def _closing(self, body: Iterable[bytes]) -> Iterator[bytes]:
        try:
            yield from body
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
            self._done()

    def _done(self) -> None:
        with self._lock:
            self.count -= 1


class WsgiServer:
    """``app`` served by waitress on ``host:port`` (0 = a free port) from a daemon thread."""

    def __init__(self, app: WsgiApp, host: str, port: int, threads: int = 8) -> None:
        self._app = _InFlight(app)
        # clear_untrusted_proxy_headers: X-Forwarded-* are not trusted unless configured.
        self._server: Any = create_server(
            self._app, host=host, port=port, threads=threads, ident="tansuo", clear_untrusted_proxy_headers=True
        )
        self._thread = threading.Thread(target=self._server.run, name="waitress", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.effective_port)

    @property
    def host(self) -> str:
        return str(self._server.effective_host)

    def shutdown(self, grace_s: float = 10.0) -> bool:
        """Stop accepting, let the requests in flight finish and their responses go
        out (up to ``grace_s``), then close every connection. True if none was cut."""
        server = self._server
        server.trigger.pull_trigger(lambda: wasyncore.dispatcher.close(server))  # closes the listening socket
        deadline = time.monotonic() + grace_s
        drained = False
        while time.monotonic() < deadline:
            if self._app.count == 0 and not any(
                ch.total_outbufs_len for ch in list(server._map.values()) if isinstance(ch, HTTPChannel)
            ):
                drained = True
                break
            time.sleep(0.05)
        if not drained:
            log.warning("%d request(s) still running after %.0f s; closing their connections", self._app.count, grace_s)

        def close_all() -> None:
            server.task_dispatcher.shutdown(timeout=1)
            wasyncore.close_all(server._map)  # an empty map ends the loop

        server.trigger.pull_trigger(close_all)
        self._thread.join(grace_s)
        return drained
