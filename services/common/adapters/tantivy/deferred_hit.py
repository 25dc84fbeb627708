"""A search hit whose shown fields are read from the document store on first use.

Folding and the per-site limit look at every hit of the result window, but only by
score, site, copy key and signature (``fold_keys``); the URL, title, headings, body,
content hash and PageRank are wanted only for the ten or so hits a page shows and
their folded copies. A ``DeferredHit`` holds the keys and reads the rest on first
access, as Django's deferred model fields do, so a caller handles it as any
``SearchHit``. Its signature is read too, unless the search knew it is not needed
(no other hit shares a band with it) and gave ``()``.
"""

from __future__ import annotations

from collections.abc import Callable

from services.common.domain.search_types import SearchHit

_DEFERRED = ("url", "title", "headings", "body", "content_hash", "pagerank", "fetched_at", "modified_at",
             "filetype", "doc_size", "doc_pages", "anchors")  # fmt: skip


class DeferredHit(SearchHit):
    # Set by __init__ straight into the instance's dict: SearchHit is frozen.
    _load: Callable[[], SearchHit]
    _stored: SearchHit | None
    _site: str | None
    _minhash: tuple[int, ...] | None

    def __init__(
        self,
        load: Callable[[], SearchHit],
        score: float,
        site: str | None,
        copy_key: str,
        minhash: tuple[int, ...] | None,
    ) -> None:
        # One update, not a frozen dataclass's object.__setattr__ a field: a search makes thirty.
        vars(self).update(_load=load, _stored=None, _site=site, score=score, copy_key=copy_key, _minhash=minhash)

    def stored(self) -> SearchHit:
        """The hit as stored, read once. No lock: the hits of an answer serve one
        request, and two threads reading one document would be harmless anyway (the
        reader's StoredHitCache lets them)."""
        stored = self._stored
        if stored is None:
            stored = self._load()
            vars(self)["_stored"] = stored
        return stored

    @property
    def site(self) -> str:
        return self._site if self._site is not None else self.stored().site

    @property
    def minhash(self) -> tuple[int, ...]:
        return self._minhash if self._minhash is not None else self.stored().minhash


def _deferred(name: str) -> property:
    return property(lambda self: getattr(self.stored(), name), doc=f"``{name}``, read on first use")


for _name in _DEFERRED:
    setattr(DeferredHit, _name, _deferred(_name))
