"""A long extraction yields to a busy crawl, as Lucene's merges yield to indexing.

A scheduling policy cannot keep a worker from slowing the crawl beside it: even under
SCHED_IDLE a parser that runs flat out shares the machine's caches and memory bandwidth
with the crawl's one busy thread. So while the process that hands out the work is
itself busy (the embedded crawl, at ``BUSY_SHARE`` of a core or more), a document past
its first ``LONG_CPU_S`` of CPU is held stopped (SIGSTOP) between its slices, so that it
runs ``share`` of the wall time at most. Small documents, and every document while the
crawl is quiet or in the extractor's own service (whose process only waits on its bus),
run at full speed. A worker held when its parent is killed is not left stopped: its
process group is then orphaned, and the kernel sends it SIGHUP and SIGCONT.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

LONG_CPU_S = 1.0  # a document's own CPU before it is held back at all
BUSY_SHARE = 0.25  # of a core: the handing-out process is crawling pages
MAX_HOLD_S = 1.0  # one hold at most: the crawl's state is looked at again after it

CpuSeconds = Callable[[int], "float | None"]


class BusyThrottle:
    """Called after each slice of a document's wait, while the worker extracts it."""

    def __init__(self, worker_pid: int, share: float, cpu_seconds: CpuSeconds) -> None:
        self._worker = worker_pid
        self._share = share
        self._cpu = cpu_seconds
        self._own = os.getpid()
        self._worker_start = cpu_seconds(worker_pid)
        self._last = self._now()
        self.held_s = 0.0  # wall time the worker was held

    def _now(self) -> tuple[float, float | None, float | None]:
        return time.monotonic(), self._cpu(self._own), self._cpu(self._worker)

    def after_slice(self) -> None:
        """Hold the worker stopped for its slice's CPU × (1/share − 1) when the
        document is long and this process busy; return at once otherwise."""
        (then, own_then, worker_then), (now, own, worker) = self._last, self._now()
        self._last = (now, own, worker)
        if self._share >= 1.0 or now <= then or self._worker_start is None:
            return
        if own is None or own_then is None or worker is None or worker_then is None:
            return  # no /proc, or the worker is gone: nothing to measure
        if worker - self._worker_start < LONG_CPU_S or (own - own_then) / (now - then) < BUSY_SHARE:
            return
        hold = min(MAX_HOLD_S, (worker - worker_then) * (1.0 / self._share - 1.0))
        if hold > 0:
            self._hold(hold)
            self._last = self._now()  # the next slice is measured from the end of the hold

    def _hold(self, seconds: float) -> None:
        try:
            os.kill(self._worker, signal.SIGSTOP)
        except OSError:
            return  # gone: the wait sees it
        try:
            time.sleep(seconds)
            self.held_s += seconds
        finally:
            try:
                os.kill(self._worker, signal.SIGCONT)
            except OSError:
                pass
