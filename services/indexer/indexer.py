"""The indexer service loop: page events in, searchable documents out.

Delivery is at-least-once, so everything here is idempotent: an upsert of the same
page replaces it, a delete of a missing URL does nothing. Bus offsets are
committed only after the index commit that holds their work; a crash in between
replays those events, which changes nothing.

Events are handled in chunks, not one by one: a chunk's documents are built, its
duplicate and removal checks asked of the index in one request each, and its writes
held by the index adapter for one bulk request (Elasticsearch). Whether a commit is
due is checked after every event, so a page is searchable within the commit interval
plus one chunk's writing, however large the poll.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

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
    INDEXER_LAG,
    INDEXER_POLL_SIZE,
    INDEXING_LATENCY,
    PAGES_INDEXED,
)
from services.common.runtime.native_code import warn_if_missing
from services.indexer.document_builder import build_document, doc_url
from services.indexer.poll_size import PollSize

log = logging.getLogger(__name__)

GROUP = "indexer"
# URLs per documents.indexed message: a commit of a full batch fits in a few small messages.
ANNOUNCE_CHUNK = 500
# Events whose checks go to the index in one request (and whose writes in one bulk
# request, the adapter's bounds permitting), unless a commit falls due first; and the
# characters of built documents held meanwhile (a page's texts can run to 200k each).
CHUNK_EVENTS = 1000
CHUNK_CHARS = 16_000_000


@dataclass(frozen=True)
class _Work:
    """One event of a chunk, decoded: a document to index, URLs a noindex page
    takes out, or a removal to check against the index."""

    doc: IndexDoc | None = None
    noindex: tuple[str, ...] = ()
    removal: PageRemoval | None = None


def _chars(doc: IndexDoc) -> int:
    return (
        len(doc.body) + len(doc.body_tokens) + len(doc.subword_tokens) + len(doc.body_grams) + len(doc.own_text or "")
    )


class Indexer:
    """Consumes ``pages.fetched`` and keeps the search index in step with it.

    - An indexable page is upserted unless another URL already holds the same
      content (mirrors, ``?print=1`` variants): the first URL wins.
    - A 2xx page marked noindex is deleted from the index.
    - Errors, redirects, 4xx and robots.txt jobs are ignored: a page that
      disappears keeps its last good copy until the ranker or a recrawl says otherwise.

    ``step``/``flush`` are called by one thread; the counters and ``lag`` may be
    read from any.
    """

    def __init__(self, cfg: Settings, bus: Bus, index: SearchIndex, count_documents: bool = False) -> None:
        """``count_documents``: read the index's count after each commit, for a crawl's
        progress line; a cluster indexer leaves it off, as it costs a request a commit."""
        self._cfg = cfg
        self._count_documents = count_documents
        self._bus = bus
        self._index = index
        self._lock = threading.Lock()
        self._indexed = 0
        self._duplicates = 0
        self._deleted = 0
        self._documents = 0
        # Messages polled since the last index commit: their work is written, or
        # waiting in the chunk.
        self._messages: list[Message] = []
        self._writes_held = 0  # events that may write: pages to index, noindex pages, removals
        self._oldest_fetch: float | None = None  # of the pages held, for the lag
        self._chunk: list[_Work] = []
        self._chunk_chars = 0
        self._dirty = False
        # content hash -> URL and URLs deleted, in the uncommitted batch: the index's
        # answers cover committed documents only.
        self._batch_hashes: dict[str, str] = {}
        self._batch_deleted: set[str] = set()
        self._batch_fetched_at: list[float] = []  # of the upserts, for the indexing latency
        self._batch_upserted: dict[str, float] = {}  # URL -> fetched_at; announced after the commit
        self._last_commit = time.monotonic()
        self._started = time.time()  # idle is counted from here at the earliest
        self._poll = PollSize(cfg.indexer_batch_size, cfg.indexer_commit_interval_s)
        INDEXER_POLL_SIZE.set(self._poll.size)
        INDEXER_LAG.set_function(self.lag)
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

    @property
    def held(self) -> int:
        """Messages polled whose work no index commit holds yet."""
        return len(self._messages)

    def lag(self) -> float:
        """Seconds since the fetch of the oldest page held (polled, not yet
        searchable); 0 when none is held. ``tansuo_indexer_lag_seconds``."""
        oldest = self._oldest_fetch
        return max(0.0, time.time() - oldest) if oldest is not None else 0.0

    def _count(self, indexed: int = 0, duplicates: int = 0, deleted: int = 0) -> None:
        with self._lock:
            self._indexed += indexed
            self._duplicates += duplicates
            self._deleted += deleted

    # --- taking events in

    def _take(self, msg: Message) -> None:
        """Decode a message and queue its work in the chunk (documents are built here:
        the CPU of a page is spent as it comes, between the commit checks)."""
        self._messages.append(msg)
        try:
            if msg.topic == TOPIC_REMOVALS:
                self._queue(_Work(removal=PageRemoval.from_bytes(msg.payload)))
                return
            event = PageEvent.from_bytes(msg.payload)
        except (ValueError, TypeError, KeyError) as exc:
            # A malformed message can never succeed; replaying it forever would stall the topic.
            log.error("skipping malformed message of %s at offset %s: %s", msg.topic, msg.offset, exc)
            ERRORS.labels(service="indexer", kind="malformed_message").inc()
            return
        if event.indexable:
            doc = build_document(event)
            if doc.fetched_at and (self._oldest_fetch is None or doc.fetched_at < self._oldest_fetch):
                self._oldest_fetch = doc.fetched_at
            self._queue(_Work(doc=doc), _chars(doc))
        elif event.kind == "page" and event.noindex and 200 <= event.status < 300 and not event.error:
            # The page may have been indexed under either its URL or its canonical one.
            self._queue(_Work(noindex=tuple(sorted({doc_url(event), event.url}))))

    def _queue(self, work: _Work, chars: int = 0) -> None:
        self._chunk.append(work)
        self._chunk_chars += chars
        self._writes_held += 1
        if len(self._chunk) >= CHUNK_EVENTS or self._chunk_chars >= CHUNK_CHARS:
            self._write_chunk()

    # --- writing a chunk

    def _write_chunk(self) -> None:
        """Check the chunk's pages and removals against the committed index, one
        request each, then apply its events in order as writes to the index."""
        chunk, self._chunk, self._chunk_chars = self._chunk, [], 0
        if not chunk:
            return
        hashes = {w.doc.content_hash for w in chunk if w.doc is not None and w.doc.content_hash}
        owners = self._index.urls_for_hashes(hashes) if hashes else {}
        removed = {w.removal.url for w in chunk if w.removal is not None}
        fetched = self._index.fetch_times(removed) if removed else {}
        for work in chunk:
            if work.doc is not None:
                self._index_page(work.doc, owners)
            elif work.removal is not None:
                self._remove(work.removal, fetched)
            else:
                self._drop(list(work.noindex))
                self._count(deleted=1)
                DOCUMENTS_DELETED.labels(reason="noindex").inc()

    def _owner_of(self, content_hash: str, committed: dict[str, str]) -> str | None:
        if not content_hash:
            return None
        owner = self._batch_hashes.get(content_hash)
        if owner is not None:
            return owner
        owner = committed.get(content_hash)
        return None if owner in self._batch_deleted else owner

    def _forget(self, url: str) -> None:
        for h in [h for h, u in self._batch_hashes.items() if u == url]:
            del self._batch_hashes[h]

    def _rivals(self, doc: IndexDoc, committed: dict[str, str]) -> dict[str, str]:
        """Other URLs of the same site holding the same content ("exact").

        Only exact copies on one site are stored once (a print version, a tracking
        parameter). Near-duplicates, and copies on other sites, stay in the index: each
        is findable by its own text and by ``site:``, and the search service folds them
        into one result at query time (services/search/result_grouping.py)."""
        rivals: dict[str, str] = {}
        owner = self._owner_of(doc.content_hash, committed)
        if owner is not None and site_of(owner) == doc.site:
            rivals[owner] = "exact"
        rivals.pop(doc.url, None)
        return rivals

    def _index_page(self, doc: IndexDoc, committed: dict[str, str]) -> None:
        """One copy of each content: the most canonical-looking URL wins, whatever the
        crawl order, so a print version or a tracking-parameter copy never displaces it."""
        rivals = self._rivals(doc, committed)
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
        self._batch_upserted[doc.url] = doc.fetched_at
        self._batch_fetched_at.append(doc.fetched_at)
        self._dirty = True
        self._count(indexed=1)

    def _drop(self, urls: list[str]) -> None:
        """Delete documents in this batch: pending until the next commit, and remembered
        so that the committed index's answers about them are not trusted meanwhile."""
        self._index.delete(urls)
        for u in urls:
            self._forget(u)
            self._batch_deleted.add(u)
            self._batch_upserted.pop(u, None)
        self._dirty = True

    def _remove(self, removal: PageRemoval, committed: dict[str, float]) -> None:
        """Gone and redirected pages leave the index, unless fetched again since
        (in this batch, or before its commit)."""
        url = removal.url
        if url in self._batch_deleted:
            return
        fetched_at = self._batch_upserted.get(url, committed.get(url))
        if fetched_at is not None and fetched_at <= removal.at:
            self._drop([url])
            self._count(deleted=1)
            DOCUMENTS_DELETED.labels(reason=removal.kind).inc()

    # --- the loop

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
        if self._writes_held >= self._cfg.indexer_batch_size:
            return True
        return time.monotonic() - self._last_commit >= interval

    def step(self, timeout_s: float) -> int:
        """Poll once, handle what came, committing whenever a commit falls due;
        returns the number of messages handled."""
        interval = self._interval()
        if self._messages:
            # Wake up in time for the commit that is due, however long the caller waits,
            # and within a commit interval while idle: a search may have come meanwhile.
            until_due = interval - (time.monotonic() - self._last_commit)
            timeout_s = max(0.0, min(timeout_s, until_due, self._cfg.indexer_commit_interval_s))
        limit = self._poll.size
        removals = self._bus.poll(TOPIC_REMOVALS, GROUP, 0.0, max_messages=limit)
        pages = self._bus.poll(TOPIC_PAGES, GROUP, timeout_s if not removals else 0.0, max_messages=limit)
        began = time.monotonic()
        for msg in (*removals, *pages):
            self._take(msg)
            if self._due(interval):
                self.flush()
        if self._due(interval):
            self.flush()
        handled = len(removals) + len(pages)
        self._poll.observe(handled, time.monotonic() - began)
        INDEXER_POLL_SIZE.set(self._poll.size)
        return handled

    def flush(self) -> None:
        """Write the chunk, commit the index, announce what it made searchable, then
        commit the bus offsets of the messages it now holds."""
        self._write_chunk()
        if self._dirty:
            self._index.commit()
            if self._count_documents:
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
        self._writes_held = 0
        self._oldest_fetch = None
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
        urls = list(self._batch_upserted)
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
