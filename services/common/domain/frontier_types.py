"""Domain types of the frontier state: what the scheduler and a FrontierState adapter exchange."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NewUrl:
    url: str  # canonical
    host: str
    depth: int
    state: str = "queued"  # or "excluded", recorded so it is never offered again
    note: str = ""  # why it was excluded
    kind: str = "page"  # or "sitemap"

    def with_note(self, note: str) -> NewUrl:
        return dataclasses.replace(self, note=note)


@dataclass(frozen=True)
class Lease:
    """A URL handed to a crawler; it stays in flight until its outcome comes back."""

    url: str
    host: str
    lease_id: str
    depth: int
    etag: str = ""
    last_modified: str = ""
    kind: str = "page"


@dataclass(frozen=True)
class UrlInfo:
    """Everything the frontier remembers about one URL."""

    url: str
    host: str
    depth: int
    kind: str
    state: str  # queued | leased | done | failed | excluded
    due_at: float  # next fetch (queued) or next recrawl (done, failed)
    fetched_at: float | None
    status: int | None
    content_hash: str | None
    etag: str | None
    last_modified: str | None
    interval_s: float | None
    fail_count: int
    note: str
    # The current lease of a leased URL (None otherwise): each backend makes its own
    # ids, so they take no part in comparing two answers.
    lease_id: str | None = dataclasses.field(default=None, compare=False)


@dataclass(frozen=True)
class HostInfo:
    host: str
    scheme: str
    delay_s: float
    robots_state: str  # unknown | fetching | ready | failed (given up until robots_retry_at)
    robots_txt: str | None
    robots_fetched_at: float | None
    robots_failures: int
    next_allowed_at: float
    inflight: int
    blocked_until: float
    block_reason: str
    fail_streak: int
    admitted: int
    queued: int
    # Set by an operator (console, API, `tansuo host pause`): no fetch job of any kind
    # until resumed. Apart from blocked_until, which the crawl itself sets and clears
    # (Retry-After, backoff), so no fetch outcome can lift an operator's pause.
    paused: bool = False
    # A host whose robots.txt could not be had (robots_state "failed") is asked for it
    # again from this time on, not on every new link to it.
    robots_retry_at: float = 0.0


class _SqlUpdate:
    """Dataclass fields left as None are not changed; the rest become a SET clause."""

    def sql(self) -> tuple[list[str], list[Any]]:
        sets, args = [], []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is not None:
                sets.append(f"{f.name} = ?")
                args.append(value)
        return sets, args


@dataclass(frozen=True)
class UrlUpdate(_SqlUpdate):
    state: str  # done | queued (retry) | failed
    due_at: float | None = None
    fetched_at: float | None = None
    status: int | None = None
    content_hash: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    interval_s: float | None = None
    fail_count: int | None = None
    note: str | None = None


@dataclass(frozen=True)
class HostUpdate(_SqlUpdate):
    delay_s: float | None = None
    robots_state: str | None = None
    robots_txt: str | None = None
    robots_fetched_at: float | None = None
    robots_failures: int | None = None
    next_allowed_at: float | None = None
    blocked_until: float | None = None
    block_reason: str | None = None
    fail_streak: int | None = None
    robots_retry_at: float | None = None


@dataclass(frozen=True)
class FrontierCounts:
    queued: int
    due: int
    leased: int
    done: int
    failed: int
    excluded: int
    hosts: int
    blocked_hosts: int
    fetched: int
    errors: int = 0  # the ``errors`` counter: see services/scheduler/frontier.py, counts_as_error

    @property
    def idle(self) -> bool:
        """Nothing left to fetch and nothing in flight: a one-pass crawl is over."""
        return self.queued == 0 and self.leased == 0


# Notes of a fetched URL that say nothing went wrong: a redirect, a 304.
_ROUTINE_NOTES = frozenset({"", "redirect", "not_modified"})


def needs_attention(state: str, status: int | None, note: str) -> bool:
    """Whether a URL belongs in the crawl report's list of what went wrong: a fetch
    that failed, answered 4xx/5xx or nothing, or gave a page that is not indexed (not
    HTML, noindex). Every FrontierState adapter selects by this one rule."""
    if state == "failed":
        return True
    if state != "done":
        return False
    return not status or status >= 400 or note not in _ROUTINE_NOTES
