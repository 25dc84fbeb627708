"""A few wrong tokens a minute per client address, then 429.

The API token opens the crawl's endpoints and the console; a client that may try it
without limit can guess a short one. So each client address may present a wrong
token ``per_minute`` times within a minute (console logins and bearer headers
together); beyond that it is answered 429 with the seconds until its oldest failure
is a minute old in ``Retry-After``, without the token being compared at all. A right
token costs nothing, and a request without any token is no guess.

Per worker process, like the search limits (services/api/rate_limit.py): a client
gets workers x pods x ``per_minute`` guesses a minute from a deployment, which
against a token of 16 characters or more (the shortest accepted) is nothing.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from services.common.runtime.metrics import API_AUTH_FAILURES

log = logging.getLogger(__name__)

WINDOW_S = 60.0


class FailureLimit:
    """Thread-safe; remembers at most ``max_clients`` addresses (the least recently
    failing forgotten first)."""

    def __init__(self, per_minute: int, max_clients: int = 100_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._max_clients = max_clients
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def wait_s(self, client: str) -> float:
        """0 when ``client`` may present a token now, else the seconds until it may."""
        now = self._clock()
        with self._lock:
            recent = self._recent(client, now)
            if recent is None or len(recent) < self.per_minute:
                return 0.0
            return recent[0] + WINDOW_S - now

    def refused(self, client: str, where: str, wait_s: float) -> str:
        """Count a request refused for too many failures; its Retry-After."""
        API_AUTH_FAILURES.labels(outcome="throttled").inc()
        log.warning("%s: %s presented a wrong API token %d times within a minute; answered 429",
                    where, client, self.per_minute)  # fmt: skip
        return str(max(1, math.ceil(wait_s)))

    def failed(self, client: str, where: str) -> None:
        """Count a wrong token from ``client``."""
        now = self._clock()
        with self._lock:
            recent = self._recent(client, now)
            if recent is None:
                recent = self._failures[client] = deque()
            recent.append(now)
            self._failures.move_to_end(client)
            if len(self._failures) > self._max_clients:
                self._failures.popitem(last=False)
            count = len(recent)
        API_AUTH_FAILURES.labels(outcome="wrong").inc()
        log.warning("%s: wrong API token from %s (%d of %d a minute)", where, client, count, self.per_minute)

    def _recent(self, client: str, now: float) -> deque[float] | None:
        recent = self._failures.get(client)
        if recent is None:
            return None
        while recent and recent[0] <= now - WINDOW_S:
            recent.popleft()
        return recent
