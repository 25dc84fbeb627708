"""The ranker: keeps the link graph from ``links.discovered`` and writes PageRank and
inbound anchor text into the search index.

Consuming and ranking are separate on purpose. Consuming is cheap and runs all the
time, so the graph is never far behind the crawl; ranking is a whole-graph job, run
every ``ranker_interval_s`` while the graph keeps changing, and once more on stop.

How link fields reach every document, whichever process indexes it and whenever:

- A run streams the graph by ids (``link_snapshot``), ranks it (``pagerank_of_ids``)
  and writes the fields of every page whose fields changed materially since this
  process last wrote them (``rank_writes``), in bulk updates of ``WRITE_CHUNK`` pages,
  not the whole index every interval.
- The indexer trails the crawl, so a run may compute fields for pages that are not
  indexed yet; the index ignores those. After each commit the indexer announces the
  URLs it made searchable (``documents.indexed``), and the ranker writes the fields of
  its last run into them at once: no recomputation, and no waiting for the graph to
  change again.
- A page announced before any run has ranked it waits for the next run, which comes
  within ``ranker_interval_s`` because its own link batch made the graph dirty, and
  sooner once the crawl goes quiet: when documents wait and no link batch has changed
  the graph for ``ranker_quiet_s``, the graph is as complete as it will be for now, so
  a run comes at once rather than at the end of the interval, which the last pages of
  a crawl would otherwise wait out. Such early runs keep to at most a tenth of
  the ranker's time (``EARLY_RUN_DUTY``), so neither a large graph nor a continuous
  crawl's trickle of new pages turns into a whole-graph run per page. The
  ``tansuo_ranker_documents_waiting`` gauge counts such pages, and
  ``tansuo_ranker_oldest_waiting_seconds`` says how long the oldest has waited.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from services.common.config import Settings
from services.common.domain.documents import LinkFields
from services.common.domain.messages import TOPIC_INDEXED, TOPIC_LINKS, IndexedDocuments
from services.common.ports import Bus, LinkGraph, Message, SearchIndex
from services.common.runtime.metrics import (
    ERRORS,
    PAGERANK_DURATION,
    PAGERANK_EDGES,
    PAGERANK_NODES,
    RANKER_DOCUMENTS_WAITING,
    RANKER_INTERVAL,
    RANKER_OLDEST_WAITING,
)
from services.ranker.anchor_text import joined_by_node
from services.ranker.link_batches import BadBatch, PageLinks, page_links
from services.ranker.link_snapshot import read_snapshot
from services.ranker.pagerank import pagerank_of_ids
from services.ranker.rank_writes import WrittenFields
from services.ranker.ranked_pages import RankedPages

log = logging.getLogger(__name__)

GROUP = "ranker"
# Pages per set_link_fields call: one bulk request, and a bounded dict of fields.
WRITE_CHUNK = 10_000
# An early run (documents waiting, graph quiet) needs this many times the last run's
# duration since that run began: whole-graph runs then take at most about a tenth of
# the ranker's time, however large the graph or however often a page trickles in.
EARLY_RUN_DUTY = 10.0


@dataclass(frozen=True)
class RankRun:
    """What one recompute did."""

    nodes: int
    edges: int
    iterations: int
    converged: bool
    seconds: float


@dataclass(frozen=True)
class RankerStats:
    """A consistent snapshot of the counters, safe to read from any thread."""

    batches: int  # link batches stored in the graph
    links: int  # links stored (after canonicalising and dropping)
    dropped_links: int  # targets that were not http(s) URLs, or the page itself
    bad_batches: int  # messages that could not be decoded, or had a bad source URL
    runs: int
    last_run: RankRun | None
    dirty: bool  # the graph changed since the last recompute began
    written: int  # documents whose link fields were written (runs and announcements)
    waiting: int  # documents announced as indexed that no run has ranked yet


def _default_segment() -> Callable[[str], list[str]]:
    # Imported when first needed: the indexer owns segmentation (and loading jieba's
    # dictionary), and a ranker that only consumes links should not pay for it.
    from services.common.analysis.words import segment

    return segment


class Ranker:
    """Consumes link batches into ``graph`` and writes link fields into ``index``.

    ``segment`` splits anchor text into index tokens; it defaults to the indexer's
    ``segment`` so that anchors and page text are tokenised alike.
    """

    def __init__(
        self,
        cfg: Settings,
        bus: Bus,
        graph: LinkGraph,
        index: SearchIndex,
        segment: Callable[[str], list[str]] | None = None,
    ) -> None:
        self._cfg = cfg
        self._bus = bus
        self._graph = graph
        self._index = index
        self._segment = segment
        self._lock = threading.Lock()  # guards the counters and the dirty flag
        self._recompute_lock = threading.Lock()  # one whole-graph run at a time
        self._batches = 0
        self._links = 0
        self._dropped = 0
        self._bad = 0
        self._runs = 0
        self._last_run: RankRun | None = None
        # A graph left by an earlier process may hold batches that were consumed but
        # never ranked (a crash between the two), so a non-empty graph starts dirty.
        self._dirty = graph.node_count() > 0
        self._tokens_cache: dict[str, str] = {}
        self._last_recompute = time.monotonic()
        self._last_change = time.monotonic()  # when a link batch last changed the graph
        # Fields of the last run, and what this process last wrote per URL id.
        # Guarded by the recompute lock: runs and announcements both write the index.
        self._latest = RankedPages.empty()
        self._written = WrittenFields()
        self._written_count = 0
        RANKER_INTERVAL.set(cfg.ranker_interval_s)
        # URL -> wall time it was announced, for documents no run has ranked yet.
        self._waiting: dict[str, float] = {}
        self._report_waiting(time.time())  # exported from the start: dashboards and alerts see a 0

    def stats(self) -> RankerStats:
        with self._lock:
            return RankerStats(
                self._batches, self._links, self._dropped, self._bad, self._runs, self._last_run, self._dirty,
                self._written_count, len(self._waiting),
            )  # fmt: skip

    def step(self, timeout_s: float = 1.0) -> int:
        """Store one poll's worth of link batches, then give the documents indexed
        since the last step their link fields; returns how many messages it handled.

        Commits only after the graph (or the index) holds them: a crash replays the
        messages, and both ``set_outlinks`` and ``set_link_fields`` replace, so a
        replay changes nothing.
        """
        messages = self._bus.poll(TOPIC_LINKS, GROUP, timeout_s)
        if messages:
            self._store(messages)
        self._bus.commit(GROUP, messages)
        announced = self._bus.poll(TOPIC_INDEXED, GROUP, 0.0, max_messages=50)
        if announced:
            self._on_indexed(announced)
            self._bus.commit(GROUP, announced)
        return len(messages) + len(announced)

    def _on_indexed(self, messages: Sequence[Message]) -> None:
        urls: dict[str, None] = {}
        for message in messages:
            try:
                urls.update(dict.fromkeys(IndexedDocuments.from_bytes(message.payload).urls))
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("skipping undecodable documents.indexed message at offset %s: %s", message.offset, exc)
                ERRORS.labels(service="ranker", kind="malformed_message").inc()
        with self._recompute_lock:
            urls_in = list(urls)
            positions = self._latest.positions(self._graph.url_ids(urls_in)) if len(self._latest) else None
            now = time.time()
            for k, url in enumerate(urls_in):
                if positions is None or positions[k] < 0:
                    self._waiting.setdefault(url, now)
            if positions is not None:
                self._write(self._latest, positions[positions >= 0])
            self._report_waiting(now)

    def _write(self, ranked: RankedPages, positions: np.ndarray) -> None:
        """Write the link fields of these pages into the index, ``WRITE_CHUNK`` pages a
        bulk update, and commit; remembered as written only once committed, so a failed
        write is tried again by the next run."""
        if not len(positions):
            return
        for start in range(0, len(positions), WRITE_CHUNK):
            part = positions[start : start + WRITE_CHUNK].tolist()
            urls = self._graph.urls(ranked.node_ids[part].tolist())
            self._index.set_link_fields({url: self._fields(ranked, p) for url, p in zip(urls, part, strict=True)})
        self._index.commit()
        self._written.remember(ranked.node_ids[positions], ranked.scaled[positions], ranked.anchor_hashes[positions])
        with self._lock:
            self._written_count += len(positions)

    def _fields(self, ranked: RankedPages, position: int) -> LinkFields:
        text = ranked.anchor_text(position)
        return LinkFields(
            pagerank=float(ranked.pagerank[position]),
            rank=float(ranked.rank[position]),
            anchors=text,
            anchors_tokens=self._tokens(text),
        )

    def _report_waiting(self, now: float) -> None:
        RANKER_DOCUMENTS_WAITING.set(len(self._waiting))
        RANKER_OLDEST_WAITING.set(now - min(self._waiting.values()) if self._waiting else 0.0)

    def _store(self, messages: Sequence[Message]) -> None:
        """Every page of a poll in one graph call (one round trip per few hundred pages)."""
        pages: list[PageLinks] = []
        for message in messages:
            try:
                page = page_links(message.payload)
            except BadBatch as exc:
                log.warning("skipping undecodable link batch at offset %s: %s", message.offset, exc)
                ERRORS.labels(service="ranker", kind="malformed_message").inc()
                with self._lock:
                    self._bad += 1
                continue
            if page is not None:
                pages.append(page)
        changed = any(self._graph.set_outlinks_many([(p.source, p.links) for p in pages])) if pages else False
        with self._lock:
            self._batches += len(pages)
            self._links += sum(len(p.links) for p in pages)
            self._dropped += sum(p.dropped for p in pages)
            self._dirty = self._dirty or changed
            if changed:
                self._last_change = time.monotonic()

    def recompute_due(self) -> bool:
        """The graph changed, and either ``ranker_interval_s`` has passed since the last
        run began, or an early run is due (``_early_run_due``)."""
        stats = self.stats()
        if not stats.dirty:
            return False
        since_run = time.monotonic() - self._last_recompute
        return since_run >= self._cfg.ranker_interval_s or self._early_run_due(stats, since_run)

    def _early_run_due(self, stats: RankerStats, since_run: float) -> bool:
        """Documents wait for link fields and the graph has been quiet for
        ``ranker_quiet_s``: the crawl has ended or paused, and nothing is gained by
        making them wait out the interval. Not sooner after the last run began than
        ``EARLY_RUN_DUTY`` times its duration."""
        with self._lock:
            quiet_s = time.monotonic() - self._last_change
        last_run_s = stats.last_run.seconds if stats.last_run is not None else 0.0
        return (
            stats.waiting > 0
            and quiet_s >= self._cfg.ranker_quiet_s
            and since_run >= EARLY_RUN_DUTY * last_run_s
        )

    def recompute(self) -> RankRun:
        """Rank the whole graph and write every node's link fields, then commit the index."""
        with self._recompute_lock:
            started = self._last_recompute = time.monotonic()
            with self._lock:
                # Cleared before reading: a batch stored while we rank marks it again.
                self._dirty = False
            try:
                return self._rank(started)
            except BaseException:
                with self._lock:
                    self._dirty = True  # nothing was ranked; the next run must try again
                raise

    def _rank(self, started: float) -> RankRun:
        snapshot = read_snapshot(self._graph)
        n = len(snapshot.node_ids)
        result = pagerank_of_ids(
            n,
            snapshot.src,
            snapshot.dst,
            damping=self._cfg.ranker_damping,
            tol=self._cfg.ranker_tolerance,
            max_iter=self._cfg.ranker_max_iterations,
        )
        anchor_field, anchors = joined_by_node(n, snapshot.anchor_node, snapshot.anchor_text, snapshot.texts)
        ranked = RankedPages(snapshot.node_ids, result.scores, anchor_field, anchors)
        del snapshot  # the edges are ranked: free them before the writes
        changed = np.flatnonzero(self._written.material(ranked.node_ids, ranked.scaled, ranked.anchor_hashes))
        self._write(ranked, changed)
        log.info("link fields of %d of %d pages changed and were written", len(changed), n)
        self._latest = ranked
        self._settle_waiting(ranked)
        # Keep only texts still in use: most anchors are unchanged next time, and
        # segmenting them again is the slowest part of writing.
        self._tokens_cache = {t: self._tokens_cache[t] for t in anchors if t in self._tokens_cache}
        run = RankRun(n, result.edges, result.iterations, result.converged, time.monotonic() - started)
        PAGERANK_DURATION.observe(run.seconds)
        PAGERANK_NODES.set(run.nodes)
        PAGERANK_EDGES.set(run.edges)
        with self._lock:
            self._runs += 1
            self._last_run = run
        log.info(
            "ranked %d pages, %d links in %d iterations (%.2fs)", run.nodes, run.edges, run.iterations, run.seconds
        )
        return run

    def _settle_waiting(self, ranked: RankedPages) -> None:
        """Documents this run ranked wait no more; a waiting document that left the
        index meanwhile (a removal, a duplicate) is no longer waiting either."""
        urls = list(self._waiting)
        positions = ranked.positions(self._graph.url_ids(urls)) if urls else np.empty(0)
        for url, position in zip(urls, positions.tolist(), strict=True):
            if position >= 0 or self._index.get(url) is None:
                del self._waiting[url]
        self._report_waiting(time.time())

    def _tokens(self, text: str) -> str:
        if not text:
            return ""
        tokens = self._tokens_cache.get(text)
        if tokens is None:
            if self._segment is None:
                self._segment = _default_segment()
                from services.common.analysis.words import on_user_words_changed

                # The operator's user words split anchors otherwise from now on.
                on_user_words_changed(lambda: self._tokens_cache.clear())
            tokens = self._tokens_cache[text] = " ".join(self._segment(text))
        return tokens

    def run(self, stop: threading.Event, final_recompute: bool = True, poll_timeout_s: float = 1.0) -> None:
        """Consume until ``stop`` is set, ranking every ``ranker_interval_s`` while the
        graph changes; on stop, rank once more if anything changed since the last run,
        so that a finished crawl ends with up-to-date ranks. ``stop`` is noticed within
        ``poll_timeout_s`` (a second: SIGTERM is noticed quickly)."""
        while not stop.is_set():
            try:
                self.step(timeout_s=poll_timeout_s)
                if self.recompute_due():
                    self.recompute()
            except Exception:
                # A backend outage must not end the loop: uncommitted batches come
                # back, and a failed run leaves the graph dirty for the next one.
                log.exception("ranker step failed; retrying")
                ERRORS.labels(service="ranker", kind="step_failed").inc()
                stop.wait(1.0)
        if final_recompute and self.stats().dirty:
            self.recompute()
