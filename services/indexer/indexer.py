"""The indexer service loop: page events in, searchable documents out.

Delivery is at-least-once, so everything here is idempotent: an upsert of the same
page replaces it, a delete of a missing URL does nothing. Bus offsets are
committed only after the index commit that holds their work; a crash in between
replays those events, which changes nothing.
"""

from __future__ import annotations

import logging
import threading
import time

from services.common.config import Settings
from services.common.domain.document_url import site_of
from services.common.domain.documents import IndexDoc
from services.common.domain.messages import (
    TOPIC_INDEXED,
    TOPIC_PAGES,
    TOPIC_REMOVALS,
    IndexedDocuments,
    PageEvent,
    PageRemoval,
)
from services.common.domain.url_canonical import canonical_preference
from services.common.ports import Bus, Message, SearchIndex
from services.common.runtime.metrics import (
    DOCUMENTS_DELETED,
    DUPLICATES,
    ERRORS,
    INDEXING_LATENCY,
    PAGES_INDEXED,
)
from services.common.runtime.native_code import warn_if_missing
from services.indexer.document_builder import build_document, doc_url

log = logging.getLogger(__name__)

GROUP = "indexer"
# URLs per documents.indexed message: a commit of a full batch fits in a few small messages.
ANNOUNCE_CHUNK = 500


