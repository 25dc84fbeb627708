"""The extractor service loop: documents fetched in, page events with their text out.

The crawler stores a document's bytes, finishes its fetch (so the host's politeness
slot is free at once) and publishes the document's event on ``documents.fetched``.
Here each event is completed in a worker process (services/extractor/extraction_pool.py)
and published on ``pages.fetched``, where the indexer takes it like a page's.

Delivery is at-least-once: a batch's offsets are committed only after its events are
published and flushed; a crash in between extracts the batch again, and the indexer's
upsert of the same document changes nothing.
"""

from __future__ import annotations

import dataclasses
import logging
import threading

from services.common.config import Settings
from services.common.domain.messages import TOPIC_DOCUMENTS, TOPIC_PAGES, PageEvent
from services.common.ports import Bus
from services.common.runtime.metrics import DOCUMENTS_EXTRACTED, ERRORS, EXTRACTION_DURATION
from services.crawler.extract import content_hash
from services.crawler.message_caps import OutcomeCaps, cap_event
from services.extractor.extraction_pool import ExtractionJob, ExtractionOutcome, ExtractionPool

log = logging.getLogger(__name__)

GROUP = "extractor"


def extracted_event(event: PageEvent, outcome: ExtractionOutcome, caps: OutcomeCaps) -> PageEvent:
    """The crawler's event of a document, completed with what extraction made of it: its
    text, or the reason it was skipped (``error`` "document_<reason>", which the
    scheduler records for `tansuo report`)."""
    if outcome.text is None:
        return dataclasses.replace(event, extracted=True, error=f"document_{outcome.skipped or 'failed'}")
    text = outcome.text
    done = dataclasses.replace(
        event,
        extracted=True,
        document=text.format,
        pages=text.pages,
        title=text.title,
        headings=list(text.headings),
        body=text.body,
        content_hash=content_hash(text.title, text.body),
        limits=[*event.limits, *text.limits],
    )
    return cap_event(done, caps)


def outcome_label(event: PageEvent) -> str:
    """ok, cut, or the reason the document was skipped: a small set, fit for a label."""
    if event.error:
        return event.error.removeprefix("document_")
    return "cut" if any(limit.startswith("document_") for limit in event.limits) else "ok"


class Extractor:
    """Consumes ``documents.fetched`` in batches of ``documents_workers`` documents."""

    def __init__(self, cfg: Settings, bus: Bus, pool: ExtractionPool) -> None:
        self._cfg = cfg
        self._bus = bus
        self._pool = pool
        self._caps = OutcomeCaps.from_settings(cfg)
        self._lock = threading.Lock()
        self._extracted = 0
        self._skipped = 0
        self.in_flight = 0  # documents handed to workers and not yet published

    @property
    def extracted(self) -> int:
        with self._lock:
            return self._extracted

    @property
    def skipped(self) -> int:
        with self._lock:
            return self._skipped

    def step(self, timeout_s: float) -> int:
        """Poll once, extract what came, publish, commit; returns how many messages."""
        messages = self._bus.poll(TOPIC_DOCUMENTS, GROUP, timeout_s, max_messages=self._cfg.documents_workers)
        if not messages:
            return 0
        events: list[PageEvent] = []
        for msg in messages:
            try:
                events.append(PageEvent.from_bytes(msg.payload))
            except (ValueError, TypeError, KeyError) as exc:
                log.error("skipping malformed document event at offset %s: %s", msg.offset, exc)
                ERRORS.labels(service="extractor", kind="malformed_message").inc()
        self.in_flight = len(events)
        try:
            outcomes = self._pool.extract_all([ExtractionJob(e.store_key, e.url, e.content_type) for e in events])
            for event, outcome in zip(events, outcomes, strict=True):
                done = extracted_event(event, outcome, self._caps)
                self._bus.publish(TOPIC_PAGES, done.to_bytes(), key=done.host)
                self._count(event, done, outcome)
            self._bus.flush()
            self._bus.commit(GROUP, messages)
        finally:
            self.in_flight = 0
        return len(messages)

    def _count(self, fetched: PageEvent, done: PageEvent, outcome: ExtractionOutcome) -> None:
        label = outcome_label(done)
        DOCUMENTS_EXTRACTED.labels(format=done.document or fetched.document, outcome=label).inc()
        EXTRACTION_DURATION.labels(family=fetched.document or "unknown").observe(outcome.seconds)
        with self._lock:
            if done.error:
                self._skipped += 1
            else:
                self._extracted += 1
        if done.error:
            log.warning("document %s skipped: %s", done.url, outcome.detail or outcome.skipped)

    def run(self, stop: threading.Event, poll_timeout_s: float = 1.0) -> None:
        while not stop.is_set():
            self.step(poll_timeout_s)

    def close(self) -> None:
        self._pool.close()
