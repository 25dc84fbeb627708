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
    """The request names no URL, too many, or something that is not http(s). ``code``
    says which (empty, too_many, spaces, not_http, bad_domain), ``value`` what was
    refused: the console words it in Chinese, the API and the CLI give the message."""

    def __init__(self, message: str, code: str = "", value: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.value = value


class PrivateSeed(BadSeeds):
    """A seed on a loopback or private address while this process refuses them: the
    request is well formed, the server's settings say no (the API answers 403)."""


def seed_request(
    urls: Sequence[str], allow_domains: Sequence[str] = (), source: str = "", allow_private_networks: bool = False
) -> SeedRequest:
    """A checked request: every URL absolute http(s) on a public address (unless private
    networks are allowed, as the crawler would refuse them anyway), every domain well formed."""
    if not urls:
        raise BadSeeds("no seed URL given", "empty")
    if len(urls) > MAX_SEEDS:
        raise BadSeeds(f"at most {MAX_SEEDS} seeds per request, got {len(urls)}", "too_many", str(MAX_SEEDS))
    for url in urls:
        if not isinstance(url, str) or not url:
            raise BadSeeds(f"a seed URL must be a non-empty string, not {url!r}", "empty")
        if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
            # A space in a host is never valid, and in a path it must be written %20:
            # a URL typed with one is a typo more often than not.
            raise BadSeeds(f"a URL cannot hold spaces or control characters: {url!r} (write a space as %20)",
                           "spaces", url)  # fmt: skip
        try:
            parts = urlsplit(url)
            scheme, hostname = parts.scheme, parts.hostname
        except ValueError:  # "http://[" and other broken netlocs
            scheme, hostname = "", None
        if scheme not in ("http", "https") or not hostname:
            raise BadSeeds(f"not an http(s) URL: {url!r}", "not_http", url)
        try:
            # The host the crawler will fetch: canonical, so "127.0.0.1." is 127.0.0.1 here too.
            host = urlsplit(canonicalize(url)).hostname or ""
        except BadUrl as exc:
            raise BadSeeds(str(exc), "not_http", url) from None
        if not allow_private_networks and host_is_private(host):
            raise PrivateSeed(
                f"seed {url} is on a loopback or private network address; "
                "allow private networks (--allow-private-networks, TANSUO_CRAWLER_ALLOW_PRIVATE_NETWORKS) "
                "to crawl local sites",
                "private", url,
            )  # fmt: skip
    for domain in allow_domains:
        try:
            DomainRule.parse(domain)
        except ValueError as exc:
            raise BadSeeds(str(exc), "bad_domain", domain) from None
    return SeedRequest(urls=list(urls), allow_domains=list(allow_domains), submitted_at=time.time(), source=source)


def submit(bus: Bus, request: SeedRequest) -> None:
    """Durable once this returns: the scheduler picks it up whenever it next polls."""
    bus.publish(TOPIC_SEEDS, request.to_bytes(), key="seeds")
    bus.flush()
