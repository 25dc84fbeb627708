"""One spelling per host, for every check that looks at a host: canonical URLs
(url_canonical.py), the private-network rule (address_policy.py) that both the seed
check (POST /api/seeds, `tansuo seed`) and the crawler's guard apply.

If the seed check read "127.0.0.1." or "0x7f.1" as a host name while the crawler read
it as 127.0.0.1, the API would accept a seed the crawler refuses (or worse, the other
way round). So both first bring the host to the form a browser's URL parser (WHATWG
URL, "host parsing") gives it: percent-decoded, lower-case, without IPv6 brackets or
trailing dots, and every way of writing an IPv4 address (127.1, 0x7f.0.0.1,
2130706433, 0177.0.0.1) as its dotted quad.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import unquote


def canonical_host(host: str) -> str:
    """The canonical spelling of ``host`` (idempotent)."""
    # Decoded until nothing is left to decode: once, as a browser does, would leave
    # %00 of %2500 to become another host when the result is read again.
    while (decoded := unquote(host)) != host:
        host = decoded
    host = _trimmed(host.lower())
    while host.startswith("[") and host.endswith("]"):
        host = _trimmed(host[1:-1])
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host).compressed
        except ValueError:
            return host
    ipv4 = ipv4_number(host)
    return str(ipaddress.IPv4Address(ipv4)) if ipv4 is not None else host


def _trimmed(host: str) -> str:
    """Without the spaces around it and its trailing dots, however they alternate."""
    while (trimmed := host.strip().rstrip(".")) != host:
        host = trimmed
    return host


def ipv4_number(host: str) -> int | None:
    """The IPv4 address a host spells, by the WHATWG rules (one to four parts, each
    decimal, 0x-hex or 0-octal, the last filling the remaining bytes); None when it
    spells none, including numbers too large for an address."""
    parts = host.split(".")
    if not parts or len(parts) > 4:
        return None
    numbers = []
    for part in parts:
        number = _number(part)
        if number is None:
            return None
        numbers.append(number)
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for i, n in enumerate(leading):
        value += n << (8 * (3 - i))
    return value


def _number(part: str) -> int | None:
    if part.startswith("0x"):
        digits, base = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    if digits == "":
        return 0 if base == 16 else None  # "0x" alone is 0, as browsers read it
    if not digits.isascii() or not all(c in "0123456789abcdef"[:base] for c in digits):
        return None
    return int(digits, base)
