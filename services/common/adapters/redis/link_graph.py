"""Cluster link graph: pages and their outlinks by id, in Redis hashes.

- ``P{graph}:url-ids`` / ``P{graph}:urls``: URL → id and id → URL; ``P{graph}:text-ids`` /
  ``P{graph}:texts`` the same for anchor texts; ``P{graph}:next`` the next free id of each
  (fields ``url`` and ``text``). Ids start at 0 and have no gaps, so they index arrays.
- ``P{graph}:targets``: source id → its distinct target ids, packed
  (``services.common.domain.link_ids``); every page has a field, linkless ones an empty value.
- ``P{graph}:anchors``: source id → its packed (target id, text id) pairs, only for
  pages with non-empty anchors. PageRank reads ``targets`` alone.

One Lua script per page gives its URLs ids, packs them and replaces its two values, so
a page's links appear together and the script can say whether anything changed. The
script touches every key, so they share the hash tag ``{graph}``: on Redis Cluster the
graph is one slot, on one node (36 bytes a link: 10 million links fit in 350 MB), and
its ids stay gapless without a counter shared between nodes. Keys written before the
tag (``P graph:…``) are renamed when the adapter opens a single Redis.

A graph left by an older version (``P links:out``, source URL → JSON of [target, anchor]
pairs, and the ``P links:nodes`` zset) is converted when the adapter is built: page by
page through the same script, each old field deleted once converted, so a conversion
cut short goes on at the next start.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator, Sequence
from typing import cast

import numpy as np
import redis
from redis.cluster import RedisCluster

from services.common.adapters.link_graph_views import LinkGraphViews
from services.common.adapters.redis.connection import (
    DEFAULT_PREFIX,
    connect,
    ping,
    translate_errors,
)
from services.common.adapters.redis.lua_files import lua_script
from services.common.adapters.redis.slots import load_scripts, run_calls, script_call
from services.common.domain.link_ids import (
    ID,
    AnchorChunk,
    EdgeChunk,
    anchor_chunk,
    distinct_links,
    edge_chunk,
)

_CHUNK = 5000  # pages per HSCAN step, ids per HMGET
_PIPELINE = 500  # pages per round trip in set_outlinks_many
_SET_OUTLINKS = lua_script("link_graph_set_outlinks.lua")


_SCAN_PACKED = lua_script("link_graph_scan_packed.lua")
_GET_PACKED = lua_script("link_graph_get_packed.lua")
_LENGTH = struct.Struct("<I")
_ROLES = ("url-ids", "urls", "text-ids", "texts", "next", "targets", "anchors")  # KEYS of the script, in order


def _kept(sources: np.ndarray, sizes: np.ndarray, blob: bytes, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, bytes]:
    """The pages of a chunk where ``keep`` holds, their values cut out of ``blob``."""
    ends = np.cumsum(sizes).tolist()
    parts = [blob[end - size : end] for end, size, k in zip(ends, sizes.tolist(), keep.tolist(), strict=True) if k]
    return sources[keep], sizes[keep], b"".join(parts)


def _strings(texts: Sequence[str]) -> bytes:
    """Each text as a uint32 length, then its UTF-8 bytes."""
    out = []
    for text in texts:
        data = text.encode()
        out += [_LENGTH.pack(len(data)), data]
    return b"".join(out)


def _numbers(values: Sequence[int]) -> bytes:
    return np.asarray(values, dtype=ID).tobytes()


class RedisLinkGraph(LinkGraphViews):
    """Safe for many writers: each page's write is one script, so one transaction."""

    def __init__(self, client: redis.Redis | RedisCluster, prefix: str = f"{DEFAULT_PREFIX}:", where: str = "redis") -> None:
        self._r = client  # decode_responses=False: the packed values are bytes
        self._where = where
        self._keys = [f"{prefix}{{graph}}:{name}" for name in _ROLES]
        self._legacy_out, self._legacy_nodes = f"{prefix}links:out", f"{prefix}links:nodes"
        self._set_outlinks = client.register_script(_SET_OUTLINKS)
        self._scan_packed = client.register_script(_SCAN_PACKED)
        self._get_packed = client.register_script(_GET_PACKED)
        self._load_scripts()
        if not isinstance(client, RedisCluster):  # no Tansuo wrote a graph to a cluster before the tag
            self._add_hash_tag(prefix)
        self._convert_legacy()

    @translate_errors
    def _load_scripts(self) -> None:
        load_scripts(self._r, [self._set_outlinks])  # the one sent in pipelines

    @classmethod
    def from_url(cls, url: str) -> RedisLinkGraph:
        target = connect(url, decode_responses=False)
        return cls(target.client, target.prefix, target.where)

    @translate_errors
    def set_outlinks(self, source: str, links: Sequence[tuple[str, str]]) -> bool:
        """Replace ``source``'s outlinks: a replayed batch leaves the graph as it was."""
        return self._set_outlinks(keys=self._keys, args=self._args(source, links)) == 1

    @translate_errors
    def set_outlinks_many(self, pages: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> list[bool]:
        """One script per page, as ``set_outlinks``, sent in pipelines: a round trip per
        few hundred pages rather than per page."""
        changed: list[bool] = []
        for start in range(0, len(pages), _PIPELINE):
            calls = [
                (self._keys[0], script_call(self._set_outlinks, self._keys, self._args(source, links)))
                for source, links in pages[start : start + _PIPELINE]
            ]
            changed += [reply == 1 for reply in run_calls(self._r, calls)]
        return changed

    @staticmethod
    def _args(source: str, links: Sequence[tuple[str, str]]) -> list[bytes]:
        targets, anchors = distinct_links(links)
        urls = [source, *(t for t in targets if t != source)]
        texts = sorted({text for _, text in anchors})
        at_url = {u: i for i, u in enumerate(urls, start=1)}
        at_text = {t: i for i, t in enumerate(texts, start=1)}
        pairs = [n for target, text in anchors for n in (at_url[target], at_text[text])]
        return [_strings(urls), _numbers([at_url[t] for t in targets]), _strings(texts), _numbers(pairs)]

    def edge_chunks(self) -> Iterator[EdgeChunk]:
        for sources, sizes, blob in self._pages(self._keys[5]):
            yield edge_chunk(sources, sizes, blob)

    def anchor_chunks(self) -> Iterator[AnchorChunk]:
        for sources, sizes, blob in self._pages(self._keys[6]):
            yield anchor_chunk(sources, sizes, blob)

    def _pages(self, key: str) -> Iterator[tuple[np.ndarray, np.ndarray, bytes]]:
        # HSCAN may return a field twice while the hash grows: each page is kept once.
        seen = np.zeros(0, dtype=bool)
        cursor = b"0"
        while True:
            cursor, header, blob = self._scan(key, cursor)
            pairs = np.frombuffer(header, dtype=ID).reshape(-1, 2)
            sources, sizes = pairs[:, 0], pairs[:, 1].astype(np.int64)
            if len(sources) and int(sources.max()) >= len(seen):
                seen = np.concatenate([seen, np.zeros(2 * int(sources.max()) + 1 - len(seen), dtype=bool)])
            fresh = ~seen[sources]
            seen[sources] = True
            if not fresh.all():
                sources, sizes, blob = _kept(sources, sizes, blob, fresh)
            if len(sources):
                yield sources, sizes, blob
            if cursor == b"0":
                return

    @translate_errors
    def _scan(self, key: str, cursor: bytes) -> tuple[bytes, bytes, bytes]:
        # Translated here, per call: a decorator on a generator would return before
        # the first command ran, and leave redis-py's errors untranslated.
        cursor, header, blob = self._scan_packed(keys=[key], args=[cursor, _CHUNK])
        return cursor, header, blob

    @translate_errors
    def urls(self, ids: Sequence[int]) -> list[str]:
        return self._values(self._keys[1], ids)

    @translate_errors
    def texts(self, ids: Sequence[int]) -> list[str]:
        return self._values(self._keys[3], ids)

    def _values(self, key: str, ids: Sequence[int]) -> list[str]:
        out: list[str] = []
        for start in range(0, len(ids), _CHUNK):
            lengths, blob = self._get_packed(keys=[key], args=[int(i) for i in ids[start : start + _CHUNK]])
            ends = np.cumsum(np.frombuffer(lengths, dtype=ID), dtype=np.int64).tolist()
            out += [blob[begin:end].decode() for begin, end in zip([0, *ends[:-1]], ends, strict=True)]
        return out

    @translate_errors
    def url_ids(self, urls: Sequence[str]) -> list[int | None]:
        out: list[int | None] = []
        for start in range(0, len(urls), _CHUNK):
            out += [None if v is None else int(v) for v in self._r.hmget(self._keys[0], urls[start : start + _CHUNK])]
        return out

    @translate_errors
    def node_count(self) -> int:
        return int(self._r.hlen(self._keys[5]))

    @translate_errors
    def _add_hash_tag(self, prefix: str) -> None:
        """Keys of a graph written before they had the ``{graph}`` tag get it (RENAME
        keeps a key's value and takes no time whatever its size)."""
        for role, key in zip(_ROLES, self._keys, strict=True):
            old = f"{prefix}graph:{role}"
            if self._r.exists(old) and not self._r.exists(key):
                self._r.rename(old, key)

    @translate_errors
    def _convert_legacy(self) -> None:
        if not self._r.exists(self._legacy_out):
            return
        cursor = None
        while cursor != 0:  # deleting fields during an HSCAN is allowed: they are not returned again
            cursor, fields = cast(tuple[int, dict[bytes, bytes]], self._r.hscan(self._legacy_out, cursor or 0, count=_CHUNK))
            if fields:
                self.set_outlinks_many([(s.decode(), [(t, a) for t, a in json.loads(v)]) for s, v in fields.items()])
                self._r.hdel(self._legacy_out, *fields)
        self._r.delete(self._legacy_out, self._legacy_nodes)

    def key_names(self) -> dict[str, str]:
        """The graph's keys by role (``targets``, ``urls``, …), for tools that measure
        or bulk-load it; the layout is the module docstring's."""
        return dict(zip(_ROLES, self._keys, strict=True))

    @translate_errors
    def ping(self) -> None:
        ping(self._r)

    def close(self) -> None:
        self._r.close()
