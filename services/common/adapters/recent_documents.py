"""The bigram fields of documents this writer wrote lately, for rewriting them cheaply.

tantivy cannot change one field of a document: the ranker's link fields (PageRank,
anchor text) are written by reading the stored document and adding it again whole.
The bigram fields are not stored (three times the text), so each rewrite computed
them again from the text: at the end of a crawl, when the ranker's last run rewrote
every page, that was about a sixth of the index process's CPU. The documents it
rewrites are mostly the ones just indexed, whose bigrams the indexer has already
built, so the writer keeps them, up to a number of characters, and uses them only
for a document whose title, headings and body are the ones they were built from.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from services.common.model import IndexDoc


def _text_key(doc: IndexDoc) -> int:
    return hash((doc.title, doc.headings, doc.body))


class GramCache:
    def __init__(self, max_chars: int) -> None:
        self._max = max_chars
        self._chars = 0
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[int, str, str]] = OrderedDict()

    def keep(self, doc: IndexDoc) -> None:
        """Remember the bigram fields of a document as written (nothing without them)."""
        if self._max <= 0 or not (doc.title_grams or doc.body_grams):
            return
        size = len(doc.title_grams) + len(doc.body_grams)
        with self._lock:
            self._drop(doc.url)
            if size > self._max:
                return
            self._entries[doc.url] = (_text_key(doc), doc.title_grams, doc.body_grams)
            self._chars += size
            while self._chars > self._max:
                _, (_, title, body) = self._entries.popitem(last=False)
                self._chars -= len(title) + len(body)

    def grams_of(self, doc: IndexDoc) -> tuple[str, str] | None:
        """The kept (title, body) bigram fields of this document, if built from its text."""
        with self._lock:
            entry = self._entries.get(doc.url)
        if entry is None or entry[0] != _text_key(doc):
            return None
        return entry[1], entry[2]

    def forget(self, url: str) -> None:
        with self._lock:
            self._drop(url)

    def _drop(self, url: str) -> None:
        old = self._entries.pop(url, None)
        if old is not None:
            self._chars -= len(old[1]) + len(old[2])

    @property
    def chars(self) -> int:
        return self._chars
