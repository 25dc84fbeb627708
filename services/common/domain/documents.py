"""Documents: a fetched page as stored, and a page as the search index holds it."""

from __future__ import annotations

import dataclasses
import email.utils
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StoredPage:
    """Raw bytes of one fetch plus the metadata needed to re-parse it later."""

    url: str
    status: int
    headers: dict[str, str]
    fetched_at: float
    body: bytes
    content_hash: str = ""

    def meta(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "status": self.status,
            "headers": self.headers,
            "fetched_at": self.fetched_at,
            "content_hash": self.content_hash,
        }

    @classmethod
    def from_meta(cls, meta: dict[str, Any], body: bytes) -> StoredPage:
        """The inverse of ``meta()``: every page store keeps that dict beside the bytes."""
        return cls(
            url=meta["url"],
            status=int(meta["status"]),
            headers=dict(meta.get("headers", {})),
            fetched_at=float(meta["fetched_at"]),
            body=body,
            content_hash=meta.get("content_hash", ""),
        )


@dataclass(frozen=True)
class IndexDoc:
    """One searchable page. Text fields are stored raw for display and snippets;
    ``*_tokens`` hold the same text already segmented (space-separated, lower-case),
    which is all a backend analyzer must split on."""

    url: str
    site: str
    title: str
    headings: str
    body: str
    content_hash: str
    title_tokens: str
    headings_tokens: str
    body_tokens: str
    subword_tokens: str  # jieba search-mode sub-words of title, headings and body
    title_grams: str = ""  # character bigrams of the title (services/common/analysis/grams.py)
    body_grams: str = ""  # character bigrams of headings and body
    # A page of links: the bigrams of all the text it shows, its link texts too, which
    # only a quoted phrase looks in (a phrase copied from the page); "" for other pages.
    link_grams: str = ""
    fetched_at: float = 0.0
    anchors: str = ""
    anchors_tokens: str = ""
    pagerank: float = 0.0  # PageRank, sums to 1 over the graph
    rank: float = 0.0  # PageRank x N: the scale-free rank feature, 1.0 = average page
    minhash: tuple[int, ...] = ()  # near-duplicate signature of the body; () = too short to judge
    # A page of links (PageEvent.link_page): the text its body's tokens were made from,
    # for an index that rebuilds them (tantivy's bigrams); None: they come from the body.
    own_text: str | None = None
    # The page's date: its Last-Modified header when plausible, else when it was fetched
    # (page_date); 0.0 in documents indexed before it was kept. Sort by date uses it.
    modified_at: float = 0.0
    # The page store's key of the raw page (PageEvent.store_key), for its cached copy;
    # "" in documents indexed before it was kept.
    store_key: str = ""
    # A document (PDF, Office...): its format, the ``filetype:`` operator's value; "" for
    # an HTML page. Its size in bytes and its pages (slides, sheets), for the result.
    filetype: str = ""
    doc_size: int = 0
    doc_pages: int = 0


# The field of IndexDoc.link_grams in both index backends, which quoted phrases look in.
LINK_GRAMS = "link_grams"

# IndexDoc fields that hold display text, and numbers; the rest are plain strings.
DISPLAY_FIELDS = ("title", "headings", "body", "anchors")
_NUMBER_FIELDS = ("fetched_at", "pagerank", "rank", "modified_at", "doc_size", "doc_pages")
_INT_FIELDS = ("doc_size", "doc_pages")


def index_doc_from(
    text: Callable[[str], str], display: Callable[[str], str], number: Callable[[str], float],
    minhash: tuple[int, ...],
) -> IndexDoc:  # fmt: skip
    """Rebuild a stored document through a backend's own field readers, so each index
    adapter only says how it reads a string, a display text and a number."""
    values: dict[str, Any] = {"minhash": minhash}
    for f in dataclasses.fields(IndexDoc):
        if f.name in ("minhash", "own_text"):  # own_text: only the backend that needs it keeps it
            continue
        read = display if f.name in DISPLAY_FIELDS else number if f.name in _NUMBER_FIELDS else text
        values[f.name] = int(read(f.name)) if f.name in _INT_FIELDS else read(f.name)
    return IndexDoc(**values)


def page_date(last_modified: str, fetched_at: float) -> float:
    """A page's date: its Last-Modified header (RFC 9110 HTTP-date), unless missing,
    unreadable, before 1991 or after the fetch (a clock or a generator that stamps
    "now"): then when it was fetched."""
    if last_modified:
        try:
            stamp = email.utils.parsedate_to_datetime(last_modified).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            stamp = 0.0
        if _FIRST_WEB_PAGE <= stamp <= fetched_at + _CLOCK_SKEW_S:
            return min(stamp, fetched_at)
    return fetched_at


_FIRST_WEB_PAGE = 662_688_000.0  # 1991-01-01: no page is older
_CLOCK_SKEW_S = 300.0


def feature_precision(value: float) -> float:
    """``value`` as Elasticsearch keeps a ``rank_feature``: a float32 with only its top
    9 significant bits (Lucene's FeatureField), about 0.4% precision. The ranker
    writes ranks already rounded so, which costs search nothing and lets tantivy,
    which would keep every bit, score exactly as Elasticsearch does."""
    if value <= 0 or not math.isfinite(value):
        return 0.0
    bits = struct.unpack(">I", struct.pack(">f", value))[0]
    return struct.unpack(">f", struct.pack(">I", bits >> 15 << 15))[0]


@dataclass(frozen=True)
class MergeReport:
    """What a force merge did: segments before and after (None where the backend
    does not say), and the documents the index holds."""

    documents: int
    segments_before: int | None
    segments_after: int | None
    new_layout: bool = False  # the copy also brought the index to the current fields


@dataclass(frozen=True)
class LinkFields:
    """What the ranker writes into an indexed page: link-derived fields only."""

    pagerank: float
    rank: float
    anchors: str
    anchors_tokens: str
