"""Keeps client libraries from flooding the log during an outage.

While a broker is down, kafka-python logs every failed reconnect and metadata refresh,
about fifty lines a second per service; the outage itself is already reported in one
line by the service runtime. This filter lets the first line of each kind through and
then at most one per window, noting how many it held back, so the log still shows when
an outage started, that it went on, and when it ended.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

# Loggers of the backend clients, whose retry loops log per attempt.
CLIENT_LOGGERS: tuple[str, ...] = ("kafka", "elastic_transport", "urllib3", "redis", "minio")


class RepeatThrottle(logging.Filter):
    """Passes a record unless one of the same logger, level and message template
    passed less than ``window_s`` ago."""

    def __init__(self, prefixes: Sequence[str] = CLIENT_LOGGERS, window_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        super().__init__()
        self._prefixes = tuple(prefixes)
        self._window_s = window_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last: dict[tuple[str, int, str], tuple[float, int]] = {}  # key -> (passed at, held back since)

    def _throttled(self, name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in self._prefixes)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._throttled(record.name):
            return True
        key = (record.name, record.levelno, str(record.msg))
        now = self._clock()
        with self._lock:
            passed_at, held = self._last.get(key, (float("-inf"), 0))
            if now - passed_at < self._window_s:
                self._last[key] = (passed_at, held + 1)
                return False
            self._last[key] = (now, 0)
        if held:
            record.msg = f"{record.msg} ({held} more like this in the last {now - passed_at:.0f} s not shown)"
        return True
