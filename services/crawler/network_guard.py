"""Keep the crawler off private networks: a crawler inside a cluster that fetches any
URL it is handed is an open proxy to the cluster's own services (SSRF).

Two layers, both Scrapy components chosen in ``scrapy_settings``:

- ``PublicOnlyResolver`` (TWISTED_DNS_RESOLVER) refuses to hand out a private address,
  so no connection to one is ever made, whatever asked for it.
- ``PrivateAddressMiddleware`` checks IP literals and resolves host names *before* the
  download, so the job is reported as "private_address" rather than as a DNS failure.

Which addresses are public is services/common/domain/address_policy.py, shared with the CLI
and the API, which refuse private seeds before a crawl starts.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import CannotResolveHostError, IgnoreRequest, NotConfigured
from scrapy.resolver import CachingThreadedResolver
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.error import DNSLookupError

from services.common.domain.address_policy import host_is_private, is_public_address
from services.common.domain.host_names import canonical_host

__all__ = ["PrivateAddressError", "PrivateAddressMiddleware", "PrivateAddressRefused", "PublicOnlyResolver",
           "host_is_private", "is_public_address"]

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

class PrivateAddressError(DNSLookupError):
    """A host name resolved to an address the crawler must not connect to."""


class PrivateAddressRefused(IgnoreRequest):
    """The request was dropped before download because its host is not public."""


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
        # The same canonical host as the seed check (host_names.py): a redirect to
        # "http://127.0.0.1./" is 127.0.0.1, not a name to look up.
        host = canonical_host(urlparse_cached(request).hostname or "")
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
