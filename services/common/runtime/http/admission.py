"""Bounded waiting: a request that could not start within the deadline is refused at once.

Past its capacity a server can either queue without limit (every client waits longer
and longer, throughput collapses as the queue outgrows the caches, and clients give
up on answers still being computed) or say "not now" quickly. Elasticsearch does the
latter with a bounded search queue and 429; this does it by time: the worker stamps
each request when it has been read whole (services/common/runtime/http/bounded_worker.py), and a
request that starts more than ``deadline_s`` later costs only a short 503 with
Retry-After, which clears the backlog at a rate of thousands per second.

Health and metrics endpoints are never refused: a probe must see that the process is
alive and ready even while it sheds searches.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from services.common.runtime.http.request_exchange import QUEUED_AT
from services.common.runtime.http.retry_after import RetryAfter
from services.common.runtime.metrics import API_QUEUE_WAIT, API_REFUSALS, API_REQUESTS

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

# Never refused, so that probes and scrapes see the process even while it sheds searches.
NEVER_REFUSED = frozenset({"/livez", "/healthz", "/readyz", "/metrics"})


class Admission:
    """WSGI middleware refusing requests that waited longer than ``deadline_s``."""

    def __init__(
        self, app: WsgiApp, deadline_s: float, retry_after: RetryAfter, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._app = app
        self.deadline_s = deadline_s
        # Shared with the worker, which refuses on arrival too (bounded_worker.py).
        self.retry_after = retry_after
        self._clock = clock

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        API_REQUESTS.inc()
        queued_at = environ.get(QUEUED_AT)
        if queued_at is None:  # a server that does not stamp: nothing to bound
            return self._app(environ, start_response)
        waited = self._clock() - queued_at
        API_QUEUE_WAIT.observe(waited)
        if environ.get("PATH_INFO", "") in NEVER_REFUSED:
            return self._app(environ, start_response)
        if waited <= self.deadline_s:
            self.retry_after.admitted()
            return self._app(environ, start_response)
        API_REFUSALS.inc()
        seconds = self.retry_after.refused()
        body = busy_body(self.deadline_s, seconds)
        start_response(
            "503 Service Unavailable",
            [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(body))),
                ("Retry-After", str(seconds)),
                ("X-Content-Type-Options", "nosniff"),
            ],
        )
        return [body]


def refusal(retry_after_s: int, deadline_s: float, keep_alive: bool) -> bytes:
    """The bytes of a 503 with Retry-After, as the middleware sends it, for the
    worker's poller to send without running the app."""
    body = busy_body(deadline_s, retry_after_s)
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nServer: tansuo\r\nContent-Type: application/json\r\n"
        "X-Content-Type-Options: nosniff\r\n"
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
