"""Keep the crawler off private networks: a crawler inside a cluster that fetches any
URL it is handed is an open proxy to the cluster's own services (SSRF).

Two layers, both Scrapy components chosen in ``scrapy_settings``:

- ``PublicOnlyResolver`` (TWISTED_DNS_RESOLVER) refuses to hand out a private address,
  so no connection to one is ever made, whatever asked for it.
- ``PrivateAddressMiddleware`` checks IP literals and resolves host names *before* the
  download, so the job is reported as "private_address" rather than as a DNS failure.

The plain functions are for the CLI, to warn before a crawl starts.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import CannotResolveHostError, IgnoreRequest, NotConfigured
from scrapy.resolver import CachingThreadedResolver
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.error import DNSLookupError

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Carrier-grade NAT (RFC 6598) is not "private" to the ipaddress module, but it is
# someone's internal network all the same.
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


class PrivateAddressError(DNSLookupError):
    """A host name resolved to an address the crawler must not connect to."""


class PrivateAddressRefused(IgnoreRequest):
    """The request was dropped before download because its host is not public."""


def is_public_address(ip: str | IpAddress) -> bool:
    """True for a globally routable unicast address; False for anything else, including garbage."""
    try:
        address = ipaddress.ip_address(ip) if isinstance(ip, str) else ip
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:10.0.0.1 reaches 10.0.0.1
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return False
    return address.is_global and not (
        address.is_private or address.is_loopback or address.is_link_local
        or address.is_multicast or address.is_reserved or address.is_unspecified
    )


def host_is_private(host: str) -> bool:
    """True if ``host`` is, or resolves to, any non-public address. Blocks on DNS;
    a name that does not resolve is not private (the fetch will fail with "dns")."""
    host = host.strip("[]")
    try:
        return not is_public_address(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    return any(not is_public_address(str(info[4][0]).split("%")[0]) for info in infos)


class PublicOnlyResolver(CachingThreadedResolver):
    """Scrapy's caching resolver, but a private answer is a lookup failure."""

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Any:
        return super().getHostByName(name, timeout).addCallback(_refuse_private, name)


def _refuse_private(address: str, name: str) -> str:
    if not is_public_address(address):
        raise PrivateAddressError(f"{name} resolves to non-public address {address}")
    return address


class PrivateAddressMiddleware:
    """Downloader middleware: refuse a request whose host is not public, before download."""

    def __init__(self, crawler: Crawler) -> None:
        if crawler.settings.getbool("TANSUO_ALLOW_PRIVATE_NETWORKS"):
            raise NotConfigured("private networks allowed")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PrivateAddressMiddleware:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        host = (urlparse_cached(request).hostname or "").strip("[]")
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            await self._check_name(host)
            return
        if not is_public_address(literal):
            raise PrivateAddressRefused(f"{host} is not a public address")

    @staticmethod
    async def _check_name(host: str) -> None:
        from twisted.internet import reactor

        try:
            # Goes through the installed PublicOnlyResolver and warms its cache, so
            # the connection that follows uses the very address checked here.
            # (ignore: zope interface methods have no self, which confuses mypy)
            await maybe_deferred_to_future(reactor.resolve(host))  # type: ignore[arg-type]
        except PrivateAddressError as exc:
            raise PrivateAddressRefused(str(exc)) from exc
        except DNSLookupError as exc:
            raise CannotResolveHostError(str(exc)) from exc
