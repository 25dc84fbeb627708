"""A daemon thread that does one task every so many seconds until stopped: how a
server keeps what it reads from a store fresh (the dictionaries, the search log's
words) or writes what it buffered (search analytics) without a request waiting."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Periodic:
    def __init__(self, name: str, interval_s: float, task: Callable[[], object]) -> None:
        self._name = name
        self._interval_s = interval_s
        self._task = task
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, at_once: bool = False) -> None:
        """Run ``task`` every ``interval_s`` from now on, the first time at once with
        ``at_once``; a second start does nothing."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, args=(at_once,), name=self._name, daemon=True)
            self._thread.start()

    def stop(self, wait_s: float = 0.0) -> None:
        """No more runs; wait up to ``wait_s`` for one under way to end."""
        self._stop.set()
        if self._thread is not None and wait_s > 0:
            self._thread.join(wait_s)

    def _run(self, at_once: bool) -> None:
        if at_once:
            self._task()
        while not self._stop.wait(self._interval_s):
            self._task()
