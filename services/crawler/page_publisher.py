"""Make one fetch durable and visible: raw bytes to the page store, links and the page
event to the bus, and only then the fetch job committed (at-least-once: a crash in
between re-fetches the page, it never loses it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.threads import deferToThread

from services.common.domain.messages import TOPIC_DOCUMENTS, TOPIC_LINKS, TOPIC_PAGES
from services.common.ports import Bus, Message, PageStore
from services.common.runtime.json_logging import log_context
from services.common.runtime.metrics import ERRORS
from services.common.runtime.retry_backoff import describe
from services.crawler.crawl_session import CONSUMER_GROUP, WorkerStats
from services.crawler.fetch_outcome import LARGE_BODY_BYTES, FetchOutcome, hashed

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from services.crawler.crawl_session import CrawlSession

logger = logging.getLogger(__name__)


class PagePublisher:
    """Publishes outcomes at once but commits their jobs in batches (``commit_published``),
    because on Kafka a durable commit needs a flush, and one flush per page is slow.

    A page is two messages, its links and its event, and a broker outage can lose one
    and deliver the other: a page marked fetched whose links never reached the
    scheduler or the link graph, and never will, since its job is done. The bus reports
    a lost send late (from a later publish or flush, maybe another page's), so after any
    failure every outcome not yet confirmed by a clean flush is sent again before a job
    is committed. Each consumer is idempotent, so a message that had arrived changes
    nothing the second time.
    """

    def __init__(self, bus: Bus, store: PageStore, stats: WorkerStats) -> None:
        self._bus = bus
        self._store = store
        self._stats = stats
        self._uncommitted: list[Message] = []
        self._unconfirmed: list[FetchOutcome] = []  # sent since the last clean flush
        self._resend = False

    def publish(self, outcome: FetchOutcome) -> None:
        """Store the page and send its messages. Raises only if the page could not be
        stored; a bus failure is kept for ``commit_published`` to repair."""
        self.store(outcome)
        self.send_stored(outcome)

    @property
    def store_is_remote(self) -> bool:
        return self._store.remote

    def store(self, outcome: FetchOutcome) -> None:
        """The page's bytes to the page store; safe to call from another thread (the
        stores are), so that a store across the network does not hold up the reactor."""
        if outcome.page is not None:
            self._store.put(outcome.event.store_key, outcome.page)

    def send_stored(self, outcome: FetchOutcome) -> None:
        """Send the messages of an outcome whose page is stored (``publish``'s second half)."""
        event = outcome.event
        self._unconfirmed.append(outcome)
        self._uncommitted.append(outcome.message)
        self._stats.record(event)
        try:
            self._send(outcome)
        except Exception as exc:  # sent again before any commit
            self._failed(exc)

    def _send(self, outcome: FetchOutcome) -> None:
        event = outcome.event
        # Links first: the scheduler sees a page's outlinks before it hears the page is done.
        if outcome.links is not None:
            self._bus.publish(TOPIC_LINKS, outcome.links.to_bytes(), key=event.host)
        for chunk in outcome.more_links:
            self._bus.publish(TOPIC_LINKS, chunk.to_bytes(), key=event.host)
        self._bus.publish(TOPIC_PAGES, event.to_bytes(), key=event.host)
        # After the event: the extractor's completed event follows it on pages.fetched
        # (same key, same partition), so the scheduler sees the fetch finished first.
        if outcome.document is not None:
            self._bus.publish(TOPIC_DOCUMENTS, outcome.document.to_bytes(), key=event.host)

    def _failed(self, exc: BaseException) -> None:
        if not self._resend:
            logger.warning("bus send failed (%s); the %d page(s) not yet confirmed will be sent again",
                           describe(exc), len(self._unconfirmed))  # fmt: skip
        self._resend = True

    def commit_published(self) -> int:
        """Flush the bus, then commit every job published so far. Returns how many.
        Raises while the bus cannot take the messages; nothing is committed then."""
        if not self._uncommitted:
            return 0
        if self._resend:
            self._send_again()
        batch, confirmed = list(self._uncommitted), len(self._unconfirmed)
        try:
            self._bus.flush()
        except Exception as exc:
            self._failed(exc)
            raise
        self._bus.commit(CONSUMER_GROUP, batch)
        del self._uncommitted[: len(batch)]
        del self._unconfirmed[:confirmed]
        return len(batch)

    def _send_again(self) -> None:
        try:
            self._bus.flush()  # collects the late reports of earlier sends: all are resent anyway
        except Exception:  # the outcomes behind it are in _unconfirmed
            pass
        for outcome in list(self._unconfirmed):
            try:
                self._send(outcome)
            except ConnectionError:
                raise  # still down: try again on a later tick
            except Exception as exc:  # this page can never be sent (too large?)
                logger.error("cannot publish %s (%s); dropping it", outcome.event.url, describe(exc))
                ERRORS.labels(service="crawler", kind="publish_failed").inc()
                self._unconfirmed.remove(outcome)
        self._resend = False

    def skip(self, message: Message) -> None:
        """Commit a message that is not a valid job: redelivering it would fail again."""
        self._uncommitted.append(message)


def _hash_and_store(publisher: PagePublisher, item: FetchOutcome) -> FetchOutcome:
    """On a reactor pool thread: a large document's hash, then the page's bytes stored."""
    item = hashed(item)
    publisher.store(item)
    return item


class PublishPipeline:
    """Scrapy item pipeline: every item the spider yields is a FetchOutcome."""

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PublishPipeline:
        return cls(crawler)

    async def process_item(self, item: FetchOutcome) -> FetchOutcome:
        """A page for a remote store (S3) is stored on a reactor pool thread, then its
        messages are sent from the reactor's: the put waits for the network (2 ms on
        loopback, more across a cluster), and the reactor fetches meanwhile. A local
        store's put is made here, as handing each page to a thread slows the embedded
        crawl (docs/benchmarks.md, 'Sixth round (issue 12): the page store'); but a body
        over LARGE_BODY_BYTES (a large document) is hashed and written on the thread,
        where its SHA-1 and write do not hold up the fetches. Scrapy waits for every
        item before it closes the spider, so a stop still publishes every page
        fetched."""
        session: CrawlSession = self._crawler.spider.session  # type: ignore[union-attr]
        publisher = session.publisher
        failed: Exception | None = None
        try:
            if item.page is not None and (publisher.store_is_remote or len(item.page.body) > LARGE_BODY_BYTES):
                item = await maybe_deferred_to_future(deferToThread(_hash_and_store, publisher, item))
            else:
                publisher.store(item)
        except Exception as exc:
            failed = exc
        return self._sent(session, item, failed)

    def _sent(self, session: CrawlSession, item: FetchOutcome, failed: Exception | None) -> FetchOutcome:
        with log_context(job_id=item.event.lease_id):
            try:
                if failed is not None:
                    raise failed
                session.publisher.send_stored(item)
            except Exception as exc:
                # The page could not be stored, so nothing was sent. It is not lost: its
                # lease runs out in the frontier, which then hands the URL out again as
                # a new job. This job is committed all the same: left uncommitted, it
                # would hold its partition's committed offset (and the lag that
                # autoscaling reads) back for good.
                logger.warning("could not store %s (%s); the frontier will hand it out again "
                               "when its lease expires", item.event.url, describe(exc))  # fmt: skip
                ERRORS.labels(service="crawler", kind="publish_failed").inc()
                session.publisher.skip(item.message)
            finally:
                session.in_flight -= 1
        return item
