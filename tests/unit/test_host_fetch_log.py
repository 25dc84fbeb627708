"""What the many-host benchmark reads from the site servers' logs (bench/crawl/host_fetch_log.py)."""

from __future__ import annotations

from bench.crawl.host_fetch_log import read_log
from services.cli.static_site_server import RequestRecord


def _get(t: float, path: str) -> RequestRecord:
    return RequestRecord(t, t, "GET", path)


LOGS = {
    "127.0.0.2": [_get(10.0, "/robots.txt"), _get(11.0, "/sitemap.xml"), _get(12.0, "/"), _get(13.5, "/p1.html")],
    "127.0.0.3": [_get(10.1, "/robots.txt"), _get(11.2, "/"), _get(12.2, "/p1.html"), _get(13.2, "/p1.html")],
}


def test_pages_leave_out_robots_and_the_sitemap_and_count_repeats_and_misses() -> None:
    log = read_log(LOGS, ["/", "/p1.html", "/p2.html"], delay_s=1.0)
    assert (log.pages, log.requests, log.repeated, log.missing) == (5, 8, 1, 2)


def test_the_window_runs_from_the_first_page_to_a_delay_after_the_last() -> None:
    log = read_log(LOGS, ["/", "/p1.html"], delay_s=1.0)
    assert log.window_s == 13.5 - 11.2 + 1.0


def test_gaps_are_per_host_and_count_every_request() -> None:
    log = read_log(LOGS, ["/", "/p1.html"], delay_s=1.0)
    assert round(log.min_gap_s, 6) == 1.0  # 127.0.0.2's robots.txt to its sitemap probe
    assert log.polite(1.0) and not log.polite(1.1)


def test_requests_before_since_belong_to_an_earlier_crawl() -> None:
    log = read_log(LOGS, ["/", "/p1.html"], delay_s=1.0, since=12.1)
    assert (log.pages, log.requests) == (3, 3)
