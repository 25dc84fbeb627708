"""Make one fetch durable and visible: raw bytes to the page store, links and the page
event to the bus, and only then the fetch job committed (at-least-once: a crash in
between re-fetches the page, it never loses it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from services.common.json_logging import log_context
from services.common.retry_backoff import describe
from services.common.metrics import ERRORS
from services.common.model import TOPIC_LINKS, TOPIC_PAGES
from services.common.ports import Bus, Message, PageStore
from services.crawler.crawl_session import CONSUMER_GROUP, WorkerStats
from services.crawler.fetch_outcome import FetchOutcome

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from services.crawler.crawl_session import CrawlSession

logger = logging.getLogger(__name__)


class PagePublisher:
    """Publishes outcomes at once but commits their jobs in batches (``commit_published``),
    because on Kafka a durable commit needs a flush, and one flush per page is slow."""

    def __init__(self, bus: Bus, store: PageStore, stats: WorkerStats) -> None:
        self._bus = bus
        self._store = store
        self._stats = stats
        self._uncommitted: list[Message] = []

    def publish(self, outcome: FetchOutcome) -> None:
        event = outcome.event
        if outcome.page is not None:
            self._store.put(event.store_key, outcome.page)
        # Links first: the scheduler sees a page's outlinks before it hears the page is done.
        if outcome.links is not None:
            self._bus.publish(TOPIC_LINKS, outcome.links.to_bytes(), key=event.host)
        self._bus.publish(TOPIC_PAGES, event.to_bytes(), key=event.host)
        self._uncommitted.append(outcome.message)
        self._stats.record(event)

    def commit_published(self) -> int:
        """Flush the bus, then commit every job published so far. Returns how many."""
        if not self._uncommitted:
            return 0
        # Taken off the list only once flushed: if flush raises, the batch stays and is
        # committed on a later tick, instead of holding the partition's offset back.
        batch = list(self._uncommitted)
        self._bus.flush()
        self._bus.commit(CONSUMER_GROUP, batch)
        del self._uncommitted[: len(batch)]
        return len(batch)

    def skip(self, message: Message) -> None:
        """Commit a message that is not a valid job: redelivering it would fail again."""
        self._uncommitted.append(message)


class PublishPipeline:
    """Scrapy item pipeline: every item the spider yields is a FetchOutcome."""

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PublishPipeline:
        return cls(crawler)

    def process_item(self, item: FetchOutcome) -> FetchOutcome:
        session: CrawlSession = self._crawler.spider.session  # type: ignore[union-attr]
        with log_context(job_id=item.event.lease_id):
            try:
                session.publisher.publish(item)
            except Exception as exc:
                # The page is not lost: its lease runs out in the frontier, which then
                # hands the URL out again as a new job. This job is committed all the
                # same: left uncommitted, it would hold its partition's committed offset
                # (and the lag that autoscaling reads) back for good.
                logger.warning("could not publish %s (%s); the frontier will hand it out again "
                               "when its lease expires", item.event.url, describe(exc))  # fmt: skip
                ERRORS.labels(service="crawler", kind="publish_failed").inc()
                session.publisher.skip(item.message)
            finally:
                session.in_flight -= 1
        return item
