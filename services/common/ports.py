"""The ports: what service logic may ask of a backend, and nothing more.

Each port is a Protocol so that an adapter (or a test fake) needs no base class.
The docstrings are contracts that every adapter keeps; the contract tests in
``tests/contract/`` run the same checks against each adapter.

Errors (services/common/errors.py), the same for every port: a backend that cannot be
reached now raises ``BackendUnavailable`` (each adapter's own subclass names the
backend), so callers retry; a backend that refuses a request raises ``BackendError``;
a malformed backend URL raises ``ConfigError`` when the adapter is built.
``SearchIndex`` adds ``IndexUnavailable`` (closed, opened read-only, gone) and
``IndexWriterBusy`` (a single-writer index another process writes).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from services.common.domain.dictionaries import EditedText, ReanalysisJob
from services.common.domain.documents import (
    IndexDoc,
    LinkFields,
    MergeReport,
    StoredPage,
)
from services.common.domain.frontier_types import (
    FrontierCounts,
    HostInfo,
    HostUpdate,
    Lease,
    NewUrl,
    UrlInfo,
    UrlUpdate,
)
from services.common.domain.host_settings import HostSettings
from services.common.domain.search_analytics import ClickEvent, DayReport, DayTotals, SearchEvent
from services.common.domain.search_types import SearchHits, SearchQuery

if TYPE_CHECKING:  # numpy, which they hold, is not needed by every process that names a port
    from services.common.domain.link_ids import AnchorChunk, EdgeChunk


@dataclass(frozen=True)
class Message:
    """One delivered bus message. ``offset`` is opaque outside the adapter."""

    topic: str
    key: str
    payload: bytes
    offset: int
    partition: int = 0


class Bus(Protocol):
    """Topics of messages with at-least-once delivery.

    - A message may arrive twice (after a crash or a rebalance), so consumers are idempotent.
    - Messages with the same key keep their order within a topic.
    - ``poll`` hands each message to one consumer of a group; a message not committed
      by the time that consumer dies is delivered again.
    - Commit only after the work a message stands for is durable.
    """

    def publish(self, topic: str, payload: bytes, key: str = "") -> None: ...

    def flush(self) -> None:
        """Block until every published message is durable."""

    def poll(self, topic: str, group: str, timeout_s: float, max_messages: int = 100) -> list[Message]: ...

    def commit(self, group: str, messages: Sequence[Message]) -> None: ...

    def pending(self, topic: str, group: str) -> int:
        """Messages published but not yet committed by this group (an estimate on Kafka)."""

    def assignment(self, topic: str, group: str) -> frozenset[int] | None:
        """The partitions of ``topic`` whose messages this process's consumer of ``group``
        is handed now; None when it is handed every message (one consumer per group, as
        in the embedded bus). It changes as consumers of the group join and leave, and is
        empty before the consumer's first ``poll`` and while its group rebalances."""

    def partition_count(self, topic: str) -> int:
        """How many partitions ``topic`` has: a message keyed ``k`` is in partition
        ``services.common.domain.host_partition.host_partition(k, partition_count(topic))``."""

    def ping(self) -> None:
        """Raise if the backend is unreachable; /readyz calls it."""

    def close(self) -> None: ...


class PageStore(Protocol):
    """Raw fetched pages keyed by URL fingerprint. ``put`` is idempotent: a re-crawl
    overwrites, and a reader never sees half a page.

    ``remote``: a put waits for the network, so the crawler makes it on a thread of its
    own rather than its reactor's; a local put is cheaper than the hand-over."""

    remote: bool

    def put(self, key: str, page: StoredPage) -> None: ...

    def get(self, key: str) -> StoredPage | None: ...

    def ping(self) -> None: ...


