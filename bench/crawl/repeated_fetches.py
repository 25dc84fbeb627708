"""Which pages a crawl fetched more than once, read from the site server's request log,
and whether each repeat is the one a killed crawler is allowed to cause.

What counts as "twice": a GET of the same path (query included) arriving at the
site a second time during one crawl. robots.txt and sitemaps are left out: the
scheduler asks for them on its own schedule, not per page.

The one repeat the design allows: a crawler SIGKILLed with URLs leased to it never
reports them, so once the lease times out the scheduler hands them out again (at
least once, never lost). Such a URL was leased at the moment of the kill; the
surviving crawler's leases of that moment finish normally and are not fetched again.
So every repeat outside the set of URLs leased at the kill is a duplicate the design
does not allow, and is reported as such.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from services.cli.static_site_server import RequestRecord
from services.common.adapters.redis.frontier import RedisFrontierState

_NOT_PAGES = ("/robots.txt", "/sitemap.xml")


@dataclass(frozen=True)
class Repeats:
    requests: int  # page GETs in the window
    pages: int  # distinct paths among them
    after_lease: tuple[str, ...]  # fetched again, and leased when the crawler was killed
    unexplained: tuple[str, ...]  # fetched again for no reason the design allows


def _key(path_or_url: str) -> str:
    parts = urlsplit(path_or_url)
    return unquote(parts.path) + (f"?{parts.query}" if parts.query else "")


def page_fetches(requests: Iterable[RequestRecord], since_wall: float = 0.0) -> Counter[str]:
    """GETs per path from ``since_wall`` on, robots.txt and sitemaps aside."""
    return Counter(
        _key(r.path) for r in requests
        if r.method == "GET" and r.wall_time >= since_wall and _key(r.path) not in _NOT_PAGES
    )  # fmt: skip


def leased_now(frontier: RedisFrontierState, urls: Iterable[str]) -> set[str]:
    """The paths of ``urls`` that the frontier holds as leased (in flight) right now."""
    return {_key(u) for u in urls if (state := frontier.url_state(u)) is not None and state[0] == "leased"}


def classify(fetches: Counter[str], leased_at_kill: set[str] | None = None) -> Repeats:
    """Split the paths fetched more than once into allowed (leased at the kill) and not."""
    again = sorted(path for path, n in fetches.items() if n > 1)
    allowed = leased_at_kill or set()
    return Repeats(
        requests=sum(fetches.values()),
        pages=len(fetches),
        after_lease=tuple(p for p in again if p in allowed),
        unexplained=tuple(p for p in again if p not in allowed),
    )


def repeated(paths: Sequence[str], fetches: Counter[str]) -> str:
    """``path ×n`` for the first few of ``paths``, for a report."""
    return ", ".join(f"`{p}` ×{fetches[p]}" for p in paths[:5]) + (" …" if len(paths) > 5 else "")
