"""How long a request arriving now would wait for a thread, for refusing on arrival.

The wait is the requests already waiting times the mean time a request holds a thread
(a moving average, so it follows the load; it includes the waits for Python's lock,
which is what limits threads in one process), divided by the threads. Three rules
keep the estimate from refusing when nobody waits:

- a request counts from when it was read whole, so a slow client's trickle is not
  service time (the poller reads requests; services/common/runtime/http/bounded_worker.py);
- one request moves the mean by at most ``weight`` x ``cap_s`` (the deadline): a
  search that held its thread for a minute is one slow search, not a slow server;
- without new measurements the mean decays towards zero (half of it every
  ``half_life_s``), so a slow spell is forgotten by an idle server instead of being
  held against the next requests forever.

And the worker asks only while requests are waiting: with nothing queued the wait is
zero, whatever the mean, so a slow backend with free threads gives slow answers,
never refusals.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable


class DrainEstimate:
    """Thread-safe: the request threads observe, the poller thread asks."""

    def __init__(
        self,
        cap_s: float,
        weight: float = 0.05,
        half_life_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._cap_s = cap_s
        self._weight = weight
        self._decay_per_s = math.log(2) / half_life_s
        self._clock = clock
        self._lock = threading.Lock()
        self._mean_s = 0.0
        self._at = clock()

    def observe(self, held_s: float) -> None:
        """A request held its thread ``held_s`` seconds (refused ones too: they held it briefly)."""
        with self._lock:
            mean = self._decayed()
            self._mean_s = mean + self._weight * (min(held_s, self._cap_s) - mean)

    @property
    def mean_s(self) -> float:
        with self._lock:
            return self._decayed()

    def wait_s(self, queued: int, threads: int) -> float:
        """The wait of a request arriving behind ``queued`` others."""
        return queued * self.mean_s / max(1, threads)

    def _decayed(self) -> float:
        now = self._clock()
        self._mean_s *= math.exp(-self._decay_per_s * max(0.0, now - self._at))
        self._at = now
        return self._mean_s
