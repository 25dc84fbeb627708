"""One typed settings object for every service.

Precedence, each level overriding the one before: the field default, then the
``TANSUO_*`` environment variable, then keyword arguments (tests and CLI flags).
Each name starts with the service that reads it, so the owner is obvious.
A bad value fails at start-up (pydantic validation), not on the first crawl.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

# Lists come from the environment as "a,b" or as a JSON array; NoDecode lets our
# validator see the raw string instead of pydantic-settings insisting on JSON.
StrList = Annotated[tuple[str, ...], NoDecode]
# The API token opens the crawl's endpoints and the console: a short one can be guessed
# even at a few tries a minute.
MIN_TOKEN_CHARS = 16


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TANSUO_", frozen=True, extra="forbid")

    # --- where things live; an empty URL means the embedded backend under data_dir
    data_dir: Path = Path("tansuo-data")
    bus: str = ""  # kafka://host:9092 in a cluster
    state: str = ""  # redis://host:6379/0 in a cluster
    store: str = ""  # s3://key:secret@host:9000/bucket in a cluster
    index: str = ""  # elasticsearch://host:9200/tansuo in a cluster

    # --- bus (Kafka in a cluster); names go in TANSUO_BUS, tuning here
    bus_partitions: int = Field(default=12, ge=1)  # of each topic, when Tansuo creates it
    bus_replication: int = Field(default=1, ge=1)
    bus_retention_hours: float = Field(default=168.0, gt=0)
    bus_max_message_bytes: int = Field(default=4 * 1024 * 1024, ge=1024 * 1024)  # producer, topic, fetch
    bus_session_timeout_ms: int = Field(default=45_000, ge=1000)
    bus_heartbeat_interval_ms: int = Field(default=3_000, ge=100)
    bus_request_timeout_s: float = Field(default=10.0, gt=0)
    bus_delivery_timeout_s: float = Field(default=60.0, gt=0)
    bus_join_timeout_s: float = Field(default=30.0, gt=0)
    # How long the broker may hold a fetch that finds no new message. Kafka answers as
    # soon as one arrives, so this only bounds idle polling; a broker that always waits
    # it out (Tansu does) adds it to every hop, and wants a small value.
    bus_fetch_max_wait_ms: int = Field(default=500, ge=1, le=30_000)

    # --- page store (S3 in a cluster)
    store_timeout_s: float = Field(default=10.0, gt=0)

    # --- scheduler (the frontier owns scope and politeness)
    frontier_allow_domains: StrList = ()  # "example.cn" or "*.example.cn"
    frontier_include_patterns: StrList = ()  # regexes a URL must match (any)
    frontier_exclude_patterns: StrList = ()  # regexes a URL must not match
    # Links (and redirects) followed from a seed; None = no limit. Heritrix's maxHops is 20:
    # a calendar's "next month" link or an endless redirect chain ends there.
    frontier_max_depth: int | None = Field(default=20, ge=0)
    # Crawler-trap limits on a URL's shape (services/scheduler/url_limits.py).
    frontier_max_path_depth: int = Field(default=20, ge=1)  # path segments
    frontier_max_path_repetitions: int = Field(default=2, ge=1)  # times one segment may appear
    frontier_max_query_params: int = Field(default=16, ge=1)
    frontier_max_pages: int | None = Field(default=None, ge=1)  # pages fetched, in all
    frontier_host_page_budget: int = Field(default=100_000, ge=1)  # trap guard per host
    frontier_max_url_length: int = Field(default=2048, ge=64)
    # Per-host politeness is the frontier's job, so the delay lives here, not on the crawler.
    frontier_host_delay_s: float = Field(default=1.0, ge=0.0)
    # Parallel fetches per host, used only when the effective delay is 0: with any
    # delay, one fetch at a time is the only way to keep the gap at the server. An
    # operator who turns the delay off asks for speed on a site of their own; 8 is
    # Scrapy's CONCURRENT_REQUESTS_PER_DOMAIN (docs/benchmarks.md, "One process or two").
    frontier_host_parallelism: int = Field(default=8, ge=1)
    frontier_lease_timeout_s: float = Field(default=600.0, gt=0)
    # Leases out at once over all hosts: enough to keep every crawler busy, few enough
    # that a leased job never waits in the fetch topic until its lease times out.
    frontier_max_in_flight: int = Field(default=256, ge=1)
    frontier_robots_ttl_s: float = Field(default=86_400.0, gt=0)
    frontier_max_fetch_failures: int = Field(default=3, ge=1)  # quick retries before "failed"
    frontier_failure_backoff_s: float = Field(default=5.0, ge=0)  # first quick retry; doubles
    # Fetches of one host failing in a row (no response, or 5xx without Retry-After)
    # before the host is given up for this pass: its queued URLs are marked failed and
    # come back after frontier_failure_recrawl_s.
    frontier_host_max_failures: int = Field(default=4, ge=1)
    # Recrawl: first after the initial interval; unchanged content (same hash or 304)
    # multiplies the interval by the factor, changed content divides it, within bounds.
    frontier_recrawl_initial_s: float = Field(default=3600.0, gt=0)
    frontier_recrawl_factor: float = Field(default=2.0, gt=1)
    frontier_recrawl_min_s: float = Field(default=300.0, gt=0)
    frontier_recrawl_max_s: float = Field(default=30 * 86_400.0, gt=0)
    # A URL that failed all its quick retries is tried again after this, then backs
    # off by the same factor up to the maximum.
    frontier_failure_recrawl_s: float = Field(default=3600.0, gt=0)
    frontier_sitemaps: bool = True  # read Sitemap: lines of robots.txt, else /sitemap.xml
    frontier_sweep_interval_s: float = Field(default=30.0, gt=0)  # recrawl sweep, continuous mode

    # --- crawler
    crawler_concurrency: int = Field(default=16, ge=1)
    crawler_max_page_bytes: int = Field(default=10 * 1024 * 1024, ge=1024)
    crawler_timeout_s: float = Field(default=30.0, gt=0)
    crawler_user_agent: str = "TansuoBot/0.1 (+https://github.com/tansuo-search/tansuo)"
    # A crawler inside a cluster must not reach internal services unless told to.
    crawler_allow_private_networks: bool = False
    crawler_max_body_chars: int = Field(default=200_000, ge=1000)
    # RFC 9309 2.3.1.2: follow at least five redirects of robots.txt; more, and the
    # file counts as unavailable (everything allowed).
    crawler_robots_max_redirects: int = Field(default=5, ge=0)
    crawler_max_robots_bytes: int = Field(default=512 * 1024, ge=500 * 1024)  # RFC 9309: at least 500 KiB
    # What one page may carry onto the bus and into the index (services/crawler/message_caps.py).
    crawler_max_title_chars: int = Field(default=512, ge=16)
    crawler_max_headings: int = Field(default=100, ge=1)
    crawler_max_heading_chars: int = Field(default=256, ge=16)
    crawler_max_anchor_chars: int = Field(default=256, ge=16)
    crawler_max_outlinks: int = Field(default=5000, ge=1)  # links published per page

    # --- documents (PDF, Office, WPS, RTF, text: services/extractor/, docs/documents.md)
    # Off: a document is stored but not extracted or indexed.
    documents_enabled: bool = True
    # A document's own size cap, above the page cap: a response declared as a document
    # type (or as octet-stream) may be this large; an HTML page stays at the page cap.
    documents_max_bytes: int = Field(default=50 * 1024 * 1024, ge=1024)
    documents_max_pages: int = Field(default=2000, ge=1)  # pages, slides or sheets read
    documents_max_chars: int = Field(default=500_000, ge=1000)  # text kept (the bus caps a message at 3 MiB too)
    # The parts of an OOXML/ODF package read, inflated: a ZIP bomb is refused by this.
    documents_max_unzipped_bytes: int = Field(default=200 * 1024 * 1024, ge=1024 * 1024)
    # One document's extraction, in the worker's CPU seconds (a worker waiting for a
    # core is not looping) and at most ten times that of wall time; past it the worker
    # process is killed (a parser that loops must not hold a slot for ever) and the
    # document reported as "timeout".
    documents_timeout_s: float = Field(default=120.0, gt=0)
    # Extraction worker processes (embedded mode: beside the crawl; `tansuo extractor`:
    # per pod). They run at a lower priority (nice) than the crawl, and on Linux under
    # SCHED_IDLE (`documents_worker_idle`): CPU time the crawl leaves unused, only.
    documents_workers: int = Field(default=1, ge=1)
    documents_worker_nice: int = Field(default=10, ge=0, le=19)
    documents_worker_idle: bool = True
    # While the crawl in the same process is busy, a document past its first second of
    # CPU runs at most this share of the wall time (services/extractor/busy_throttle.py);
    # 1 turns the throttle off.
    documents_busy_share: float = Field(default=0.5, ge=0.2, le=1)
    # Address space of a worker; a document that needs more is reported "too_large".
    documents_worker_memory_mb: int = Field(default=1536, ge=256)
    # OCR of PDF pages with no text layer, with Tesseract's Chinese models: slow, so off.
    documents_ocr: bool = False
    documents_ocr_languages: str = "chi_sim+chi_tra+eng"
    documents_ocr_dpi: int = Field(default=200, ge=72, le=600)

    # --- search index backend (Elasticsearch)
    index_shards: int = Field(default=1, ge=1)  # primaries of a new concrete index
    index_replicas: int = Field(default=1, ge=0)  # 0 on a single-node cluster
    index_timeout_s: float = Field(default=30.0, gt=0)  # client request timeout
    # Embedded index (tantivy) readers advise the kernel that they read the index's
    # mapped files at random (services/common/adapters/tantivy/mmap_advice.py): no read-ahead,
    # which under a memory limit evicts the pages searches need.
    index_random_access: bool = True
    # The embedded index's writer keeps the documents it committed lately, bigram fields
    # included, up to this many characters of their text fields (about 2 bytes each), so
    # that rewriting a document for its link fields neither reads it back nor segments
    # its text again (services/common/adapters/tantivy/recent_documents.py). The name is from
    # when only the bigram fields were kept.
    index_gram_cache_chars: int = Field(default=32_000_000, ge=0)
    # `tansuo force-merge` rewrites the embedded index with one writer of this much
    # memory: each time it fills, a segment is written, so more memory, fewer segments
    # (tantivy allows under 4 GB). The default holds a 100,000-page index (1 GB on disk)
    # in one segment.
    index_merge_heap_mb: int = Field(default=2000, ge=64, le=4000)

    # --- indexer
    # The indexer commits every interval, or sooner once this many writes are pending.
    # A commit costs nearly the same whatever it holds, so fewer, larger commits cost less
    # CPU a page (docs/benchmarks.md, 'Ninth round (issue 12): what a commit costs'). One
    # second keeps pages searchable as they are fetched; a heavy crawl may trade that away.
    indexer_commit_interval_s: float = Field(default=1.0, gt=0)
    # Also the most events the indexer takes in one poll; it takes fewer while the index
    # answers slowly (services/indexer/poll_size.py).
    indexer_batch_size: int = Field(default=1000, ge=1)
    # While no process has searched the index for this long (Elasticsearch's
    # index.search.idle.after, 30 s), the indexer commits every idle interval instead:
    # pages nobody looks for yet need not be searchable within the second. The first
    # search after that sees pages up to one idle interval old, the next ones are
    # fresh again. 0 turns the rule off. Embedded index only (SearchIndex.searched_at).
    indexer_search_idle_after_s: float = Field(default=30.0, ge=0)
    indexer_idle_commit_interval_s: float = Field(default=10.0, gt=0)

    # --- ranker
    ranker_interval_s: float = Field(default=300.0, gt=0)  # periodic recompute during long crawls
    # Documents waiting for link fields are ranked once no link batch has changed the
    # graph for this long (a crawl that ended or paused), not at the end of the interval.
    ranker_quiet_s: float = Field(default=10.0, gt=0)
    ranker_damping: float = Field(default=0.85, gt=0, lt=1)
    ranker_tolerance: float = Field(default=1e-6, gt=0)  # L1 change between iterations
    ranker_max_iterations: int = Field(default=200, ge=1)

    # --- search (scoring weights, shared by every index backend)
    search_title_boost: float = 3.0
    search_headings_boost: float = 2.0
    search_anchors_boost: float = 1.5
    search_body_boost: float = 1.0
    search_subword_boost: float = 0.3  # jieba search-mode sub-words, e.g. 人民 inside 中华人民共和国
    search_phrase_boost: float = 2.0  # the query's words in order, in title or body
    # Character bigrams (exact matching, whatever the segmenter does): a query word the
    # page splits differently still matches through its bigrams, at this weight; a run of
    # Han text in the query found verbatim on the page adds the gram-phrase boost; a quoted
    # phrase scores as a bigram phrase in title and body, at these weights.
    # Soft conjunction: a query of up to this many wanted words requires them all (then
    # any, if no page has all); a longer one requires this share of them, rounded up,
    # so that a long question is not cut down to the few pages that hold every word.
    search_all_words_up_to: int = Field(default=2, ge=1)
    search_long_query_share: float = Field(default=0.34, gt=0, le=1)
    # In such a longer query, a word that more than this share of the pages and more
    # than this many pages hold (工作, 相关 in a million news pages) selects no page and
    # only adds score to the pages the other words select (Lucene's CommonTermsQuery);
    # a share of 0 turns this off.
    search_common_word_share: float = Field(default=0.05, ge=0, le=1)
    search_common_word_pages: int = Field(default=50_000, ge=0)
    # Question words and particles (怎么, 如何, 吗 …) are never required and weigh this much.
    search_question_word_weight: float = Field(default=0.2, ge=0)
    # A word's idf in one field (title, headings, anchors, body) is at most this many
    # times its idf over the whole collection (its largest document frequency in any
    # field): 1 shares one idf across fields as BM25F does, 0 keeps per-field idf and
    # saves the term-statistics call of each query. docs/ranking.md has the figures.
    search_field_idf_cap: float = Field(default=3.0, ge=0)
    search_synonym_weight: float = Field(default=0.8, ge=0)  # another name of a query word
    search_regional_weight: float = Field(default=1.0, ge=0)  # its other region's name (列印 for 打印)
    # A nickname (excel, ppt, word) only adds score, at this weight: it steers towards
    # its module's pages, which rarely name it.
    search_nickname_weight: float = Field(default=0.5, ge=0)
    search_gram_boost: float = 0.5
    # Only a query of up to this many wanted clauses matches its words by their bigrams
    # too: in a longer one a page matches by a share of the words anyway, and the words'
    # bigram phrases are the costliest part of a long query (docs/ranking.md, 'What chose
    # each weight').
    search_word_grams_up_to: int = Field(default=4, ge=0)
    search_gram_phrase_boost: float = 4.0
    search_line_phrase_boost: float = 8.0  # a line (six bigrams or more, no question word) verbatim
    # Typos (docs/ranking.md, "Forgiving search"): the free text's bigrams as terms, in
    # any order, weigh this much beside the title and body gram boosts, as score for a
    # run of at least search_typo_min_grams bigrams, and, when the exact query finds no
    # page, or fewer than search_typo_few and one of its words is on no page, to
    # select pages holding all but search_typo_chars characters' worth of them.
    search_typo_gram_weight: float = Field(default=0.3, ge=0)
    search_typo_part_boost: float = Field(default=8.0, ge=0)  # each third of a long run, verbatim (bodies at half)
    search_typo_min_grams: int = Field(default=4, ge=1)
    # A run's score-only bigrams are read in bodies for its this many rarest there only
    # (``QueryPlanner._not_rarest_in_bodies``); in titles, all of them.
    search_typo_gram_terms: int = Field(default=4, ge=1)
    search_typo_few: int = Field(default=10, ge=0)
    search_typo_chars: int = Field(default=1, ge=0)
    # A one-word query (2-4 Han characters) is checked for a typo that is itself a word
    # (建康 for 健康) only when fewer than this share of the pages hold it.
    search_typo_rare_share: float = Field(default=0.005, ge=0, le=1)
    # The did-you-mean weighs a correction by what users search too: the search log's
    # most searched queries of the newest days, read again every refresh.
    search_typo_log_days: int = Field(default=30, ge=1)
    search_typo_log_queries: int = Field(default=10_000, ge=0)
    search_typo_log_refresh_s: float = Field(default=300.0, gt=0)
    search_title_grams_boost: float = 3.0
    search_body_grams_boost: float = 1.0
    search_pagerank_weight: float = 1.5
    search_pagerank_pivot: float = 1.0  # rank feature is PageRank x N, so 1.0 is the average page
    # At most this many results of one site on a page while other sites have results
    # (the rest move to later pages); 0 turns site diversity off.
    search_results_per_site: int = Field(default=2, ge=0)
    search_rescore_window: int = Field(default=500, ge=10)
    search_max_page_size: int = Field(default=100, ge=1)
    # Answers kept per API worker while the index is unchanged (0 = off); see
    # services/search/result_cache.py. The TTL applies to backends that cannot say
    # cheaply whether they changed (Elasticsearch: about its refresh interval).
    search_cache_entries: int = Field(default=2048, ge=0)
    search_cache_ttl_s: float = Field(default=1.0, ge=0)
    # Documents whose stored fields a tantivy reader keeps between searches (Solr's
    # documentCache): reading them is a third of a search's time. About 16 KB each for
    # a page of 7,000 characters, so 2,048 cost some 30 MB per API worker.
    search_doc_cache_entries: int = Field(default=2048, ge=0)

    # --- the operator's dictionaries (docs/dictionaries.md): edited in the console and
    # stored with the crawl state; a file's entries add to them (one entry a line, UTF-8).
    analysis_user_words_file: Path | None = None  # words the segmenter keeps whole
    analysis_synonyms_file: Path | None = None  # synonym rules: "a, b, c" or "a => b, c"
    analysis_stop_words_file: Path | None = None  # words a query never requires
    # How often every process looks for a changed dictionary (one small read).
    analysis_refresh_s: float = Field(default=5.0, gt=0)
    # An indexer that owns the reanalysis job and is silent this long loses it to another.
    analysis_reanalysis_stale_s: float = Field(default=120.0, gt=0)

    # --- search analytics (docs/search-analytics.md): every search and click of the web
    # UI and the API, counted per day; no client address is stored.
    analytics_enabled: bool = True
    analytics_retention_days: int = Field(default=90, ge=1, le=3660)
    analytics_recent_searches: int = Field(default=10_000, ge=0)  # single searches kept, newest
    analytics_max_queries_per_day: int = Field(default=10_000, ge=10)  # distinct, most searched kept
    # Days start at midnight of this offset from UTC (8: China, Hong Kong, Taiwan, Singapore).
    analytics_utc_offset_hours: float = Field(default=8.0, ge=-12, le=14)

    # --- periodic jobs (Celery in cluster mode); an interval of 0 turns a job off.
    # PageRank is no Celery job: the ranker service schedules it (ranker_interval_s).
    tasks_broker: str = ""  # redis://…; empty = the Redis of TANSUO_STATE
    tasks_recrawl_sweep_interval_s: float = Field(default=60.0, ge=0)
    tasks_reindex_interval_s: float = Field(default=0.0, ge=0)

    # --- embedded mode (`tansuo crawl`, `run`, `demo`)
    # 2: the crawler and scheduler in one process, the indexer and ranker in a second,
    # so a 2-core machine uses both cores and segmentation never holds up the reactor;
    # 1: every service in one process, for debugging with one traceback and one pdb, and
    # for 1-core machines (docs/benchmarks.md, 'One process or two').
    embedded_processes: int = Field(default=2, ge=1, le=2)
    # The message log keeps a message until every group has committed it; dropping those
    # this often keeps it to a few seconds of the crawl; without it a continuous crawl,
    # which never ends, would keep every page event it sent.
    embedded_bus_compact_interval_s: float = Field(default=5.0, gt=0)
    # A progress line this often while a crawl runs with its output not on a terminal
    # (a file, a pipe, a service's log), where the live progress bar draws nothing.
    embedded_progress_log_interval_s: float = Field(default=10.0, gt=0)

    # --- every worker service: /livez, /readyz, /metrics
    health_port: int = Field(default=9102, ge=0, le=65535)  # 0 = any free port
    health_host: str = "0.0.0.0"
    health_liveness_timeout_s: float = Field(default=120.0, gt=0)  # a loop silent this long is dead
    log_format: Literal["text", "json"] = "text"

    # --- api
    # `tansuo serve` and `tansuo api` run gunicorn (docs/serving.md): api_workers processes,
    # each with api_threads threads; 0 workers = one per core.
    api_workers: int = Field(default=0, ge=0)
    api_threads: int = Field(default=8, ge=1)
    # A request not started this long after it arrived gets 503 + Retry-After at once.
    api_queue_deadline_s: float = Field(default=2.0, gt=0)
    # The Retry-After a refusal sends: this at first, doubling each second in which a
    # worker keeps refusing, up to the maximum, an eighth less after each second
    # without a refusal (services/common/runtime/http/retry_after.py says why a minute and more).
    api_retry_after_s: int = Field(default=1, ge=0)
    api_retry_after_max_s: int = Field(default=120, ge=0)
    api_keepalive_s: int = Field(default=5, ge=0)  # an idle kept-alive connection is closed after this
    # Open connections per worker; at the limit the oldest idle kept-alive one is closed
    # to let a new client in.
    api_max_connections: int = Field(default=1000, ge=2)
    # A request (head and body) must arrive whole within this of its first byte, else
    # 408; an answer the client does not read within the second is dropped. Either way
    # a slow client costs a connection, never a worker thread (docs/serving.md).
    api_request_timeout_s: float = Field(default=5.0, gt=0)
    api_response_timeout_s: float = Field(default=30.0, gt=0)
    api_host: str = "127.0.0.1"
    # Bearer token of the endpoints that reveal or change the crawl (/api/frontier,
    # /api/report, POST /api/seeds); empty turns them off (403) rather than open.
    api_token: str = ""
    # A file holding the token (a Compose or Kubernetes secret mounted as a file), read
    # when TANSUO_API_TOKEN itself is empty, so the token need not sit in the environment.
    api_token_file: Path | None = None
    # Wrong tokens (console logins and bearer headers) a client address may present in
    # a minute, per worker process, before it is answered 429 (services/api/auth_failures.py).
    api_auth_failures_per_minute: int = Field(default=5, ge=1)
    # Per client address and per worker process (services/api/rate_limit.py): searches
    # and suggestions refill at this rate up to the burst; 0 turns limiting off. A
    # person typing with suggestions stays far below; a scraping loop does not.
    api_rate_limit_per_s: float = Field(default=10.0, ge=0)
    api_rate_limit_burst: int = Field(default=60, ge=1)
    # Addresses and ranges never limited; none by default, loopback included: a reverse
    # proxy on the same host would otherwise exempt every user behind it. The load
    # benchmark names 127.0.0.0/8 here (docs/deploy.md, "Security").
    api_rate_limit_exempt: StrList = ()
    # The reverse proxies in front (addresses or ranges), whose X-Forwarded-For names
    # the client (services/api/client_address.py); from any other peer the header is
    # ignored, as a client could write it itself.
    api_trusted_proxies: StrList = ()
    # Gone: it trusted X-Forwarded-For from any peer. Refused when set, with the way out.
    api_proxy_hops: int = 0
    api_port: int = Field(default=8080, ge=0, le=65535)
    # The operator console (/admin): a login lasts this long, counted from the login,
    # not from the last click, so a stolen cookie stops working on its own.
    api_admin_session_s: int = Field(default=12 * 3600, ge=60)
    # ... and ends after this long without a request (services/api/admin_session.py).
    api_admin_idle_s: int = Field(default=30 * 60, ge=60)
    # Send the console's cookie over HTTPS only. Off by default because `tansuo serve`
    # speaks plain HTTP on 127.0.0.1; turn it on behind a TLS proxy or an Ingress.
    api_admin_cookie_secure: bool = False

    @field_validator(
        "frontier_allow_domains",
        "frontier_include_patterns",
        "frontier_exclude_patterns",
        "api_rate_limit_exempt",
        "api_trusted_proxies",
        mode="before",
    )
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        # Environment variables hold "a.cn,*.b.cn"; JSON lists still work too.
        if isinstance(value, str):
            if value.lstrip().startswith("["):
                return tuple(json.loads(value))
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return value

    @model_validator(mode="before")
    @classmethod
    def _token_from_file(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("api_token") or not data.get("api_token_file"):
            return data
        path = Path(data["api_token_file"])
        try:
            token = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ValueError(f"TANSUO_API_TOKEN_FILE: cannot read {path}: {exc.strerror}") from None
        return {**data, "api_token": token}

    @field_validator("api_proxy_hops")
    @classmethod
    def _no_proxy_hops(cls, value: int) -> int:
        if value:
            raise ValueError(
                "TANSUO_API_PROXY_HOPS is gone (it trusted X-Forwarded-For from any client): "
                "name the proxies in TANSUO_API_TRUSTED_PROXIES, e.g. 10.0.0.0/8"
            )
        return value

    @field_validator("analysis_user_words_file", "analysis_synonyms_file", "analysis_stop_words_file")
    @classmethod
    def _readable_file(cls, value: Path | None) -> Path | None:
        # A dictionary file that is missing fails at start-up, not as a silent empty list.
        if value is not None and not value.is_file():
            raise ValueError(f"no such file: {value}")
        return value

    @field_validator("api_rate_limit_exempt", "api_trusted_proxies")
    @classmethod
    def _valid_networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        import ipaddress

        for entry in value:
            ipaddress.ip_network(entry, strict=False)  # a ValueError fails start-up
        return value

    @field_validator("api_token")
    @classmethod
    def _token_long_enough(cls, value: str) -> str:
        if value and len(value) < MIN_TOKEN_CHARS:
            raise ValueError(
                f"TANSUO_API_TOKEN: at least {MIN_TOKEN_CHARS} characters needed, got {len(value)} "
                "(make one with: openssl rand -hex 20)"
            )
        return value

    @field_validator("frontier_include_patterns", "frontier_exclude_patterns")
    @classmethod
    def _valid_regexes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        import re

        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:  # at start-up, not mid-crawl on the first link
                raise ValueError(f"not a regular expression: {pattern!r} ({exc})") from None
        return value

    @field_validator("search_field_idf_cap")
    @classmethod
    def _cap_off_or_at_least_one(cls, value: float) -> float:
        if 0 < value < 1:  # below the shared idf: a field would weigh less than the collection says
            raise ValueError("TANSUO_SEARCH_FIELD_IDF_CAP: 0 (off) or at least 1 (1 = one idf across fields)")
        return value

    @property
    def search_field_boosts(self) -> list[tuple[str, float]]:
        """(index field, boost) of every searched field, for every index backend alike,
        so that they score the same; a boost of 0 or less switches a field off."""
        boosts = [
            ("title_tokens", self.search_title_boost),
            ("headings_tokens", self.search_headings_boost),
            ("anchors_tokens", self.search_anchors_boost),
            ("body_tokens", self.search_body_boost),
            ("subword_tokens", self.search_subword_boost),
        ]
        return [(field, boost) for field, boost in boosts if boost > 0]

    @property
    def effective_parallelism(self) -> int:
        """Fetches one host may have in flight at once."""
        return self.frontier_host_parallelism if self.frontier_host_delay_s == 0 else 1
