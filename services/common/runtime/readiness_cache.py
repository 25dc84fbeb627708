"""Readiness answered from the last background check, so that a probe never waits on
a busy server.

Run inline, a readiness check under load queues behind the searches and times out,
and every api pod would leave the service at the moment it is needed most (a
`/readyz` flapping with "index: no answer within 2 s"). Here a thread re-runs the checks
every ``interval_s`` and the probe returns the last finished result: a slow check
changes nothing until it finishes, a failed one says what failed.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from services.common.runtime.health_server import Readiness

INTERVAL_S = 1.0


class CachedReadiness:
    """``response()`` of ``readiness``, refreshed in the background."""

    def __init__(self, readiness: Readiness, interval_s: float = INTERVAL_S) -> None:
        self.readiness = readiness
        self.interval_s = interval_s
        self._last: tuple[int, dict[str, Any]] | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def response(self) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) of the last finished check; the first call checks inline."""
        last = self._last
        if last is None:
            last = self._last = self.readiness.response()
        with self._lock:
            if self._thread is None:  # started on the first probe, in the process that serves
                self._thread = threading.Thread(
                    target=_refresh_loop, args=(weakref.ref(self),), name="readyz-refresh", daemon=True
                )
                self._thread.start()
        return last

    def refresh(self) -> None:
        self._last = self.readiness.response()


def _refresh_loop(ref: weakref.ref[CachedReadiness]) -> None:
    # A weak reference: an app that is dropped (tests build many) ends its thread.
    stop = threading.Event()
    while True:
        cache = ref()
        if cache is None:
            return
        interval = cache.interval_s
        cache.refresh()
        del cache
        stop.wait(interval)
