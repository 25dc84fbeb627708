"""Answers to recent searches, kept while the index they came from is unchanged.

Query streams repeat: the same popular questions arrive many times a minute, and
under load the repeats are what overwhelms a search box. Search engines have long
kept a result cache for this (Solr's queryResultCache; web engines' result caches),
and Tansuo keeps one per API worker process.

An entry is valid while the index shows the same view it was computed on: the
backend's ``view_version()`` (tantivy: a new one after every reload of a commit).
A backend that cannot tell cheaply (Elasticsearch) answers None, and entries then
live ``ttl_s`` seconds, about Elasticsearch's own refresh interval, so the cache
adds no more staleness than the index already has.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

Answer = Any  # a search's answer (a dict), or what another cache of this kind keeps


class ResultCache:
    """A bounded LRU map from a search's parameters to its answer."""

    def __init__(self, max_entries: int, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._max = max_entries
        self._ttl = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[object, float, Answer]] = OrderedDict()

    def get(self, key: Hashable, version: object) -> Answer | None:
        """The answer stored for ``key`` on this index view, or None."""
        if self._max <= 0:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            stored_version, stored_at, answer = entry
            fresh = stored_version == version and (version is not None or self._clock() - stored_at < self._ttl)
            if not fresh:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return answer

    def put(self, key: Hashable, version: object, answer: Answer) -> None:
        if self._max <= 0:
            return
        with self._lock:
            self._entries[key] = (version, self._clock(), answer)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
