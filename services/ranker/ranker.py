"""The ranker: keeps the link graph from ``links.discovered`` and writes PageRank and
inbound anchor text into the search index.

Consuming and ranking are separate on purpose. Consuming is cheap and runs all the
time, so the graph is never far behind the crawl; ranking is a whole-graph job, run
every ``ranker_interval_s`` while the graph keeps changing, and once more on stop.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from services.common.metrics import ERRORS, PAGERANK_DURATION, PAGERANK_EDGES, PAGERANK_NODES
from services.common.model import TOPIC_LINKS, LinkBatch, LinkFields
from services.common.ports import Bus, LinkGraph, Message, SearchIndex
from services.common.settings import Settings
from services.ranker.pagerank import compute_pagerank
from services.scheduler.url_canonical import BadUrl, canonicalize

log = logging.getLogger(__name__)

GROUP = "ranker"
ANCHOR_SEPARATOR = " | "
# One anchor is a link's text; longer "anchors" are whole paragraphs wrapped in <a>.
MAX_ANCHOR_CHARS = 200
# Enough for dozens of distinct anchors; a page linked from every page of a site
# (the home page) would otherwise carry the same menu text thousands of times.
MAX_ANCHORS_CHARS = 2000


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


def clean_anchor(text: str) -> str:
    """Whitespace collapsed and length capped, so one anchor text has one spelling."""
    return " ".join(text.split())[:MAX_ANCHOR_CHARS]


def join_anchors(texts: Sequence[str]) -> str:
    """Distinct anchor texts, the most common first (ties alphabetical, for stable
    output), joined until ``MAX_ANCHORS_CHARS``: the texts most pages agree on describe
    the target best, so they are the ones worth keeping when space runs out."""
    counts = Counter(t for t in texts if t)
    ordered = sorted(counts, key=lambda t: (-counts[t], t))
    kept: list[str] = []
    size = 0
    for text in ordered:
        extra = len(text) + (len(ANCHOR_SEPARATOR) if kept else 0)
        if size + extra > MAX_ANCHORS_CHARS:
            break
        kept.append(text)
        size += extra
    return ANCHOR_SEPARATOR.join(kept)


def _default_segment() -> Callable[[str], list[str]]:
    # Imported when first needed: the indexer owns segmentation (and loading jieba's
    # dictionary), and a ranker that only consumes links should not pay for it.
    from services.indexer.chinese_tokens import segment

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
        self._dirty = bool(graph.nodes())
        self._tokens_cache: dict[str, str] = {}
        self._last_recompute = time.monotonic()

    def stats(self) -> RankerStats:
        with self._lock:
            return RankerStats(
                self._batches, self._links, self._dropped, self._bad, self._runs, self._last_run, self._dirty
            )

    def step(self, timeout_s: float = 1.0) -> int:
        """Store one poll's worth of link batches; returns how many messages it handled.

        Commits only after the graph holds them: a crash replays the batches, and
        ``set_outlinks`` replaces, so a replay changes nothing.
        """
        messages = self._bus.poll(TOPIC_LINKS, GROUP, timeout_s)
        for message in messages:
            self._store(message)
        self._bus.commit(GROUP, messages)
        return len(messages)

    def _store(self, message: Message) -> None:
        try:
            batch = LinkBatch.from_bytes(message.payload)
            source = canonicalize(batch.source)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # BadUrl, JSON errors
            # Redelivery would fail the same way, so the message is skipped, not retried.
            log.warning("skipping undecodable link batch at offset %s: %s", message.offset, exc)
            ERRORS.labels(service="ranker", kind="malformed_message").inc()
            with self._lock:
                self._bad += 1
            return
        if batch.kind != "page":
            return  # a sitemap lists pages; it does not link to them
        links: list[tuple[str, str]] = []
        dropped = 0
        for link in batch.links:
            try:
                target = canonicalize(link.url)
            except (BadUrl, AttributeError):  # AttributeError: a url that is not a string
                dropped += 1
                continue
            if target == source:
                # Links to the page itself ("#top", tables of contents) say nothing
                # about its importance, and would lend it its own anchor text.
                dropped += 1
                continue
            links.append((target, clean_anchor(link.anchor)))
        self._graph.set_outlinks(source, links)
        with self._lock:
            self._batches += 1
            self._links += len(links)
            self._dropped += dropped
            self._dirty = True

    def recompute_due(self) -> bool:
        """The graph changed and ``ranker_interval_s`` has passed since the last run began."""
        return self.stats().dirty and time.monotonic() - self._last_recompute >= self._cfg.ranker_interval_s

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
        nodes = self._graph.nodes()
        result = compute_pagerank(
            nodes,
            self._graph.edges(),
            damping=self._cfg.ranker_damping,
            tol=self._cfg.ranker_tolerance,
            max_iter=self._cfg.ranker_max_iterations,
        )
        anchors = self._graph.anchors()
        n = len(result.scores)
        fields: dict[str, LinkFields] = {}
        tokens_cache: dict[str, str] = {}
        for url, score in result.scores.items():
            text = join_anchors(anchors.get(url, []))
            fields[url] = LinkFields(
                pagerank=score,
                rank=score * n,
                anchors=text,
                anchors_tokens=self._tokens(text, tokens_cache),
            )
        if fields:
            self._index.set_link_fields(fields)
            self._index.commit()
        # Keep only this run's texts: most anchors are unchanged next time, and
        # segmenting them again is the slowest part of a run.
        self._tokens_cache = tokens_cache
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

    def _tokens(self, text: str, fresh: dict[str, str]) -> str:
        if not text:
            return ""
        tokens = fresh.get(text)
        if tokens is None:
            tokens = self._tokens_cache.get(text)
            if tokens is None:
                if self._segment is None:
                    self._segment = _default_segment()
                tokens = " ".join(self._segment(text))
            fresh[text] = tokens
        return tokens

    def run(self, stop: threading.Event, final_recompute: bool = True) -> None:
        """Consume until ``stop`` is set, ranking every ``ranker_interval_s`` while the
        graph changes; on stop, rank once more if anything changed since the last run,
        so that a finished crawl ends with up-to-date ranks."""
        while not stop.is_set():
            try:
                self.step(timeout_s=1.0)  # one second: SIGTERM is noticed quickly
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
