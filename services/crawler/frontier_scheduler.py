"""Scrapy scheduler that takes fetch jobs from the bus instead of holding URLs.

Scrapy's engine asks ``next_request`` when it has room, but once that returns None
it only asks again on its 5-second heartbeat: every moment the bus runs dry would
idle the crawler for seconds. So a LoopingCall polls the bus every few milliseconds
(never blocking: timeout 0) while fewer than ``crawler_concurrency`` jobs are in
flight, and hands each job to ``engine.crawl``, which enqueues it here and wakes the
engine at once. The same loop commits published jobs in batches.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Self

from scrapy import Request
from scrapy.core.scheduler import BaseScheduler
from scrapy.utils.defer import deferred_from_coro
from twisted.internet.task import LoopingCall

from services.common.domain.messages import TOPIC_FETCHES, FetchJob
from services.common.ports import Message
from services.common.runtime.json_logging import log_context
from services.common.runtime.metrics import CRAWLER_IN_FLIGHT, ERRORS, STALE_JOBS
from services.common.runtime.retry_backoff import Backoff, describe
from services.crawler.crawl_session import CONSUMER_GROUP, CrawlSession
from services.crawler.fetch_outcome import outcome_from_error

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from services.crawler.spider import TansuoSpider

logger = logging.getLogger(__name__)


class FrontierScheduler(BaseScheduler):
    def __init__(self, crawler: Crawler, session: CrawlSession, poll_interval_s: float) -> None:
        self._crawler = crawler
        self._session = session
        self._interval = poll_interval_s
        self._ready: deque[Request] = deque()
        self._loop = LoopingCall(self._tick)
        self._stopping = False
        # The tick runs every few milliseconds: while the bus is down, back off
        # instead of logging the same failure forty times a second.
        self._backoff = Backoff()
        self._retry_at = 0.0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        spider: TansuoSpider = crawler.spider  # type: ignore[assignment]
        return cls(crawler, spider.session, crawler.settings.getfloat("TANSUO_POLL_INTERVAL_S"))

    def open(self, spider: Spider) -> None:
        done = self._loop.start(self._interval, now=False)
        done.addErrback(lambda f: logger.error("bus poll loop died: %s", f.getTraceback()))

    def close(self, reason: str) -> None:
        if self._loop.running:
            self._loop.stop()
        self._session.publisher.commit_published()
        if self._ready:
            # Polled but never sent: left uncommitted, so they come back to a crawler.
            logger.warning("%d fetch jobs not started before shutdown", len(self._ready))

    def has_pending_requests(self) -> bool:
        return bool(self._ready)

    def enqueue_request(self, request: Request) -> bool:
        self._ready.append(request)
        return True

    def next_request(self) -> Request | None:
        return self._ready.popleft() if self._ready else None

    def _tick(self) -> None:
        session = self._session
        if session.on_tick is not None:
            session.on_tick()
        CRAWLER_IN_FLIGHT.set(session.in_flight)
        if session.stop_requested.is_set():
            # Stopping before the engine runs would be a no-op that leaves it running.
            # close() commits what was published, so a bus outage cannot block the stop.
            if self._crawler.engine.running:
                self._begin_stop()
            return
        if self._retry_at and time.monotonic() < self._retry_at:
            return
        # An exception would end the LoopingCall and silently stall the crawler.
        try:
            session.publisher.commit_published()
            if self._accepting():
                self._take_jobs()
        except Exception as exc:
            delay = self._backoff.next_delay()
            self._retry_at = time.monotonic() + delay
            # The traceback once per outage, in case it is a bug rather than the bus.
            logger.warning(
                "bus poll failed (%s); polling again in %.0f s", describe(exc), delay,
                exc_info=self._backoff.failures == 1,
                extra={"backend": "bus", "error": describe(exc), "retry_in_s": delay},
            )  # fmt: skip
            ERRORS.labels(service="crawler", kind="backend_unavailable").inc()
        else:
            if self._retry_at:
                self._retry_at = 0.0
                self._backoff.reset()

    def _accepting(self) -> bool:
        engine = self._crawler.engine
        return not self._stopping and self._crawler.crawling and engine.running

    def _take_jobs(self) -> None:
        room = self._session.cfg.crawler_concurrency - self._session.in_flight
        if room <= 0:
            return
        for message in self._session.bus.poll(TOPIC_FETCHES, CONSUMER_GROUP, timeout_s=0, max_messages=room):
            self._hand_over(message)

    def _hand_over(self, message: Message) -> None:
        try:
            job = FetchJob.from_bytes(message.payload)
        except (ValueError, TypeError, KeyError, AttributeError):
            logger.warning("skipping malformed fetch job at offset %s", message.offset)
            ERRORS.labels(service="crawler", kind="malformed_message").inc()
            self._session.publisher.skip(message)
            return
        if not self._lease_current(job):
            logger.debug("dropping stale fetch job for %s", job.url)
            STALE_JOBS.inc()
            self._session.publisher.skip(message)
            return
        spider: TansuoSpider = self._crawler.spider  # type: ignore[assignment]
        try:
            request = spider.request_for(job, message)
        except ValueError:
            self._session.publisher.publish(outcome_from_error(job, message, "bad_url"))
            return
        self._session.in_flight += 1
        self._crawler.engine.crawl(request)

    def _lease_current(self, job: FetchJob) -> bool:
        """Whether the frontier still holds the job's lease; True when it cannot tell.

        Fetching when unsure: a job arriving now is almost always current, the frontier
        ignores the outcome of a stale one anyway, and raising here would strand the
        rest of the polled batch, uncommitted, until a restart.
        """
        check = self._session.lease_check
        if check is None:
            return True
        try:
            return check(job)
        except Exception as exc:
            with log_context(job_id=job.lease_id):
                logger.warning("cannot check the lease of %s (%s); fetching it", job.url, describe(exc))
            ERRORS.labels(service="crawler", kind="lease_check_failed").inc()
            return True

    def _begin_stop(self) -> None:
        """Stop polling, then let Scrapy finish the requests in flight and close."""
        self._stopping = True
        self._loop.stop()
        stopped = deferred_from_coro(self._crawler.stop_async())
        stopped.addErrback(lambda f: logger.error("crawler stop failed: %s", f.getTraceback()))
