"""A crawler worker: Scrapy, fed from the bus, publishing to the bus and page store.

``run()`` blocks in the Twisted reactor, which can only run once per process and
wants the main thread (for signal handlers). Other services of the embedded mode
run in threads beside it and stop it with ``stop()``.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from scrapy.crawler import CrawlerProcess
from twisted.python.failure import Failure

from services.common.config import Settings
from services.common.domain.messages import FetchJob
from services.common.ports import Bus, PageStore
from services.crawler.crawl_session import CrawlSession, WorkerStats
from services.crawler.page_publisher import PagePublisher
from services.crawler.scrapy_settings import scrapy_settings
from services.crawler.spider import TansuoSpider

logger = logging.getLogger(__name__)
_QUIET_LOGGERS = ("scrapy", "twisted", "protego", "filelock", "charset_normalizer")


class CrawlerWorker:
    """Fetches the jobs on TOPIC_FETCHES until stopped. One ``run()`` per process."""

    def __init__(
        self,
        cfg: Settings,
        bus: Bus,
        store: PageStore,
        lease_check: Callable[[FetchJob], bool] | None = None,
        heartbeat: Callable[[], None] | None = None,
    ) -> None:
        """``lease_check`` (see services.scheduler.lease_check) lets the worker drop
        redelivered jobs that the frontier has already finished. ``heartbeat`` is
        called on every bus-poll tick of the reactor, which proves it is not stuck."""
        self._cfg = cfg
        self.stats = WorkerStats()
        self._session = CrawlSession(
            cfg=cfg,
            bus=bus,
            publisher=PagePublisher(bus, store, self.stats),
            lease_check=lease_check,
            on_tick=heartbeat,
        )
        self._started = False

    def run(self) -> None:
        """Block until ``stop()``, SIGINT or SIGTERM; in-flight fetches are finished first.
        A second Ctrl-C abandons them (their jobs stay uncommitted and come back)."""
        if self._started:
            raise RuntimeError("CrawlerWorker.run() can be called once: the reactor cannot restart")
        self._started = True
        in_main = threading.current_thread() is threading.main_thread()
        with _restoring_signals(in_main):
            settings = scrapy_settings(self._cfg) | {"LOG_INSTALL_ROOT_HANDLER": _no_logging_yet()}
            process = CrawlerProcess(settings)
            _quiet_logging()
            started = process.crawl(TansuoSpider, session=self._session)
            started.addErrback(_stopped_while_starting)
            process.start(stop_after_crawl=True, install_signal_handlers=in_main)
        # After a forced stop the scheduler never closed: commit what was published anyway.
        self._session.publisher.commit_published()
        if process.bootstrap_failed:
            raise RuntimeError("the crawler failed to start; see the log above")

    def stop(self) -> None:
        """Thread-safe and idempotent; ``run()`` returns once in-flight fetches are done."""
        self._session.stop_requested.set()

    @property
    def in_flight(self) -> int:
        return self._session.in_flight


def _stopped_while_starting(failure: Failure) -> Failure | None:
    """A Ctrl-C while Scrapy builds its engine (it imports its download handlers then)
    fails the Deferred of ``crawl()`` with KeyboardInterrupt, which Twisted would print
    as an unhandled error with a traceback. The user asked to stop, and the crawl ends
    as a stopped one; any other failure passes through unchanged."""
    if failure.check(KeyboardInterrupt):
        logger.info("stopped while the crawler was starting")
        return None
    return failure


def _no_logging_yet() -> bool:
    # If the CLI already set up logging (e.g. a rich handler), Scrapy must not add its own.
    return not logging.getLogger().handlers


def _quiet_logging() -> None:
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


@contextmanager
def _restoring_signals(active: bool) -> Iterator[None]:
    """Scrapy leaves its shutdown handlers installed; put the caller's back afterwards."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)} if active else {}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
