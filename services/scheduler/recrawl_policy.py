"""When to fetch a URL again: adaptive intervals per URL, the classic freshness policy.

Unchanged content (same hash, or a 304) doubles the interval, changed content halves
it, so a page is visited about as often as it changes, within configured bounds.
"""

from __future__ import annotations

from datetime import UTC, datetime

from services.common.config import Settings


def next_interval(cfg: Settings, previous_s: float | None, changed: bool | None) -> float:
    """``changed`` is None for a first fetch (no earlier content to compare with)."""
    if previous_s is None or changed is None:
        interval = cfg.frontier_recrawl_initial_s
    elif changed:
        interval = previous_s / cfg.frontier_recrawl_factor
    else:
        interval = previous_s * cfg.frontier_recrawl_factor
    return min(max(interval, cfg.frontier_recrawl_min_s), cfg.frontier_recrawl_max_s)


def failure_interval(cfg: Settings, previous_s: float | None, was_failed: bool) -> float:
    """A URL that failed its quick retries comes back after 1 h, then backs off."""
    if not was_failed or previous_s is None:
        return min(cfg.frontier_failure_recrawl_s, cfg.frontier_recrawl_max_s)
    return min(previous_s * cfg.frontier_recrawl_factor, cfg.frontier_recrawl_max_s)


def given_up_interval(cfg: Settings, passes: int) -> float:
    """When the URLs of a host given up over its robots.txt come back, after ``passes``
    earlier passes that found it still down: ``failure_interval``'s backoff in closed
    form, since the host, not each URL, remembers how often it failed."""
    interval = cfg.frontier_failure_recrawl_s * cfg.frontier_recrawl_factor ** min(passes, 64)
    return min(interval, max(cfg.frontier_recrawl_max_s, cfg.frontier_failure_recrawl_s))


def parse_lastmod(value: str) -> float | None:
    """A sitemap <lastmod> (W3C datetime: a date, or a date and time) as epoch seconds."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()
