"""Writes Tansuo's Grafana dashboards (deploy/grafana/dashboards/*.json).

Grafana's JSON is long and repetitive, so the dashboards are described here as a list
of panels and queries, and the JSON is generated. docker-compose provisions the files
and the Helm chart ships them as ConfigMaps for Grafana's sidecar; a test checks that
the committed files match this script and that every metric they name is in
services/common/runtime/metrics.py.

    python deploy/grafana/build_dashboards.py           # rewrite the JSON files
    python deploy/grafana/build_dashboards.py --check   # exit 1 if they are stale
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(__file__).resolve().parent / "dashboards"
# Every panel queries the data source picked in this variable, so the same JSON works
# with the compose Prometheus and with whatever Prometheus a cluster's Grafana knows.
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"  # Grafana's window: at least four scrape intervals


def quantiles(metric: str, qs: tuple[float, ...] = (0.5, 0.99)) -> list[tuple[str, str]]:
    """histogram_quantile queries of a histogram's buckets, one per quantile."""
    return [
        (f"histogram_quantile({q}, sum by (le) (rate({metric}_bucket[{RATE}])))", f"p{round(q * 100):d}") for q in qs
    ]


def mean(metric: str) -> str:
    """Mean of a histogram's observations over the window."""
    return f"sum(rate({metric}_sum[{RATE}])) / sum(rate({metric}_count[{RATE}]))"


@dataclass
class Panel:
    title: str
    queries: list[tuple[str, str]]  # (PromQL, legend)
    unit: str = "short"
    kind: str = "timeseries"  # or "stat"
    description: str = ""
    width: int = 12
    height: int = 8
    stack: bool = False

    def to_json(self, pid: int, x: int, y: int) -> dict:
        targets = [
            {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend, "refId": chr(ord("A") + i)}
            for i, (expr, legend) in enumerate(self.queries)
        ]
        defaults: dict = {"unit": self.unit}
        options: dict
        if self.kind == "stat":
            options = {
                "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                "colorMode": "value",
                "graphMode": "area",
                "textMode": "auto",
            }
        else:
            defaults["custom"] = {
                "drawStyle": "line",
                "fillOpacity": 20 if self.stack else 5,
                "lineWidth": 1,
                "showPoints": "never",
                "stacking": {"mode": "normal" if self.stack else "none", "group": "A"},
            }
            options = {
                "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                "tooltip": {"mode": "multi", "sort": "desc"},
            }
        return {
            "id": pid,
            "type": self.kind,
            "title": self.title,
            "description": self.description,
            "datasource": DATASOURCE,
            "gridPos": {"h": self.height, "w": self.width, "x": x, "y": y},
            "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": options,
            "targets": targets,
        }


@dataclass
class Dashboard:
    uid: str
    title: str
    description: str
    panels: list[Panel] = field(default_factory=list)

    def to_json(self) -> dict:
        laid_out, x, y, row_height = [], 0, 0, 0
        for pid, panel in enumerate(self.panels, start=1):
            if x + panel.width > 24:  # Grafana's grid is 24 columns wide
                x, y, row_height = 0, y + row_height, 0
            laid_out.append(panel.to_json(pid, x, y))
            x += panel.width
            row_height = max(row_height, panel.height)
        return {
            "uid": self.uid,
            "title": self.title,
            "description": self.description,
            "tags": ["tansuo"],
            "editable": True,
            "graphTooltip": 1,  # shared crosshair: compare panels at one instant
            "refresh": "30s",
            "schemaVersion": 39,
            "time": {"from": "now-6h", "to": "now"},
            "timepicker": {},
            "timezone": "",
            "version": 1,
            "links": [
                {"type": "dashboards", "tags": ["tansuo"], "asDropdown": True, "title": "Tansuo", "includeVars": True}
            ],
            "annotations": {"list": []},
            "templating": {
                "list": [
                    {
                        "name": "datasource",
                        "label": "Data source",
                        "type": "datasource",
                        "query": "prometheus",
                        "current": {},
                        "hide": 0,
                        "refresh": 1,
                        "options": [],
                    }
                ]
            },
            "panels": laid_out,
        }


