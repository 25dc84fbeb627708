"""Which network addresses a crawl may reach: the public internet only, by default.

A crawler inside a cluster that fetches any URL it is handed is an open proxy to the
cluster's own services (SSRF). The same rule serves the crawler's guard
(services/crawler/network_guard.py), `tansuo crawl` and POST /api/seeds, so a seed
refused by one is refused by all.

An IPv6 address can carry an IPv4 address inside it, and a network that routes it
delivers to that IPv4 address: IPv4-mapped (``::ffff:127.0.0.1``), IPv4-compatible
(``::127.0.0.1``), SIIT-translated (``::ffff:0:127.0.0.1``), NAT64 (``64:ff9b::/96``),
6to4 (``2002::/16``) and Teredo (``2001::/32``). Such an address is public only if
every IPv4 address inside it is.
"""

from __future__ import annotations

import ipaddress
import socket

from services.common.domain.host_names import canonical_host

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Carrier-grade NAT (RFC 6598) is not "private" to the ipaddress module, but it is
# someone's internal network all the same.
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
# Prefixes whose last 32 bits are an IPv4 address the packet is delivered to.
_LAST_32_BITS = (
    ipaddress.ip_network("::/96"),  # IPv4-compatible (deprecated)
    ipaddress.ip_network("::ffff:0:0:0/96"),  # SIIT IPv4-translated
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64 well-known prefix
)
# Local-use NAT64 (RFC 8215): never globally routable, whatever it embeds.
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address delivers to, if it wraps any."""
    found = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if any(address in net for net in _LAST_32_BITS) and int(address) > 1:  # not :: or ::1
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def is_public_address(ip: str | IpAddress) -> bool:
    """True for a globally routable unicast address; False for anything else, including garbage."""
    try:
        address = ipaddress.ip_address(ip) if isinstance(ip, str) else ip
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        if address in _LOCAL_NAT64:
            return False
        inner = embedded_ipv4(address)
        if inner:
            return all(_is_public_unicast(v4) for v4 in inner)
    return _is_public_unicast(address)


def _is_public_unicast(address: IpAddress) -> bool:
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return False
    return address.is_global and not (
        address.is_private or address.is_loopback or address.is_link_local
        or address.is_multicast or address.is_reserved or address.is_unspecified
    )  # fmt: skip


def host_is_private(host: str) -> bool:
    """True if ``host`` is, or resolves to, any non-public address. Blocks on DNS;
    a name that does not resolve is not private (the fetch will fail with "dns").
    The host is first brought to its canonical form (host_names.py), the one the
    crawler fetches: "127.0.0.1." and "0x7f.1" are 127.0.0.1 here too."""
    host = canonical_host(host)
    try:
        return not is_public_address(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    return any(not is_public_address(str(info[4][0]).split("%")[0]) for info in infos)
