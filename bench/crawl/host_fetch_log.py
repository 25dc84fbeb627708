"""What the site servers' own logs say about a many-host crawl: pages fetched, over what
window, and the shortest gap between two requests to one host.

The servers' logs, not the crawler's counters: politeness is what a site sees. Every
request counts for the gaps (robots.txt and the sitemap probe too, as a host's admin
would count them); only page GETs count as pages.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from bench.crawl.crawl_bench import HOUSEKEEPING
from services.cli.static_site_server import RequestRecord

# The server stamps arrival with time.monotonic() and the frontier its clock with
# time.time(); a slewing wall clock may drift the two apart by microseconds, not more.
CLOCK_SLACK_S = 0.001


@dataclass(frozen=True)
class FetchLog:
    pages: int  # page GETs, robots.txt and the sitemap probe left out
    requests: int  # every request, those two included
    missing: int  # pages of the site never fetched
    repeated: int  # page GETs beyond the first of their URL
    window_s: float  # first page request to the end of the last one's delay, over all hosts
    min_gap_s: float  # shortest gap between two requests to one host, over all hosts
    median_gap_s: float  # median of those gaps: the delay plus the frontier's round trip

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.window_s if self.window_s > 0 else 0.0

    def polite(self, delay_s: float) -> bool:
        """No host saw two requests closer than the delay."""
        return self.min_gap_s >= delay_s - CLOCK_SLACK_S


def read_log(logs: Mapping[str, Sequence[RequestRecord]], page_paths: Sequence[str], delay_s: float,
             since: float = 0.0) -> FetchLog:  # fmt: skip
    """``logs``: each host's requests; ``page_paths``: the paths every host serves;
    ``since``: a monotonic time before which requests belong to an earlier crawl.

    The window ends a delay after the last page request: each page holds its host for a
    delay, and first-to-last alone would count P pages over P - 1 delays, a crawl of 3
    pages a host at 1.5 times its real rate."""
    gaps: list[float] = []
    page_times: list[float] = []
    missing = repeated = requests = 0
    for records in logs.values():
        mine = [r for r in records if r.time >= since]
        requests += len(mine)
        times = sorted(r.time for r in mine)
        gaps += [b - a for a, b in pairwise(times)]
        pages = [r for r in mine if r.method == "GET" and r.path not in HOUSEKEEPING]
        page_times += [r.time for r in pages]
        fetched = {r.path for r in pages}
        missing += len(set(page_paths) - fetched)
        repeated += len(pages) - len(fetched)
    return FetchLog(
        pages=len(page_times),
        requests=requests,
        missing=missing,
        repeated=repeated,
        window_s=max(page_times) - min(page_times) + delay_s if page_times else 0.0,
        min_gap_s=min(gaps, default=float("inf")),
        median_gap_s=statistics.median(gaps) if gaps else 0.0,
    )
