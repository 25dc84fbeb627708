"""Per-client rate limiting of the search endpoints: a token bucket per address.

One client (a script in a loop) must not take every worker thread from everyone
else. Each address gets a bucket of ``burst`` tokens that refills at ``rate_per_s``;
a search or suggestion takes one, and an empty bucket answers 429 with the seconds
until the next token in ``Retry-After``.

The buckets live in each worker process (gunicorn forks N of them and the kernel
spreads connections over them), so a client gets at most N x the configured rate from
one server and pods x N x rate from a deployment; the docs say so. Sharing buckets
(Redis, shared memory) would cost a round trip or a lock on every search for a
limit that is only meant to stop floods, not to meter.

No address is exempt unless ``TANSUO_API_RATE_LIMIT_EXEMPT`` names it, loopback
included: a reverse proxy on the same host would make every user behind it exempt.
Behind a proxy the bucket is the client's, not the proxy's, once the proxy is named
in ``TANSUO_API_TRUSTED_PROXIES`` (services/api/client_address.py).
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass
class _Bucket:
    tokens: float
    updated: float


class TokenBuckets:
    """Thread-safe token buckets keyed by client address.

    At most ``max_clients`` buckets are kept; the least recently used goes first. A
    forgotten bucket would have refilled to full anyway unless its client was active
    moments ago, so the cap bounds memory without letting a flooder reset itself
    (only a flood of *other* addresses could evict it, and those are limited too).
    """

    def __init__(
        self,
        rate_per_s: float,
        burst: int,
        max_clients: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self._max_clients = max_clients
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, client: str) -> float:
        """Take a token for ``client``: 0.0 when granted, else the seconds until one is."""
        now = self._clock()
        with self._lock:
            bucket = self._buckets.pop(client, None)
            if bucket is None:
                bucket = _Bucket(float(self.burst), now)
            else:
                bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.updated) * self.rate_per_s)
                bucket.updated = now
            self._buckets[client] = bucket  # most recently used at the end
            if len(self._buckets) > self._max_clients:
                self._buckets.popitem(last=False)
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / self.rate_per_s


def retry_after_header(wait_s: float) -> str:
    """Whole seconds (HTTP's Retry-After has no fractions), at least 1: a client that
    retries at once would only be refused again."""
    return str(max(1, math.ceil(wait_s)))


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """Addresses and CIDR ranges; a bad one fails at start-up, not on a request."""
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry.strip())


def is_exempt(address: str, exempt: tuple[Network, ...]) -> bool:
    """Whether ``address`` falls in one of the exempt ranges; an unparsable address
    (a Unix socket, a test client) is not exempt."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is loopback too
    return any(ip.version == net.version and ip in net for net in exempt)
