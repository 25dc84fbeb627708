"""Frontier metrics: robots exclusions, politeness waits, and the frontier gauges.

The counts come from a decorator around the FrontierState port rather than from
hooks inside Frontier or its adapters: the frontier's decisions all end in a state
call (exclude for robots, lease), so watching those calls sees every one of them,
on any backend, without touching the policy code.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from services.common.domain.frontier_types import FrontierCounts, Lease, NewUrl
from services.common.ports import FrontierState
from services.common.runtime.metrics import (
    FRONTIER_BLOCKED_HOSTS,
    FRONTIER_DUE,
    FRONTIER_HOSTS,
    FRONTIER_URLS,
    POLITENESS_WAIT,
    ROBOTS_BLOCKED,
)

ROBOTS_NOTE = "robots"
URL_STATES = ("queued", "leased", "done", "failed", "excluded")
# Leases whose wait is measured per lease_due call: one url_info each, so a cap keeps
# a dispatch of 64 jobs from costing 64 more round trips to Redis. Evenly spread over
# the batch, the sample keeps the histogram's shape.
WAIT_SAMPLE = 8
# URLs already counted as robots-excluded: a disallowed link on every page of a site
# is offered again with every page, and must count once. Bounded; a URL forgotten
# when the set is cleared may count twice, which a rate graph does not notice.
_SEEN_LIMIT = 100_000


class MeteredFrontierState:
    """A FrontierState that counts what passes through it; every call is delegated."""

    def __init__(self, inner: FrontierState) -> None:
        self._inner = inner
        self._robots_seen: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def add_urls(self, urls: Sequence[NewUrl], now: float, host_budget: int) -> list[NewUrl]:
        added = self._inner.add_urls(urls, now, host_budget)
        self._count_robots(u.url for u in urls if u.state == "excluded" and u.note == ROBOTS_NOTE)
        return added

    def drop_queued(self, urls: Sequence[str], state: str, note: str, *args: Any, **kwargs: Any) -> int:
        dropped = self._inner.drop_queued(urls, state, note, *args, **kwargs)
        if state == "excluded" and note == ROBOTS_NOTE and dropped:
            ROBOTS_BLOCKED.inc(dropped)
            self._remember(urls)
        return dropped

    def unlease(self, url: str, now: float, state: str, note: str) -> None:
        self._inner.unlease(url, now, state, note)
        if state == "excluded" and note == ROBOTS_NOTE:
            ROBOTS_BLOCKED.inc()
            self._remember([url])

    def lease_due(
        self, now: float, limit: int, parallelism: int, max_in_flight: int, shards: Collection[int] | None = None
    ) -> list[Lease]:
        """Observes ``now - due_at`` for a sample of the leases: the time a due URL
        waited for its host's politeness delay (and for a free slot)."""
        leases = self._inner.lease_due(now, limit, parallelism, max_in_flight, shards)
        step = max(1, len(leases) // WAIT_SAMPLE)
        for lease in leases[::step][:WAIT_SAMPLE]:
            info = self._inner.url_info(lease.url)  # leasing keeps due_at
            if info is not None:
                POLITENESS_WAIT.observe(max(0.0, now - info.due_at))
        return leases

    def _count_robots(self, urls: Iterable[str]) -> None:
        new = [u for u in urls if u not in self._robots_seen]
        if new:
            ROBOTS_BLOCKED.inc(len(new))
            self._remember(new)

    def _remember(self, urls: Iterable[str]) -> None:
        if len(self._robots_seen) > _SEEN_LIMIT:
            self._robots_seen.clear()
        self._robots_seen.update(urls)


def set_frontier_gauges(counts: FrontierCounts) -> None:
    """Copy one ``counts()`` reading into the frontier gauges."""
    for state in URL_STATES:
        FRONTIER_URLS.labels(state=state).set(getattr(counts, state))
    FRONTIER_DUE.set(counts.due)
    FRONTIER_HOSTS.set(counts.hosts)
    FRONTIER_BLOCKED_HOSTS.set(counts.blocked_hosts)
