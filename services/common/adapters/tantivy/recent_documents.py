"""The documents this writer committed lately, for rewriting them cheaply.

tantivy cannot change one field of a document: the ranker's link fields (PageRank,
anchor text) are written by reading the stored document and adding it again whole.
Reading it is a search for its URL and a decompressed stored document; its bigram
fields are not stored (three times the text) and had to be built again from the
text. At the end of a crawl the ranker's last run rewrites every page: the analysis
was a sixth of the index process's CPU, and the reads another third of a second on
the LibreOffice help site. The documents it rewrites are mostly the ones just
indexed, so the writer keeps them as committed, up to a number of characters.

Only committed documents are kept (the writer hands them over at commit), so a
rolled-back write is never taken for the index's content. The bigram fields are also
offered for a document read back from the index (``grams_of``), only when its title,
headings, body and own text are the ones they were built from.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict

from services.common.domain.documents import IndexDoc


def _text_key(doc: IndexDoc) -> int:
    return hash((doc.title, doc.headings, doc.body, doc.own_text))


_TEXT_FIELDS = tuple(f.name for f in dataclasses.fields(IndexDoc) if f.type in ("str", str))


def _chars(doc: IndexDoc) -> int:
    return sum(len(getattr(doc, name)) for name in _TEXT_FIELDS)


class RecentDocuments:
    def __init__(self, max_chars: int) -> None:
        self._max = max_chars
        self._chars = 0
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[int, int, IndexDoc]] = OrderedDict()  # url: (key, size, doc)

    def keep(self, doc: IndexDoc) -> None:
        """Remember a committed document (not one without bigram fields: those are
        built again anyway, and such a document is rare)."""
        if self._max <= 0 or not (doc.title_grams or doc.body_grams):
            self.forget(doc.url)
            return
        size = _chars(doc)
        with self._lock:
            self._drop(doc.url)
            if size > self._max:
                return
            self._entries[doc.url] = (_text_key(doc), size, doc)
            self._chars += size
            while self._chars > self._max:
                _, (_, dropped, _) = self._entries.popitem(last=False)
                self._chars -= dropped

    def latest(self, url: str) -> IndexDoc | None:
        """The document last committed under ``url``, if it is still kept."""
        with self._lock:
            entry = self._entries.get(url)
        return entry[2] if entry is not None else None

    def grams_of(self, doc: IndexDoc) -> tuple[str, str, str] | None:
        """The kept (title, body, link) bigram fields of this document, if built from its text."""
        with self._lock:
            entry = self._entries.get(doc.url)
        if entry is None or entry[0] != _text_key(doc):
            return None
        return entry[2].title_grams, entry[2].body_grams, entry[2].link_grams

    def forget(self, url: str) -> None:
        with self._lock:
            self._drop(url)

    def _drop(self, url: str) -> None:
        old = self._entries.pop(url, None)
        if old is not None:
            self._chars -= old[1]

    @property
    def chars(self) -> int:
        return self._chars