class Indexer:
    """Consumes ``pages.fetched`` and keeps the search index in step with it.

    - An indexable page is upserted unless another URL already holds the same
      content (mirrors, ``?print=1`` variants): the first URL wins.
    - A 2xx page marked noindex is deleted from the index.
    - Errors, redirects, 4xx and robots.txt jobs are ignored: a page that
      disappears keeps its last good copy until the ranker or a recrawl says otherwise.

    ``step``/``flush`` are called by one thread; the counters may be read from any.
    """

    def __init__(self, cfg: Settings, bus: Bus, index: SearchIndex) -> None:
        self._cfg = cfg
        self._bus = bus
        self._index = index
        self._lock = threading.Lock()
        self._indexed = 0
        self._duplicates = 0
        self._deleted = 0
        self._documents = 0
        # Work done since the last index commit.
        self._messages: list[Message] = []
        self._writes = 0
        self._dirty = False
        # content hash -> URL and URLs deleted, in the uncommitted batch: url_for_hash
        # only knows committed documents.
        self._batch_hashes: dict[str, str] = {}
        self._batch_deleted: set[str] = set()
        self._batch_fetched_at: list[float] = []  # of the upserts, for the indexing latency
        self._batch_upserted: dict[str, None] = {}  # URLs upserted, announced after the commit
        self._last_commit = time.monotonic()
        self._started = time.time()  # idle is counted from here at the earliest
        warn_if_missing()

    @property
    def indexed(self) -> int:
        """Documents upserted (counted when written, before the commit)."""
        with self._lock:
            return self._indexed

    @property
    def documents(self) -> int:
        """Documents in the index after this indexer's last commit: the crawl's
        "indexed" figure, the same as the index's own count at the end."""
        with self._lock:
            return self._documents

    @property
    def duplicates(self) -> int:
        """Pages skipped because another URL holds the same content."""
        with self._lock:
            return self._duplicates

    @property
    def deleted(self) -> int:
        """Documents deleted because their page became noindex."""
        with self._lock:
            return self._deleted

    def _count(self, indexed: int = 0, duplicates: int = 0, deleted: int = 0) -> None:
        with self._lock:
            self._indexed += indexed
            self._duplicates += duplicates
            self._deleted += deleted

    def _owner_of(self, content_hash: str) -> str | None:
        if not content_hash:
            return None
        owner = self._batch_hashes.get(content_hash)
        if owner is not None:
            return owner
        owner = self._index.url_for_hash(content_hash)
        return None if owner in self._batch_deleted else owner

    def _forget(self, url: str) -> None:
        for h in [h for h, u in self._batch_hashes.items() if u == url]:
            del self._batch_hashes[h]

    def _rivals(self, doc: IndexDoc) -> dict[str, str]:
        """Other URLs of the same site holding the same content ("exact").

        Only exact copies on one site are stored once (a print version, a tracking
        parameter). Near-duplicates, and copies on other sites, stay in the index: each
        is findable by its own text and by ``site:``, and the search service folds them
        into one result at query time (services/search/result_grouping.py)."""
        rivals: dict[str, str] = {}
        owner = self._owner_of(doc.content_hash)
        if owner is not None and site_of(owner) == doc.site:
            rivals[owner] = "exact"
        rivals.pop(doc.url, None)
        return rivals

    def _handle(self, event: PageEvent) -> None:
        if event.indexable:
            self._index_page(build_document(event))
        elif event.kind == "page" and event.noindex and 200 <= event.status < 300 and not event.error:
            # The page may have been indexed under either its URL or its canonical one.
            self._drop(sorted({doc_url(event), event.url}))
            self._count(deleted=1)
            DOCUMENTS_DELETED.labels(reason="noindex").inc()

    def _index_page(self, doc: IndexDoc) -> None:
        """One copy of each content: the most canonical-looking URL wins, whatever the
        crawl order, so a print version or a tracking-parameter copy never displaces it."""
        rivals = self._rivals(doc)
        preferred = [r for r in rivals if canonical_preference(r) < canonical_preference(doc.url)]
        if preferred:
            self._count(duplicates=1)
            DUPLICATES.labels(kind="exact" if any(rivals[r] == "exact" for r in preferred) else "near").inc()
            return
        if rivals:
            self._drop(sorted(rivals))
            self._count(duplicates=len(rivals))
            for kind in rivals.values():
                DUPLICATES.labels(kind=kind).inc()
            DOCUMENTS_DELETED.labels(reason="duplicate").inc(len(rivals))
        self._index.upsert([doc])
        self._forget(doc.url)  # its old content, if it changed within the batch
        if doc.content_hash:
            self._batch_hashes[doc.content_hash] = doc.url
        self._batch_deleted.discard(doc.url)
        self._batch_upserted[doc.url] = None
        self._batch_fetched_at.append(doc.fetched_at)
        self._writes += 1
        self._dirty = True
        self._count(indexed=1)

    def _drop(self, urls: list[str]) -> None:
        """Delete documents in this batch: pending until the next commit, and remembered
        so that the committed index's answers about them are not trusted meanwhile."""
        self._index.delete(urls)
        for u in urls:
            self._forget(u)
            self._batch_deleted.add(u)
        self._writes += 1
        self._dirty = True

    def _consume_removals(self) -> int:
        """Gone and redirected pages leave the index, unless fetched again since."""
        messages = self._bus.poll(TOPIC_REMOVALS, GROUP, 0.0, max_messages=self._cfg.indexer_batch_size)
        for msg in messages:
            try:
                removal = PageRemoval.from_bytes(msg.payload)
            except (ValueError, TypeError, KeyError) as exc:
                log.error("skipping malformed removal at offset %s: %s", msg.offset, exc)
                ERRORS.labels(service="indexer", kind="malformed_message").inc()
                continue
            doc = self._index.get(removal.url)
            if doc is not None and doc.fetched_at <= removal.at:
                self._drop([removal.url])
                self._count(deleted=1)
                DOCUMENTS_DELETED.labels(reason=removal.kind).inc()
        self._messages.extend(messages)
        return len(messages)

    def _interval(self) -> float:
        """How long a commit may wait: the commit interval while someone searches the
        index, the idle interval once nobody has for ``indexer_search_idle_after_s``."""
        cfg = self._cfg
        if cfg.indexer_search_idle_after_s <= 0 or cfg.indexer_idle_commit_interval_s <= cfg.indexer_commit_interval_s:
            return cfg.indexer_commit_interval_s
        searched = self._index.searched_at()
        if searched is None or time.time() - max(searched, self._started) < cfg.indexer_search_idle_after_s:
            return cfg.indexer_commit_interval_s
        return cfg.indexer_idle_commit_interval_s

    def _due(self, interval: float) -> bool:
        if not self._messages:
            return False
        if self._writes >= self._cfg.indexer_batch_size:
            return True
        return time.monotonic() - self._last_commit >= interval

    def step(self, timeout_s: float) -> int:
        """Poll once, handle what came, commit if a batch is due; returns the number
        of messages handled."""
        interval = self._interval()
        if self._messages:
            # Wake up in time for the commit that is due, however long the caller waits,
            # and within a commit interval while idle: a search may have come meanwhile.
            until_due = interval - (time.monotonic() - self._last_commit)
            timeout_s = max(0.0, min(timeout_s, until_due, self._cfg.indexer_commit_interval_s))
        removed = self._consume_removals()
        messages = self._bus.poll(
            TOPIC_PAGES, GROUP, timeout_s if not removed else 0.0, max_messages=self._cfg.indexer_batch_size
        )
        for msg in messages:
            try:
                event = PageEvent.from_bytes(msg.payload)
            except (ValueError, TypeError, KeyError) as exc:
                # A malformed message can never succeed; replaying it forever would stall the topic.
                log.error("skipping malformed page event at offset %s: %s", msg.offset, exc)
                ERRORS.labels(service="indexer", kind="malformed_message").inc()
            else:
                self._handle(event)
            self._messages.append(msg)
        if self._due(interval):
            self.flush()
        return removed + len(messages)

    def flush(self) -> None:
        """Commit the index, announce what it made searchable, then commit the bus
        offsets of the messages it now holds."""
        if self._dirty:
            self._index.commit()
            documents = self._index.count()
            with self._lock:
                self._documents = documents
            committed_at = time.time()  # wall clock, like the crawler's fetched_at
            for fetched_at in self._batch_fetched_at:
                if fetched_at:
                    INDEXING_LATENCY.observe(max(0.0, committed_at - fetched_at))
            PAGES_INDEXED.inc(len(self._batch_fetched_at))
            self._announce(committed_at)
        if self._messages:
            self._bus.commit(GROUP, self._messages)
        self._messages = []
        self._writes = 0
        self._dirty = False
        self._batch_hashes.clear()
        self._batch_deleted.clear()
        self._batch_fetched_at.clear()
        self._batch_upserted.clear()
        self._last_commit = time.monotonic()

    def _announce(self, committed_at: float) -> None:
        """Tell the ranker which documents this commit made searchable, durably before
        the page events are committed: a crash replays the events and announces again,
        so a document never misses its link fields for want of an announcement."""
        deleted = self._batch_deleted
        urls = [u for u in self._batch_upserted if u not in deleted]
        for i in range(0, len(urls), ANNOUNCE_CHUNK):
            chunk = urls[i : i + ANNOUNCE_CHUNK]
            self._bus.publish(TOPIC_INDEXED, IndexedDocuments(chunk, committed_at).to_bytes(), key=chunk[0])
        if urls:
            self._bus.flush()

    def run(self, stop: threading.Event, poll_timeout_s: float = 1.0) -> None:
        """Loop until ``stop`` is set, then commit what is pending.

        An exception ends the loop without a flush: its batch is redelivered.
        """
        while not stop.is_set():
            self.step(poll_timeout_s)
        self.flush()