class SearchIndex(Protocol):
    """The searchable pages, one document per URL.

    - ``upsert`` replaces the document with the same URL and keeps its link fields
      (pagerank, anchors), which only ``set_link_fields`` changes.
    - Writes take effect in the order they were made, and become visible to
      ``search`` and durable after ``commit``; an adapter may hold them until then
      (Elasticsearch sends them as bulk requests), so a write may raise only there.
    - Scores: BM25 over the fields with the configured boosts, plus the phrase boost,
      plus the saturating rank feature ``weight * rank / (rank + pivot)``.
    - ``SearchQuery.sort == "date"`` orders the same matches by ``modified_at`` (the
      page's date), newest first, equal dates by URL; documents without one come last.
    """

    def upsert(self, docs: Sequence[IndexDoc]) -> None: ...

    def delete(self, urls: Iterable[str]) -> None: ...

    def commit(self) -> None: ...

    def url_for_hash(self, content_hash: str) -> str | None:
        """URL of a committed document with this content hash, if any: the smallest,
        when several hold it."""

    def urls_for_hashes(self, content_hashes: Collection[str]) -> dict[str, str]:
        """``url_for_hash`` of each hash at once: the hashes committed documents hold,
        each mapped to the URL ``url_for_hash`` answers; the others ("" too) left out.
        A remote backend answers in one request (per thousand hashes), so that the
        indexer's duplicate checks cost a round trip a batch, not a page."""

    def fetch_times(self, urls: Collection[str]) -> dict[str, float]:
        """``fetched_at`` of each committed document among ``urls``; URLs not indexed
        are left out. One request where the backend is remote."""

    def near_duplicates(self, signature: Sequence[int]) -> list[tuple[str, tuple[int, ...]]]:
        """Committed documents sharing at least one LSH band term with this MinHash
        signature (``services.common.domain.minhash.bands``), as (url, their signature):
        candidates only; the caller judges the similarity."""

    def set_link_fields(self, fields: Mapping[str, LinkFields]) -> None:
        """Write PageRank and inbound anchor text into existing documents; URLs not in
        the index are ignored. Visible after ``commit``."""

    def search(self, query: SearchQuery) -> SearchHits: ...

    def term_stats(self, terms: Sequence[tuple[str, str]]) -> tuple[int, list[int]]:
        """(committed documents, how many of them hold each (field, token)), in one
        call: the query planner weighs fields by them (see query_plan)."""

    def searched_at(self) -> float | None:
        """Wall-clock time of the last search any process ran on this index, so that
        the indexer can commit less often while nobody searches (Elasticsearch's
        search-idle shards); 0.0 if never, None when the backend does not tell,
        which the indexer takes as searched now."""

    def view_version(self) -> object | None:
        """A value that changes whenever searches could answer differently (after a
        commit becomes visible); None when the backend cannot tell cheaply. Result
        caches key on it."""

    def get(self, url: str) -> IndexDoc | None:
        """The committed document as written (``own_text`` included since both backends
        keep it: tantivy to build a page's bigrams again, both for a reanalysis)."""

    def count(self) -> int: ...

    def sites(self) -> list[str]:
        """Distinct ``site`` values, for the site filter."""

    def urls(self) -> list[str]:
        """Every indexed URL (for tests, audits and reindexing)."""

    def ping(self) -> None: ...

    def force_merge(self, progress: Callable[[int, int], None] | None = None) -> MergeReport:
        """Rewrite the committed index into as few segments as the backend can
        (Elasticsearch's force merge), for an index that will change little for a
        while: a search sets up every term of the query once per segment.
        ``progress(done, total)`` is called as documents are copied, where the
        backend copies them itself. Writers must be stopped; an interrupted merge
        leaves the index as it was."""

    def close(self, finish_merges: bool = False) -> None:
        """Release the writer. Uncommitted writes are dropped where a write is not
        durable before its commit (tantivy); where every acknowledged write already is
        (Elasticsearch, which commits with a refresh), the next commit shows them.
        Callers commit what they mean to keep and count on neither.

        ``finish_merges`` waits for the segment merges under way (Lucene's
        ``close``), for a job that ended and leaves the index to searches; without it
        they are stopped, so that a Ctrl-C is prompt. A stopped merge changes nothing:
        the next commit starts it again."""


