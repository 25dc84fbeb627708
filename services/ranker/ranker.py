"""The ranker: keeps the link graph from ``links.discovered`` and writes PageRank and
inbound anchor text into the search index.

Consuming and ranking are separate on purpose. Consuming is cheap and runs all the
time, so the graph is never far behind the crawl; ranking is a whole-graph job, run
every ``ranker_interval_s`` while the graph keeps changing, and once more on stop.

How link fields reach every document, whichever process indexes it and whenever:

- A run writes the fields of every page whose fields changed materially since this
  process last wrote them (``RANK_CHANGE``), not the whole index every interval.
- The indexer trails the crawl, so a run may compute fields for pages that are not
  indexed yet; the index ignores those. After each commit the indexer announces the
  URLs it made searchable (``documents.indexed``), and the ranker writes the fields of
  its last run into them at once: no recomputation, and no waiting for the graph to
  change again.
- A page announced before any run has ranked it waits for the next run, which comes
  within ``ranker_interval_s`` because its own link batch made the graph dirty, and
  sooner once the crawl goes quiet: when documents wait and no link batch has changed
  the graph for ``ranker_quiet_s``, the graph is as complete as it will be for now, so
  a run comes at once rather than at the end of the interval (measured on a cluster
  crawl with the default 300 s interval, the last pages otherwise waited out whatever
  was left of it after the crawl ended). Such early runs keep to at most a tenth of
  the ranker's time (``EARLY_RUN_DUTY``), so neither a large graph nor a continuous
  crawl's trickle of new pages turns into a whole-graph run per page. The
  ``tansuo_ranker_documents_waiting`` gauge counts such pages, and
  ``tansuo_ranker_oldest_waiting_seconds`` says how long the oldest has waited.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from services.common.metrics import (
    ERRORS,
    PAGERANK_DURATION,
    PAGERANK_EDGES,
    PAGERANK_NODES,
    RANKER_DOCUMENTS_WAITING,
    RANKER_INTERVAL,
    RANKER_OLDEST_WAITING,
)
from services.common.model import (
    TOPIC_INDEXED,
    TOPIC_LINKS,
    IndexedDocuments,
    LinkBatch,
    LinkFields,
    feature_precision,
)
from services.common.ports import Bus, LinkGraph, Message, SearchIndex
from services.common.settings import Settings
from services.ranker.pagerank import compute_pagerank
from services.common.url_canonical import BadUrl, canonicalize

log = logging.getLogger(__name__)

GROUP = "ranker"
ANCHOR_SEPARATOR = " | "
# One anchor is a link's text; longer "anchors" are whole paragraphs wrapped in <a>.
MAX_ANCHOR_CHARS = 200
# Enough for dozens of distinct anchors; a page linked from every page of a site
# (the home page) would otherwise carry the same menu text thousands of times.
MAX_ANCHORS_CHARS = 2000
# A page's PageRank is rewritten when it moved by more than this share of the value
# last written (or its anchors changed): a recomputation moves most ranks by float
# noise, and rewriting every document for that would load the index for nothing.
# Search cannot tell 0.1% of a saturating rank feature apart.
RANK_CHANGE = 1e-3
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


# The anchor of an alias's link in the graph (a redirect to its target, a canonical
# variant to its canonical URL): this, then the alias. A private-use character, which
# page text never yields as an anchor (clean_anchor).
ALIAS_MARK = "\ue001redirect "
MAX_REDIRECT_HOPS = 5


def url_aliases(anchors: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Alias URL → the page it finally names: a redirect's target, a canonical
    variant's canonical URL. Links to an alias (http:// on an https:// site, /dir for
    /dir/, ?print=1 for the page) count for that page: its inbound PageRank and its
    anchor text, as search engines treat both as other names of one page. Chains are
    followed up to 5 hops, as crawlers follow redirects; a loop aliases nothing."""
    step = {t[len(ALIAS_MARK) :]: target for target, texts in anchors.items() for t in texts
            if t.startswith(ALIAS_MARK)}  # fmt: skip
    out = {}
    for source, target in step.items():
        for _ in range(MAX_REDIRECT_HOPS):
            if target not in step:
                break
            target = step[target]
        if target not in step and target != source:
            out[source] = target
    return out


def resolve_edges(edges: Iterable[tuple[str, str]], aliases: Mapping[str, str]) -> list[tuple[str, str]]:
    """Edges between pages, both ends through their aliases: a canonical variant's
    links are its page's; a redirect's one link, resolved, links the page to itself,
    and self-links are left out."""
    out = set()
    for source, target in edges:
        source, target = aliases.get(source, source), aliases.get(target, target)
        if target != source:
            out.add((source, target))
    return sorted(out)


