"""Every Prometheus metric Tansuo exports, in one catalog.

Dashboards (deploy/grafana/), alert rules (deploy/prometheus/) and the services all
name metrics from here, and a test checks that each dashboard query names a metric
that a running service really exports. Names follow Prometheus conventions: a
``tansuo_`` prefix, base units (seconds, bytes), ``_total`` for counters.

The objects live in prometheus_client's default registry, as its idiom expects; a
process exports only what it touched plus the ones it sets at start-up.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

# --- crawler
PAGES_FETCHED = Counter(
    "tansuo_pages_fetched_total", "Fetches finished, by HTTP status code (0 = no response).", ["code"]
)
FETCH_DURATION = Histogram(
    "tansuo_fetch_duration_seconds", "Time from sending a request to having its response.", buckets=_LATENCY_BUCKETS
)
FETCHED_BYTES = Counter("tansuo_fetched_bytes_total", "Response body bytes received.")
CRAWLER_IN_FLIGHT = Gauge("tansuo_crawler_in_flight", "Fetch jobs this crawler is working on.")
STALE_JOBS = Counter("tansuo_crawler_stale_jobs_total", "Redelivered fetch jobs dropped because their lease was gone.")

# --- extractor (documents)
DOCUMENTS_EXTRACTED = Counter(
    "tansuo_documents_extracted_total",
    "Documents through extraction, by format and outcome (ok, cut, or the reason one was skipped).",
    ["format", "outcome"],
)
EXTRACTION_DURATION = Histogram(
    "tansuo_extraction_duration_seconds",
    "Time to extract one document's text in a worker process, by document family.",
    ["family"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0),
)

# --- scheduler / frontier
ROBOTS_BLOCKED = Counter("tansuo_robots_blocked_total", "URLs not fetched because robots.txt disallows them.")
FRONTIER_URLS = Gauge("tansuo_frontier_urls", "URLs in the frontier, by state.", ["state"])
FRONTIER_DUE = Gauge("tansuo_frontier_due_urls", "Queued URLs whose fetch time has come.")
FRONTIER_HOSTS = Gauge("tansuo_frontier_hosts", "Hosts the frontier knows.")
FRONTIER_BLOCKED_HOSTS = Gauge("tansuo_frontier_blocked_hosts", "Hosts blocked by Retry-After or robots.txt failures.")
LIMIT_HITS = Counter(
    "tansuo_crawl_limit_hits_total",
    "URLs, links or fields cut by a crawl limit (depth, path depth, repeated segments, URL length, "
    "query parameters, outlinks per page, field lengths, message size), by limit.",
    ["limit"],
)
JOBS_DISPATCHED = Counter("tansuo_fetch_jobs_dispatched_total", "Fetch jobs handed to crawlers.")
POLITENESS_WAIT = Histogram(
    "tansuo_politeness_wait_seconds",
    "How long a due URL waited for its host's politeness delay before it was leased.",
    buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800),
)
PAGES_REMOVED = Counter("tansuo_pages_removed_total", "Pages sent out of the index (gone, redirected).", ["reason"])

# --- bus
CONSUMER_LAG = Gauge("tansuo_consumer_lag_messages", "Messages published but not yet committed, by topic and group.", ["topic", "group"])

# --- indexer
PAGES_INDEXED = Counter("tansuo_pages_indexed_total", "Documents written to the search index.")
DOCUMENTS_DELETED = Counter("tansuo_documents_deleted_total", "Documents deleted from the index.", ["reason"])
DUPLICATES = Counter("tansuo_duplicates_total", "Pages not indexed because another URL holds the content.", ["kind"])
INDEXING_LATENCY = Histogram(
    "tansuo_indexing_latency_seconds",
    "Time from a page's fetch to the index commit that makes it searchable.",
    buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 300),
)
INDEXER_LAG = Gauge(
    "tansuo_indexer_lag_seconds",
    "How long the oldest page the indexer holds (polled, not yet searchable) has waited since its fetch; "
    "0 when it holds none.",
)
INDEXER_POLL_SIZE = Gauge(
    "tansuo_indexer_poll_size",
    "Page events the indexer takes in one poll: fewer while the index answers slowly.",
)
INDEX_REQUESTS = Counter(
    "tansuo_index_requests_total",
    "HTTP requests this process sent to Elasticsearch, by endpoint (bulk, search, msearch, mget, get, "
    "refresh, count, other); a retry counts again.",
    ["endpoint"],
)

# --- ranker
PAGERANK_DURATION = Histogram(
    "tansuo_pagerank_duration_seconds", "Duration of one PageRank run.", buckets=(0.1, 0.5, 1, 5, 10, 30, 60, 300, 900)
)
PAGERANK_NODES = Gauge("tansuo_pagerank_graph_nodes", "Pages in the link graph at the last PageRank run.")
PAGERANK_EDGES = Gauge("tansuo_pagerank_graph_edges", "Links in the link graph at the last PageRank run.")
RANKER_DOCUMENTS_WAITING = Gauge(
    "tansuo_ranker_documents_waiting",
    "Documents the indexer announced as searchable that no PageRank run has ranked yet (no PageRank, no anchors).",
)
RANKER_INTERVAL = Gauge(
    "tansuo_ranker_interval_seconds",
    "The ranker's configured interval between PageRank runs; alerts compare waiting times with it.",
)
RANKER_OLDEST_WAITING = Gauge(
    "tansuo_ranker_oldest_waiting_seconds",
    "How long the document that has waited longest for its link fields has waited (0 when none waits).",
)

# --- api
SEARCH_DURATION = Histogram(
    "tansuo_search_duration_seconds", "Time to answer one search request.", buckets=_LATENCY_BUCKETS
)
SEARCH_REQUESTS = Counter("tansuo_search_requests_total", "Search requests, by outcome.", ["outcome"])
SEARCH_CACHE_HITS = Counter("tansuo_search_cache_hits_total", "Search requests answered from the result cache.")
# Search analytics (services/analytics/): per-query figures live in the search log and
# the console; these say how many searches find nothing and how often results are opened.
SEARCH_ANALYTICS_SEARCHES = Counter(
    "tansuo_search_analytics_searches_total",
    "Searches logged for analytics (first pages of results), by whether they found anything (hits, zero).",
    ["result"],
)
SEARCH_RESULT_CLICKS = Counter("tansuo_search_result_clicks_total", "Results opened through a results page's click link.")
SEARCH_ANALYTICS_DROPPED = Counter(
    "tansuo_search_analytics_dropped_total",
    "Search and click events lost because the search log was unreachable and the buffer full.",
)
# The API's request queue (services/common/runtime/http/bounded_worker.py, admission.py). Gauges of the
# API say how to combine its worker processes (prometheus_client's multiprocess mode);
# elsewhere the mode is ignored.
API_QUEUE_DEPTH = Gauge(
    "tansuo_api_queue_depth",
    "Requests that arrived and wait for a worker thread, over all worker processes.",
    multiprocess_mode="livesum",
)
API_QUEUE_WAIT = Histogram(
    "tansuo_api_queue_wait_seconds",
    "How long a request waited between arriving and starting (refused ones included).",
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0),
)
API_REQUESTS = Counter("tansuo_api_requests_total", "HTTP requests the API started or refused.")
API_REFUSALS = Counter(
    "tansuo_api_refusals_total", "Requests refused with 503 + Retry-After because they waited past the deadline."
)
API_RATE_LIMITED = Counter(
    "tansuo_api_rate_limited_total",
    "Search requests answered 429 because their client address ran out of tokens.",
    ["endpoint"],
)
API_AUTH_FAILURES = Counter(
    "tansuo_api_auth_failures_total",
    "Requests that presented a wrong API token (console login or bearer header), and those refused "
    "with 429 for too many of them.",
    ["outcome"],
)
API_WORKERS = Gauge("tansuo_api_workers", "Worker processes serving the API.", multiprocess_mode="livesum")

# --- every service
ERRORS = Counter("tansuo_errors_total", "Errors, by service and kind.", ["service", "kind"])
# livemin: in the API's worker processes, up only when every live worker's ping succeeded.
BACKEND_UP = Gauge(
    "tansuo_backend_up", "1 when the last ping of a backend succeeded.", ["backend"], multiprocess_mode="livemin"
)
