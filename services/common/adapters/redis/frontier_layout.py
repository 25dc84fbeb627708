"""Names and encodings of the Redis frontier's keys: which shard a host is in, the hash
tag of each shard, the keys of a host, and the packed URL record.

Kept apart from the adapter so that the layout, which the Lua scripts share, reads in
one place (frontier_redis.py describes why it is this way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from services.common.adapters.redis.frontier_scripts import (
    HOST_KEYS,
    RECORD_FIELDS,
    SHARD_KEYS,
    STATE_LETTERS,
)
from services.common.domain.frontier_types import UrlInfo, UrlUpdate
from services.common.domain.host_partition import host_partition
from services.common.domain.url_canonical import host_of

LAYOUT_VERSION = "2"
_SEP = "\x1f"
_STATES = {letter: name for name, letter in STATE_LETTERS.items()}
_FIELD_AT = {name: n for n, name in enumerate(RECORD_FIELDS, start=1)}


def shard_tag(shard: int, shards: int) -> str:
    """The hash tag of a shard: ``s<n>``, or ``s<n>-<k>`` for the first k that puts it in
    the n-th of ``shards`` equal ranges of the 16,384 slots. Redis Cluster gives each
    primary a contiguous range of slots, so shards spread over the primaries as evenly
    as their number allows (4 each for 12 shards on 3 primaries), where bare ``s<n>``
    tags would fall wherever CRC16 puts them."""
    low = shard * REDIS_CLUSTER_HASH_SLOTS // shards
    high = (shard + 1) * REDIS_CLUSTER_HASH_SLOTS // shards
    k = 0
    while True:
        tag = f"s{shard}" if k == 0 else f"s{shard}-{k}"
        if low <= key_slot(tag.encode()) < high:
            return tag
        k += 1


@dataclass(frozen=True)
class Shard:
    number: int
    tag: str
    base: str  # "<prefix>{<tag>}:", every key of the shard starts with it

    @property
    def keys(self) -> list[str]:
        return [f"{self.base}{name}" for name in SHARD_KEYS]

    def host_keys(self, host: str) -> list[str]:
        return [f"{self.base}{kind}:{host}" for kind in HOST_KEYS]

    def key(self, name: str) -> str:
        return f"{self.base}{name}"


class Layout:
    """The shards of one frontier (their number is fixed when the frontier is created)."""

    def __init__(self, prefix: str, shards: int) -> None:
        self.prefix = prefix
        self.count = shards
        self.shards = [Shard(n, tag, f"{prefix}{{{tag}}}:") for n, tag in ((n, shard_tag(n, shards)) for n in range(shards))]
        self.meta = f"{prefix}{{m}}:"

    def of(self, host: str) -> Shard:
        return self.shards[host_partition(host, self.count)]


def url_rest(url: str, host: str) -> str:
    """A URL as its host's record stores it: what follows ``http://host``, ``+`` and what
    follows ``https://host``, or ``!`` and the whole URL (one not of that host's form)."""
    for scheme, mark in (("http://", ""), ("https://", "+")):
        head = scheme + host
        if url.startswith(head) and url[len(head) : len(head) + 1] in ("", "/", "?", "#"):
            return mark + url[len(head) :]
    return "!" + url


def full_url(host: str, rest: str) -> str:
    if rest.startswith("+"):
        return f"https://{host}{rest[1:]}"
    if rest.startswith("!"):
        return rest[1:]
    return f"http://{host}{rest}"


def split_url(url: str) -> tuple[str, str]:
    """(host, rest) of a URL: its host is host_of(url), the frontier's politeness key."""
    host = host_of(url)
    return host, url_rest(url, host)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back as the same double
    # The separator cannot be in an HTTP header value (no control characters there),
    # nor in our notes; a server that sends one anyway loses it.
    return str(value).replace(_SEP, "")


def update_pairs(update: UrlUpdate) -> list[str]:
    """(field position, value) pairs of an outcome's fields that are not None."""
    pairs: list[str] = []
    for f in dataclasses.fields(update):
        value = getattr(update, f.name)
        if value is None:
            continue
        if f.name == "state":
            value = STATE_LETTERS[value]
        elif f.name == "fail_count" and value == 0:
            value = ""  # an empty count is 0: a shorter record
        pairs += [str(_FIELD_AT[f.name]), _text(value)]
    return pairs


def record_fields(record: str) -> list[str]:
    parts = record.split(_SEP)
    return parts + [""] * (len(RECORD_FIELDS) - len(parts))


def state_of(fields: Sequence[str]) -> str:
    return _STATES[fields[0]]


def url_info(url: str, host: str, record: str) -> UrlInfo:
    return info_of_fields(url, host, record_fields(record))


def info_of_fields(url: str, host: str, f: Sequence[str]) -> UrlInfo:
    def number(text: str, kind: type) -> Any:
        return kind(float(text)) if kind is int and text else (kind(text) if text else None)

    return UrlInfo(
        url=url,
        host=host,
        depth=int(f[1]),
        kind=f[2] or "page",
        state=state_of(f),
        due_at=float(f[3]),
        fetched_at=number(f[7], float),
        status=number(f[8], int),
        content_hash=f[9] or None,
        etag=f[10] or None,
        last_modified=f[11] or None,
        interval_s=number(f[12], float),
        fail_count=int(f[4] or 0),
        note=f[5],
        lease_id=f[6] or None,
    )
