"""Cluster link graph: each page's outlinks in one Redis hash field.

- ``P links:out`` hash: source URL -> JSON list of distinct [target, anchor] pairs. A
  page's links are one value, so ``set_outlinks`` replaces them with one write and a
  reader never sees half of them; ``edges``/``anchors`` walk it with HSCAN in chunks
  instead of one reply the size of the graph.
- ``P links:nodes`` zset, every score 0: the sources in byte order (which is SQLite's
  order for UTF-8 text), read in chunks.

Both are written by one Lua script, so the node and its links appear together, and
the script can say whether anything changed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import redis

from services.common.adapters.redis_connection import DEFAULT_PREFIX, connect, translate_errors

_CHUNK = 5000
# KEYS: out hash, nodes zset; ARGV: source, its links as JSON. Returns 1 if changed.
_SET_OUTLINKS = """
local added = redis.call('ZADD', KEYS[2], 0, ARGV[1])
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  return added
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""


class RedisLinkGraph:
    """Safe for many writers: each ``set_outlinks`` is one transaction."""

    def __init__(self, client: redis.Redis, prefix: str = f"{DEFAULT_PREFIX}:", where: str = "redis") -> None:
        self._r = client
        self._out = f"{prefix}links:out"
        self._nodes = f"{prefix}links:nodes"
        self._where = where
        self._set_outlinks = client.register_script(_SET_OUTLINKS)

    @classmethod
    def from_url(cls, url: str) -> "RedisLinkGraph":
        target = connect(url)
        return cls(target.client, target.prefix, target.where)

    @translate_errors
    def set_outlinks(self, source: str, links: Sequence[tuple[str, str]]) -> bool:
        """Replace ``source``'s outlinks: a replayed batch leaves the graph as it was.
        The pairs are sorted, so equal links are equal values."""
        pairs = sorted({(target, anchor) for target, anchor in links})
        value = json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))
        return bool(self._set_outlinks(keys=[self._out, self._nodes], args=[source, value]))

    def _outlinks(self) -> dict[str, list[list[str]]]:
        # HSCAN may return a field twice while the hash grows; the dict keeps one copy.
        return {source: json.loads(value) for source, value in self._r.hscan_iter(self._out, count=_CHUNK)}

    @translate_errors
    def edges(self) -> list[tuple[str, str]]:
        """Every distinct (source, target)."""
        return [
            (source, target)
            for source, pairs in self._outlinks().items()
            for target in dict.fromkeys(target for target, _ in pairs)
        ]

    @translate_errors
    def nodes(self) -> list[str]:
        # By member rather than by rank, so a node added meanwhile shifts nothing.
        nodes: list[str] = []
        while chunk := self._r.zrangebylex(self._nodes, f"({nodes[-1]}" if nodes else "-", "+", 0, _CHUNK):
            nodes += chunk
        return nodes

    @translate_errors
    def anchors(self) -> dict[str, list[str]]:
        """Non-empty anchor texts per target, one entry per linking (source, text)."""
        result: dict[str, list[str]] = {}
        for pairs in self._outlinks().values():
            for target, anchor in pairs:
                if anchor:
                    result.setdefault(target, []).append(anchor)
        return result

    @translate_errors
    def ping(self) -> None:
        self._r.ping()

    def close(self) -> None:
        self._r.close()
