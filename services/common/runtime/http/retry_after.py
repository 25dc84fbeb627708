"""How long a refused client is told to wait: longer while the server keeps refusing.

A fixed Retry-After of 1 s brings every refused client back one second later, when the
server is as full as it was: under sustained overload most answers become refusals and
the clients that do get through wait as long as ever (docs/serving.md, 'Bounded
waiting'). The refusal is a promise ("come back then"), so it should name a moment when
the server is likely to have room.

Per worker process, over windows of one second: while more than ``target`` of the
window's requests were refused, the Retry-After doubles (up to ``ceiling_s``), the way
a client's exponential backoff would; after a window without refusals it comes down by
an eighth (at least a second) towards ``floor_s``. Clients that honour it then come
back spread over a longer time, the queue holds about what the worker can answer
within its deadline, and refusals stay a small share; clients that ignore it lose
nothing they had before.

Why slowly down and how high up: with N clients, a worker answering C a second within a
deadline D holds about C·D of them; the other N − C·D must be away, so a refusal rate r
needs a Retry-After of (N − C·D) / r, about a minute for 5% at a thousand clients on two
cores. It comes down by an eighth, not by half, because halving brings clients back in a
herd that refills the queue (docs/serving.md, 'Bounded waiting'). A wait that stays high
once the overload has passed costs nothing: only refusals carry it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RetryAfter:
    """Thread-safe: the poller thread and the request threads of a worker share one."""

    def __init__(
        self,
        floor_s: int,
        ceiling_s: int,
        target: float = 0.01,
        window_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.floor_s = max(1, floor_s)
        self.ceiling_s = max(self.floor_s, ceiling_s)
        self._target = target
        self._window_s = window_s
        self._clock = clock
        self._lock = threading.Lock()
        self._seconds = self.floor_s
        self._window_end = clock() + window_s
        self._admitted = 0
        self._refused = 0

    def admitted(self) -> None:
        with self._lock:
            self._roll()
            self._admitted += 1

    def refused(self) -> int:
        """Count a refusal; the Retry-After (whole seconds) it should carry."""
        with self._lock:
            self._roll()
            self._refused += 1
            return self._seconds

    @property
    def seconds(self) -> int:
        with self._lock:
            self._roll()
            return self._seconds

    def _roll(self) -> None:
        """Close the windows that ended: the first one decides, an empty one relaxes."""
        now = self._clock()
        if now < self._window_end:
            return
        total = self._admitted + self._refused
        if total and self._refused / total > self._target:
            self._seconds = min(self.ceiling_s, self._seconds * 2)
        elif not self._refused:
            self._relax()
        idle_windows = int((now - self._window_end) // self._window_s)
        for _ in range(min(idle_windows, 64)):  # quiet windows since: nothing refused in them
            self._relax()
        self._window_end = now + self._window_s - (now - self._window_end) % self._window_s
        self._admitted = self._refused = 0

    def _relax(self) -> None:
        """An eighth less (at least a second) after a window without refusals."""
        self._seconds = max(self.floor_s, self._seconds - max(1, self._seconds // 8))