class LinkGraph(Protocol):
    """The crawled link graph, owned by the ranker, stored by integer ids.

    - ``set_outlinks`` replaces a page's outlinks, so replaying a page event changes
      nothing; each page's write is atomic (a reader never sees half of its links).
    - Every URL and anchor text gets an id the first time it is stored and keeps it;
      ids start at 0 and have no gaps, so a reader can index arrays by them.
    - ``edge_chunks``/``anchor_chunks`` stream the graph a few thousand pages at a time
      as numpy arrays of ids, so a whole-graph reader holds ids, never URL strings;
      each page appears in one chunk. Pages written meanwhile may or may not appear.
    """

    def set_outlinks(self, source: str, links: Sequence[tuple[str, str]]) -> bool:
        """``links`` are (target URL, anchor text) pairs. Returns whether the graph
        changed: a new source, or other links than it had (a recrawl of an unchanged
        page changes nothing, and needs no new PageRank run)."""

    def set_outlinks_many(self, pages: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> list[bool]:
        """``set_outlinks`` for each (source, links), in fewer round trips; one answer each."""

    def edge_chunks(self) -> Iterator[EdgeChunk]:
        """Every page (source) and its distinct (source, target) edges, by id."""

    def anchor_chunks(self) -> Iterator[AnchorChunk]:
        """Every (source, target, text) with a non-empty anchor text, by id."""

    def urls(self, ids: Sequence[int]) -> list[str]:
        """The URL of each id (every id must have been handed out)."""

    def texts(self, ids: Sequence[int]) -> list[str]:
        """The anchor text of each text id."""

    def url_ids(self, urls: Sequence[str]) -> list[int | None]:
        """The id of each URL, None for a URL the graph has never seen."""

    def node_count(self) -> int:
        """How many source pages the graph holds."""

    def nodes(self) -> list[str]:
        """Every source page (pages known to have been fetched), by URL: for small graphs."""

    def edges(self) -> Iterable[tuple[str, str]]:
        """Every (source, target) pair by URL, deduplicated: for small graphs."""

    def anchors(self) -> Mapping[str, list[str]]:
        """Anchor texts pointing at each target URL: for small graphs."""

    def ping(self) -> None: ...


class FrontierState(Protocol):
    """URLs and hosts of the crawl frontier; the scheduler's memory.

    - Every method is atomic: two schedulers racing on one backend never lease one
      URL twice nor start one host's politeness clock twice.
    - ``add_urls`` is the seen-set: a URL is admitted once, ever.
    - ``finish`` accepts an outcome only for the lease it names and returns False for
      a stale or repeated one, so replayed page events change nothing.
    - A host has at most ``parallelism`` fetches in flight, and a lease or a release
      pushes its ``next_allowed_at`` to at least now + its delay.
    - Hosts are split in ``shards()`` shards, host ``h`` in shard
      ``host_partition(h, shards())`` (services/common/domain/host_partition.py). The calls that
      select across hosts take ``shards``, the shards to select from (None: all), so
      schedulers can divide the hosts between them; any other call reaches every host.
    """

    def shards(self) -> int: ...

    def ensure_host(self, host: str, scheme: str, delay_s: float) -> None: ...
    def get_host(self, host: str) -> HostInfo | None: ...
    def get_hosts(self, hosts: Sequence[str]) -> dict[str, HostInfo]:
        """Each known host of ``hosts`` by name, in one call: what a batch of URLs needs
        of their hosts is read once, not once per URL."""
    def hosts(self, limit: int = 1000) -> list[HostInfo]: ...
    def claim_robots(self, now: float, limit: int, shards: Collection[int] | None = None) -> list[HostInfo]: ...
    def expire_robots(self, now: float, shards: Collection[int] | None = None) -> list[str]: ...
    def expire_robots_claims(self, now: float, timeout_s: float, shards: Collection[int] | None = None) -> list[str]: ...
    def update_host(self, host: str, update: HostUpdate, now: float, release: bool) -> None: ...
    def add_urls(self, urls: Sequence[NewUrl], now: float, host_budget: int) -> list[NewUrl]: ...
    def requeue_seed(self, url: str, now: float) -> bool: ...
    def lease_due(
        self, now: float, limit: int, parallelism: int, max_in_flight: int, shards: Collection[int] | None = None
    ) -> list[Lease]: ...
    def is_leased(self, url: str, lease_id: str) -> bool:
        """Whether this lease is still the URL's current one (crawlers skip stale jobs)."""
    def finish(
        self, url: str, lease_id: str, update: UrlUpdate, host_update: HostUpdate | None = None, now: float = 0.0
    ) -> bool:
        """Record an outcome for the lease it names; False (and nothing changed) for a
        stale or repeated one. With ``host_update``, the same atomic step applies it to
        the URL's host and releases the fetch (``update_host(host, host_update, now,
        release=True)``), so a scheduler killed after the outcome cannot leave its
        host's slot taken for good. ``now`` is when the fetch ended, from which the
        host's delay counts (the frontier passes the crawler's ``fetched_at``, bounded;
        see Frontier._fetch_ended)."""
    def unlease(self, url: str, now: float, state: str, note: str) -> None: ...
    def expire_leases(self, now: float, timeout_s: float, shards: Collection[int] | None = None) -> int: ...
    def queued_urls(self, host: str) -> list[str]: ...
    def drop_queued(self, urls: Sequence[str], state: str, note: str, due_at: float | None = None) -> int: ...
    def url_state(self, url: str) -> tuple[str, str, int] | None: ...
    def url_info(self, url: str) -> UrlInfo | None: ...
    def sweep_recrawl(self, now: float, limit: int, shards: Collection[int] | None = None) -> int:
        """Move done and failed URLs whose recrawl time has come back to the queue."""
    def requeue(self, url: str, now: float) -> bool: ...
    def upcoming(self, limit: int) -> list[tuple[str, str, float]]: ...
    def add_scope_domains(self, domains: Sequence[str]) -> None:
        """Domains submitted with seeds to a running crawl; kept across restarts."""
    def scope_domains(self) -> list[str]: ...
    def bump(self, name: str, by: int = 1) -> None: ...
    def url_breakdown(self) -> list[tuple[str, str, str, str, int | None, int]]:
        """(host, kind, state, note, status, number of URLs) over every URL: what a crawl
        did and did not do, for the crawl report. Reads every URL; not for a hot path."""
    def attention_urls(self, limit: int) -> list[UrlInfo]:
        """The URLs ``frontier_types.needs_attention`` picks (failed, answered 4xx/5xx or
        nothing, fetched but not indexable), ordered by host then URL, at most ``limit``
        (negative: all). Reads every URL; for the crawl report."""
    def note_fetched(self, url: str, note: str) -> bool:
        """Set the note of a fetched (done) URL, for what happened after its fetch (a
        document the extractor skipped: ``document:<reason>``); False if the URL is not
        done. Its state, schedule and lease are unchanged."""
    def counters(self) -> dict[str, int]:
        """Every ``bump`` counter by name (``fetched``, ``errors``, ``limit:<name>``...)."""
    def counts(self, now: float) -> FrontierCounts: ...
    def set_paused(self, host: str, paused: bool, now: float) -> bool:
        """Pause or resume a host; False if the host is unknown. A paused host is neither
        claimed for robots.txt nor leased, until resumed, across restarts; its fetches
        already in flight finish normally. Idempotent."""
    def recrawl_host(self, host: str, now: float) -> int:
        """Every queued, done or failed URL of the host becomes queued and due at
        ``now``, its failures forgotten; returns how many. Leased URLs stay in flight and
        excluded ones stay excluded (robots.txt or scope said no, not time)."""
    def host_urls(self, host: str) -> list[str]:
        """Every URL of the host the frontier ever admitted, excluded ones left out."""
    def fetch_history(self, since: float) -> list[tuple[float, int]]:
        """(minute start, pages fetched in that minute) for the minutes from ``since``
        that had any, oldest first; kept for the last 24 hours."""
    def set_host_settings(self, host: str, settings: HostSettings | None) -> None:
        """The operator's crawl settings of a host (which need not be known yet);
        None removes them. Kept across restarts; the last write wins."""
    def host_settings(self) -> dict[str, HostSettings]:
        """Every host's crawl settings, by host: small (one entry per configured host),
        so schedulers read it whole and keep it for a few seconds."""
    def excluded_urls(self, host: str, note: str) -> list[str]:
        """The host's URLs excluded with exactly this note (``robots``: its robots.txt
        said no; ``host_settings``: the operator's rules did)."""
    def readmit(self, urls: Sequence[str], note: str, now: float) -> int:
        """Each URL still excluded with exactly this note is queued again, due at
        ``now``, its note and failures cleared; returns how many. The seen-set and the
        host budget are unchanged: they were admitted before."""
    def ping(self) -> None: ...
    def close(self) -> None: ...


class SearchLog(Protocol):
    """Searches and result clicks, for search analytics (the console, the API).

    - ``record`` adds a batch in one round trip. Delivery is at most once: a batch lost
      with a dying process is lost (analytics, not accounting).
    - Figures are kept per day (``SearchEvent.day``): a day's totals, each query's
      searches, zero-hit searches, clicks and last result count, and clicks per URL.
    - Bounded: days more than ``retention_days`` before the newest recorded day are
      dropped, a day keeps at most ``max_queries_per_day`` distinct queries (the least
      searched go first) and as many URLs, and the log of single searches holds the
      newest ``recent_limit``.
    - No client address or any other trace of who searched is stored.
    """

    def record(self, searches: Sequence[SearchEvent], clicks: Sequence[ClickEvent]) -> None: ...

    def days(self) -> list[DayTotals]:
        """Every kept day's totals, newest first."""

    def day(self, day: str, top: int = 50) -> DayReport:
        """One day's totals and its ``top`` queries, zero-hit queries and clicked URLs
        (most first; ties at the cut broken either way). An unknown day is all zeros."""

    def recent(self, limit: int = 100) -> list[SearchEvent]:
        """The newest single searches, newest first."""

    def searched(self, days: int, top: int) -> dict[str, int]:
        """The ``top`` queries searched most over the newest ``days`` kept days, each
        with its first pages that found something (the did-you-mean weighs words by
        what users search); ties at the cut broken either way."""

    def click_key(self) -> bytes:
        """A random secret made on first use and then the same for every process of the
        deployment: it signs the click links of results pages."""

    def ping(self) -> None: ...

    def close(self) -> None: ...


class DictionaryStore(Protocol):
    """The operator's dictionaries (``services.common.domain.dictionaries.NAMES``) as
    edited texts, shared by every process that analyses text, and the reanalysis job.

    - ``version`` changes with every ``save`` and ``remove``: readers poll it, cheaply,
      and load the texts only when it moved.
    - A dictionary never saved (or removed) is absent from ``load``: its shipped
      defaults apply.
    - The job calls are atomic: of indexers racing, one claims the job; an update from
      an owner that lost it (to a new request, or to a take-over) changes nothing.
    """

    def version(self) -> str: ...

    def load(self) -> dict[str, EditedText]: ...

    def save(self, name: str, text: str, now: float) -> None: ...

    def remove(self, name: str) -> None: ...

    def request_reanalysis(self, now: float, user_words: str) -> ReanalysisJob:
        """A new pending job, replacing any earlier one (finished or not)."""

    def reanalysis(self) -> ReanalysisJob | None: ...

    def claim_reanalysis(self, owner: str, now: float, stale_s: float) -> ReanalysisJob | None:
        """The job, now owned by ``owner``, if it is pending, already ``owner``'s, or
        running under an owner silent for ``stale_s``; else None."""

    def update_reanalysis(self, job: ReanalysisJob) -> bool:
        """Write ``job`` if it is still the current job and its owner still owns it."""

    def ping(self) -> None: ...

    def close(self) -> None: ...