def resolve_anchors(anchors: Mapping[str, Sequence[str]], aliases: Mapping[str, str]) -> dict[str, list[str]]:
    """Anchor texts by the page they lead to; the redirects' own marks left out."""
    out: dict[str, list[str]] = {}
    for target, texts in anchors.items():
        kept = [t for t in texts if not t.startswith(ALIAS_MARK)]
        if kept:
            out.setdefault(aliases.get(target, target), []).extend(kept)
    return out


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


def _changed(old: LinkFields | None, new: LinkFields) -> bool:
    if old is None or old.anchors != new.anchors or old.anchors_tokens != new.anchors_tokens:
        return True
    return abs(new.rank - old.rank) > RANK_CHANGE * max(old.rank, new.rank)


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
        self._dirty = bool(graph.nodes())
        self._tokens_cache: dict[str, str] = {}
        self._last_recompute = time.monotonic()
        self._last_change = time.monotonic()  # when a link batch last changed the graph
        # Fields of the last run, by URL, and what this process last wrote per URL.
        # Guarded by the recompute lock: runs and announcements both write the index.
        self._latest: dict[str, LinkFields] = {}
        self._written: dict[str, LinkFields] = {}
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
        for message in messages:
            self._store(message)
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
            known = {u: self._latest[u] for u in urls if u in self._latest}
            now = time.time()
            for url in urls:
                if url not in known:
                    self._waiting.setdefault(url, now)
            if known:
                self._write(known)
            self._report_waiting(now)

    def _write(self, fields: Mapping[str, LinkFields]) -> None:
        """Write link fields into the index and commit; remembered as written only
        once committed, so a failed write is tried again by the next run."""
        self._index.set_link_fields(fields)
        self._index.commit()
        self._written.update(fields)
        with self._lock:
            self._written_count += len(fields)

    def _report_waiting(self, now: float) -> None:
        RANKER_DOCUMENTS_WAITING.set(len(self._waiting))
        RANKER_OLDEST_WAITING.set(now - min(self._waiting.values()) if self._waiting else 0.0)

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
        if batch.kind == "redirect":
            # Its one link, to the target: the URL is the target's other name.
            links, dropped = self._alias_link(source, batch.links[0].url if batch.links else ""), 0
            if not links:
                return  # a redirect to itself, or to no URL, names nothing
        elif batch.kind == "page":
            links, dropped = self._outlinks(source, batch)
            links += self._alias_link(source, batch.canonical)
        else:
            return  # a sitemap lists pages; it does not link to them
        changed = self._graph.set_outlinks(source, links)
        with self._lock:
            self._batches += 1
            self._links += len(links)
            self._dropped += dropped
            self._dirty = self._dirty or changed
            if changed:
                self._last_change = time.monotonic()

    @staticmethod
    def _outlinks(source: str, batch: LinkBatch) -> tuple[list[tuple[str, str]], int]:
        """(target, anchor) pairs of a page's links, and how many were dropped."""
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
        return links, dropped

    @staticmethod
    def _alias_link(source: str, url: str) -> list[tuple[str, str]]:
        """The link that makes ``source`` another name of ``url`` (a redirect's target,
        a page's rel=canonical), its anchor naming ``source``, since the LinkGraph port
        keeps anchors by target (see ``url_aliases``); none when ``url`` is empty,
        not a URL, or ``source`` itself."""
        try:
            target = canonicalize(url) if url else source
        except (BadUrl, AttributeError):
            return []
        return [(target, ALIAS_MARK + source)] if target != source else []

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
        anchors = self._graph.anchors()
        aliases = url_aliases(anchors)
        nodes = sorted({aliases.get(url, url) for url in self._graph.nodes()})
        result = compute_pagerank(
            nodes,
            resolve_edges(self._graph.edges(), aliases),
            damping=self._cfg.ranker_damping,
            tol=self._cfg.ranker_tolerance,
            max_iter=self._cfg.ranker_max_iterations,
        )
        anchors = resolve_anchors(anchors, aliases)
        n = len(result.scores)
        fields: dict[str, LinkFields] = {}
        tokens_cache: dict[str, str] = {}
        for url, score in result.scores.items():
            text = join_anchors(anchors.get(url, []))
            fields[url] = LinkFields(
                pagerank=score,
                rank=feature_precision(score * n),
                anchors=text,
                anchors_tokens=self._tokens(text, tokens_cache),
            )
        changed = {url: f for url, f in fields.items() if _changed(self._written.get(url), f)}
        if changed:
            self._write(changed)
        log.info("link fields of %d of %d pages changed and were written", len(changed), len(fields))
        self._latest = fields
        self._settle_waiting(fields)
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

    def _settle_waiting(self, fields: Mapping[str, LinkFields]) -> None:
        """Documents this run ranked wait no more; a waiting document that left the
        index meanwhile (a removal, a duplicate) is no longer waiting either."""
        for url in [u for u in self._waiting if u in fields]:
            del self._waiting[url]
        for url in list(self._waiting):
            if self._index.get(url) is None:
                del self._waiting[url]
        self._report_waiting(time.time())

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
