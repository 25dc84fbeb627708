"""The stored fields of recently shown documents, kept while the index view is unchanged.

A search reads the stored fields of the hits it shows (URL, site, title, snippet text)
from tantivy's document store, and of every hit in its result window on an index made
before the fold keys (``fold_keys``): each read decompresses a block and converts every
stored field to Python (docs/serving.md, 'Where a request's time goes'). Different
queries keep finding the same popular pages, so, like Solr's documentCache, each reader
keeps the last ``max_entries`` documents it read, keyed by their address in the view
they were read from. A commit makes a new view, and entries of older views are never
found again and age out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from services.common.domain.search_types import SearchHit


class StoredHitCache:
    def __init__(self, max_entries: int) -> None:
        self._max = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, SearchHit] = OrderedDict()

    def get(self, key: Hashable, load: Callable[[], SearchHit]) -> SearchHit:
        """The document at ``key`` (its view and address), read with ``load`` if absent."""
        if self._max <= 0:
            return load()
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit
        hit = load()  # outside the lock: a read takes long, and two threads reading one document is harmless
        with self._lock:
            self._entries[key] = hit
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return hit

    def __len__(self) -> int:
        return len(self._entries)