FETCH_ERRORS = f'sum(rate(tansuo_pages_fetched_total{{code!~"[23].."}}[{RATE}]))'
FETCH_ALL = f"sum(rate(tansuo_pages_fetched_total[{RATE}]))"

DASHBOARDS = [
    Dashboard(
        "tansuo-crawl",
        "Tansuo / Crawl",
        "Crawl rate, answers by HTTP status, errors, fetch latency, and documents waiting for PageRank.",
        [
            Panel("Pages fetched per second", [(FETCH_ALL, "pages/s")], "reqps", "stat", width=6, height=5),
            Panel(
                "Fetch error share",
                [(f"{FETCH_ERRORS} / {FETCH_ALL}", "errors")],
                "percentunit",
                "stat",
                "Fetches with no 2xx or 3xx answer (code 0: no response at all). "
                "TansuoFetchErrorRateHigh fires above 50 %.",
                width=6,
                height=5,
            ),
            Panel(
                "Fetches in flight", [("sum(tansuo_crawler_in_flight)", "in flight")], kind="stat", width=6, height=5
            ),
            Panel(
                "Bytes received per second",
                [(f"sum(rate(tansuo_fetched_bytes_total[{RATE}]))", "bytes/s")],
                "Bps",
                "stat",
                width=6,
                height=5,
            ),
            Panel(
                "Crawl rate by HTTP status",
                [(f"sum by (code) (rate(tansuo_pages_fetched_total[{RATE}]))", "{{code}}")],
                "reqps",
                description="Finished fetches per second; code 0 means no response (DNS, refused, timeout, too large).",
                stack=True,
            ),
            Panel(
                "Errors by service and kind",
                [(f"sum by (service, kind) (rate(tansuo_errors_total[{RATE}]))", "{{service}} {{kind}}")],
                "ops",
                description="tansuo_errors_total; TansuoErrorsRising fires on a sustained rise.",
                stack=True,
            ),
            Panel("Fetch latency", quantiles("tansuo_fetch_duration_seconds"), "s"),
            Panel(
                "Dropped and refused",
                [
                    (f"sum(rate(tansuo_robots_blocked_total[{RATE}]))", "robots.txt disallowed"),
                    (f"sum(rate(tansuo_crawler_stale_jobs_total[{RATE}]))", "stale jobs dropped"),
                ],
                "ops",
                description="URLs robots.txt forbids, and redelivered fetch jobs whose lease had already gone.",
            ),
            Panel(
                "Documents extracted per second",
                [(f"sum by (outcome) (rate(tansuo_documents_extracted_total[{RATE}]))", "{{outcome}}")],
                "ops",
                description="PDF, Office, WPS and text files through the extractor: ok, cut by a cap, or the "
                "reason one was skipped (encrypted, malformed, zip_bomb, timeout ...). docs/documents.md.",
                stack=True,
            ),
            Panel(
                "Extraction backlog and time",
                [
                    ('sum(tansuo_consumer_lag_messages{topic="documents.fetched",group="extractor"})', "waiting"),
                    *quantiles("tansuo_extraction_duration_seconds"),
                ],
                description="Documents fetched and not yet extracted (what the chart scales extractors on), and "
                "the time one takes in a worker process.",
            ),
            Panel(
                "Fetches in flight per crawler",
                # instance, not pod: compose's Prometheus knows no pods.
                [("sum by (instance) (tansuo_crawler_in_flight)", "{{instance}}")],
                description="One line per crawler process: an idle one means more crawlers than due hosts or leases.",
                width=24,
            ),
            Panel(
                "Documents waiting for link fields",
                [
                    ("max(tansuo_ranker_documents_waiting)", "documents"),
                    ("max(tansuo_ranker_oldest_waiting_seconds)", "oldest waited (s)"),
                ],
                description=(
                    "Indexed documents that no PageRank run has ranked yet: no PageRank, no anchor text. "
                    "Normal during a crawl; the next run (at most one ranker interval later) clears them. "
                    "TansuoLinkFieldsLagging fires when one waits longer than two intervals."
                ),
                width=24,
            ),
        ],
    ),
    Dashboard(
        "tansuo-frontier",
        "Tansuo / Frontier",
        # The frontier gauges count the whole frontier, and every scheduler pod reports
        # them alike: max, not sum, or two pods would show twice the URLs.
        "What the scheduler holds: URLs by state, due URLs, hosts, politeness and the bus backlog.",
        [
            Panel("Due URLs", [("max(tansuo_frontier_due_urls)", "due")], kind="stat", width=6, height=5),
            Panel("Hosts", [("max(tansuo_frontier_hosts)", "hosts")], kind="stat", width=6, height=5),
            Panel(
                "Blocked hosts",
                [("max(tansuo_frontier_blocked_hosts)", "blocked")],
                kind="stat",
                description="Hosts waiting out a Retry-After or a failed robots.txt.",
                width=6,
                height=5,
            ),
            Panel(
                "Fetch jobs dispatched per second",
                [(f"sum(rate(tansuo_fetch_jobs_dispatched_total[{RATE}]))", "jobs/s")],
                "ops",
                "stat",
                width=6,
                height=5,
            ),
            Panel(
                "Frontier URLs by state",
                [("max by (state) (tansuo_frontier_urls)", "{{state}}")],
                stack=True,
            ),
            Panel(
                "Due URLs and blocked hosts",
                [
                    ("max(tansuo_frontier_due_urls)", "due URLs"),
                    ("max(tansuo_frontier_blocked_hosts)", "blocked hosts"),
                ],
            ),
            Panel(
                "Politeness wait",
                quantiles("tansuo_politeness_wait_seconds"),
                "s",
                description="How long a due URL waited for its host's delay before it was leased.",
            ),
            Panel(
                "Consumer lag by topic and group",
                [("max by (topic, group) (tansuo_consumer_lag_messages)", "{{topic}} / {{group}}")],
                description="Messages published and not yet committed. The crawler autoscaler reads fetches.scheduled.",
            ),
            Panel(
                "Pages removed by reason",
                [(f"sum by (reason) (rate(tansuo_pages_removed_total[{RATE}]))", "{{reason}}")],
                "ops",
                width=24,
            ),
        ],
    ),
    Dashboard(
        "tansuo-indexing",
        "Tansuo / Indexing",
        "Pages indexed, indexing latency and lag, the indexer's backlog and requests, duplicates, deletions and "
        "PageRank runs.",
        [
            Panel(
                "Pages indexed per second",
                [(f"sum(rate(tansuo_pages_indexed_total[{RATE}]))", "pages/s")],
                "ops",
            ),
            Panel(
                "Indexing latency (fetch to searchable)",
                quantiles("tansuo_indexing_latency_seconds"),
                "s",
            ),
            Panel(
                "Indexer lag",
                [("max by (instance) (tansuo_indexer_lag_seconds)", "{{instance}}")],
                "s",
                description=(
                    "How long the oldest page an indexer holds (polled, not yet searchable) has waited since its "
                    "fetch; 0 when it holds none. Normally within the commit interval plus the page's trip through "
                    "the bus. TansuoIndexerLagging fires when it stays above a minute."
                ),
            ),
            Panel(
                "Indexer backlog and poll size",
                [
                    ('max by (topic) (tansuo_consumer_lag_messages{group="indexer"})', "{{topic}} waiting"),
                    ("max by (instance) (tansuo_indexer_poll_size)", "poll size {{instance}}"),
                ],
                description=(
                    "Page events not yet committed by the indexers, and how many an indexer takes in one poll: "
                    "what it handled in a commit interval lately, so it shrinks while Elasticsearch answers slowly."
                ),
            ),
            Panel(
                "Indexer requests to Elasticsearch per page",
                [
                    (
                        f'sum by (endpoint) (rate(tansuo_index_requests_total{{service="indexer"}}[{RATE}])) '
                        f"/ scalar(sum(rate(tansuo_pages_indexed_total[{RATE}])))",
                        "{{endpoint}}",
                    )
                ],
                description=(
                    "HTTP requests the indexers sent to Elasticsearch per page indexed, by endpoint: a batch's "
                    "duplicate checks in one search, its writes and refresh in one bulk request. Well below 0.1 "
                    "while a crawl runs; readiness pings (count) dominate when it is quiet."
                ),
                stack=True,
            ),
            Panel(
                "Duplicates by kind",
                [(f"sum by (kind) (rate(tansuo_duplicates_total[{RATE}]))", "{{kind}}")],
                "ops",
                description="Pages not indexed because another URL holds the same (or nearly the same) content.",
                stack=True,
            ),
            Panel(
                "Documents deleted by reason",
                [(f"sum by (reason) (rate(tansuo_documents_deleted_total[{RATE}]))", "{{reason}}")],
                "ops",
                stack=True,
            ),
            Panel(
                "PageRank run duration",
                [
                    (mean("tansuo_pagerank_duration_seconds"), "mean"),
                    *quantiles("tansuo_pagerank_duration_seconds", (0.99,)),
                ],
                "s",
            ),
            Panel(
                "Link graph at the last PageRank run",
                [
                    ("max(tansuo_pagerank_graph_nodes)", "pages"),
                    ("max(tansuo_pagerank_graph_edges)", "links"),
                ],
            ),
        ],
    ),
    Dashboard(
        "tansuo-search",
        "Tansuo / Search",
        "Search latency and request rate, and whether each service reaches its backends.",
        [
            Panel(
                "Search latency",
                quantiles("tansuo_search_duration_seconds", (0.5, 0.9, 0.99)),
                "s",
                description="TansuoSearchLatencyHigh fires when p99 stays above 1 s.",
            ),
            Panel(
                "Search requests by outcome",
                [(f"sum by (outcome) (rate(tansuo_search_requests_total[{RATE}]))", "{{outcome}}")],
                "reqps",
                stack=True,
            ),
            Panel(
                "API requests: answered and refused",
                [
                    (f"sum(rate(tansuo_api_requests_total[{RATE}])) - sum(rate(tansuo_api_refusals_total[{RATE}]))",
                     "started"),
                    (f"sum(rate(tansuo_api_refusals_total[{RATE}]))", "refused (503 + Retry-After)"),
                ],
                "reqps",
                description="A request that waited longer than TANSUO_API_QUEUE_DEADLINE_S (2 s) for a worker "
                "thread is refused at once. TansuoApiRefusing fires when over 5% are refused for 5 minutes: "
                "add api pods or workers (docs/serving.md, 'Sizing').",
                stack=True,
            ),
            Panel(
                "API request queue",
                [("sum(tansuo_api_queue_depth)", "waiting for a thread"), ("sum(tansuo_api_workers)", "worker processes")],
                description="Requests that arrived and wait for a worker thread, summed over pods and their workers.",
            ),
            Panel(
                "Time waiting for a worker thread",
                quantiles("tansuo_api_queue_wait_seconds", (0.5, 0.99)),
                "s",
                description="From a request's arrival to its start; past the deadline it is refused.",
            ),
            Panel(
                "Mean search time",
                [
                    (mean("tansuo_search_duration_seconds"), "mean")
                ],
                "s",
                "stat",
                width=8,
                height=5,
            ),
            Panel(
                "Backends reachable",
                [("min by (backend) (tansuo_backend_up)", "{{backend}}")],
                "bool_yes_no",
                "stat",
                "1 when every pod's last ping of the backend succeeded.",
                width=16,
                height=5,
            ),
            Panel(
                "Searches that find nothing",
                [
                    (f"sum(rate(tansuo_search_analytics_searches_total{{result=\"zero\"}}[{RATE}])) / "
                     f"sum(rate(tansuo_search_analytics_searches_total[{RATE}]))", "share of searches"),
                ],
                "percentunit",
                description="First pages of results that found no page. Which queries: the console's search "
                "analytics (/admin/analytics), or GET /api/analytics.",
            ),
            Panel(
                "Click-through",
                [
                    (f"sum(rate(tansuo_search_result_clicks_total[{RATE}])) / "
                     f"sum(rate(tansuo_search_analytics_searches_total{{result=\"hits\"}}[{RATE}]))",
                     "clicks per search with results"),
                    (f"sum(rate(tansuo_search_analytics_dropped_total[{RATE}]))", "events lost (search log away)"),
                ],
                description="Results opened through a results page's click link, per search that found something.",
            ),
        ],
    ),
]


def render(board: Dashboard) -> str:
    return json.dumps(board.to_json(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed file differs")
    args = parser.parse_args(argv)
    stale = []
    for board in DASHBOARDS:
        path = OUT / f"{board.uid}.json"
        text = render(board)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"stale dashboards (run {Path(__file__).name}): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
