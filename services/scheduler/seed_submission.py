"""Checking and sending seeds to a running crawl; shared by `tansuo seed` and POST /api/seeds."""

from __future__ import annotations

import time
from collections.abc import Sequence
from urllib.parse import urlsplit

from services.common.domain.address_policy import host_is_private
from services.common.domain.messages import TOPIC_SEEDS, SeedRequest
from services.common.domain.url_canonical import BadUrl, canonicalize
from services.common.errors import BadInput
from services.common.ports import Bus
from services.scheduler.scope import DomainRule

MAX_SEEDS = 1000


class BadSeeds(BadInput):
    """The request names no URL, too many, or something that is not http(s)."""


def seed_request(
    urls: Sequence[str], allow_domains: Sequence[str] = (), source: str = "", allow_private_networks: bool = False
) -> SeedRequest:
    """A checked request: every URL absolute http(s) on a public address (unless private
    networks are allowed, as the crawler would refuse them anyway), every domain well formed."""
    urls = [u.strip() for u in urls if isinstance(u, str) and u.strip()]
    if not urls:
        raise BadSeeds("no seed URL given")
    if len(urls) > MAX_SEEDS:
        raise BadSeeds(f"at most {MAX_SEEDS} seeds per request, got {len(urls)}")
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadSeeds(f"not an http(s) URL: {url!r}")
        try:
            # The host the crawler will fetch: canonical, so "127.0.0.1." is 127.0.0.1 here too.
            host = urlsplit(canonicalize(url)).hostname or ""
        except BadUrl as exc:
            raise BadSeeds(str(exc)) from None
        if not allow_private_networks and host_is_private(host):
            raise BadSeeds(
                f"seed {url} is on a loopback or private network address; "
                "allow private networks (--allow-private-networks, TANSUO_CRAWLER_ALLOW_PRIVATE_NETWORKS) "
                "to crawl local sites"
            )
    for domain in allow_domains:
        try:
            DomainRule.parse(domain)
        except ValueError as exc:
            raise BadSeeds(str(exc)) from None
    return SeedRequest(urls=list(urls), allow_domains=list(allow_domains), submitted_at=time.time(), source=source)


def submit(bus: Bus, request: SeedRequest) -> None:
    """Durable once this returns: the scheduler picks it up whenever it next polls."""
    bus.publish(TOPIC_SEEDS, request.to_bytes(), key="seeds")
    bus.flush()
