"""What the Scrapy components of one CrawlerWorker share (the bus, the publisher,
the stop flag, the in-flight count), and the counters the worker exposes.

It reaches them as a spider argument, not through Scrapy settings: settings are
deep-copied per crawler, and a bus connection cannot be copied.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from services.common.config import Settings
from services.common.domain.messages import FetchJob, PageEvent
from services.common.ports import Bus
from services.common.runtime.metrics import FETCHED_BYTES, PAGES_FETCHED

if TYPE_CHECKING:
    from services.crawler.page_publisher import PagePublisher

CONSUMER_GROUP = "crawler"


class WorkerStats:
    """Counters the CLI's progress bar reads from another thread; the same events
    feed the Prometheus counters, so the two never disagree."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fetched = 0
        self._errors = 0
        self._bytes = 0

    def record(self, event: PageEvent) -> None:
        """A response of any status counts as fetched; no response at all is an error."""
        with self._lock:
            if event.status:
                self._fetched += 1
            else:
                self._errors += 1
            self._bytes += event.size
        PAGES_FETCHED.labels(code=str(event.status)).inc()
        FETCHED_BYTES.inc(event.size)

    @property
    def fetched(self) -> int:
        with self._lock:
            return self._fetched

    @property
    def errors(self) -> int:
        with self._lock:
            return self._errors

    @property
    def bytes(self) -> int:
        with self._lock:
            return self._bytes


@dataclass
class CrawlSession:
    cfg: Settings
    bus: Bus
    publisher: PagePublisher
    stop_requested: threading.Event = field(default_factory=threading.Event)
    # Asked before each fetch; False drops a job whose lease the frontier no longer holds.
    lease_check: Callable[[FetchJob], bool] | None = None
    in_flight: int = 0  # jobs handed to Scrapy and not yet published; reactor thread only
    # Called on every poll tick of the reactor: a service's liveness heartbeat.
    on_tick: Callable[[], None] | None = None
