"""Domain types that cross service boundaries.

Every message on the bus is one of these, serialised as JSON so that a Kafka topic
can be read with any tool. ``to_bytes``/``from_bytes`` are the only wire format.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T", bound="WireMessage")


class WireMessage:
    """Mixin: JSON round trip for dataclasses; unknown keys are ignored so that a
    newer producer never crashes an older consumer during a rolling upgrade."""

    def to_bytes(self) -> bytes:
        return json.dumps(self.to_dict(), ensure_ascii=False).encode("utf-8")

    def to_dict(self) -> dict[str, Any]:
        """What ``dataclasses.asdict`` gives for a message, built shallowly: asdict
        deep-copies every value and recurses into each of a page's links, which cost
        the crawler more than the JSON encoding itself. Messages hold strings, numbers
        and flat lists of those or of messages, and nothing here mutates them."""
        out = {}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if type(value) is list and value and isinstance(value[0], WireMessage):
                value = [item.to_dict() for item in value]
            out[name] = value
        return out

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        names = _field_set(cls)  # unknown keys (a newer sender's fields) are dropped
        return cls(**{k: v for k, v in data.items() if k in names})

    @classmethod
    def from_bytes(cls: type[T], raw: bytes) -> T:
        return cls.from_dict(json.loads(raw))


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_FIELD_SETS: dict[type, frozenset[str]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """A message class's field names, computed once a class: ``dataclasses.fields`` is
    too slow to call for every message (docs/benchmarks.md, message encoding)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _field_set(cls: type) -> frozenset[str]:
    """``_field_names`` as a set, for dropping a newer sender's unknown keys."""
    names = _FIELD_SETS.get(cls)
    if names is None:
        names = _FIELD_SETS[cls] = frozenset(_field_names(cls))
    return names


def url_fingerprint(url: str) -> str:
    """Stable key for a canonical URL: page-store keys and index ids derive from it."""
    return hashlib.sha1(url.encode("utf-8")).hexdigest()


# Topic names: noun.past-tense, one producer role each.
TOPIC_FETCHES = "fetches.scheduled"  # scheduler -> crawler, key = host
TOPIC_PAGES = "pages.fetched"  # crawler -> scheduler, indexer, key = host
TOPIC_LINKS = "links.discovered"  # crawler -> scheduler, ranker, key = host of the source page
TOPIC_REMOVALS = "pages.removed"  # scheduler, host purges -> indexer, key = host
TOPIC_SEEDS = "seeds.submitted"  # `tansuo seed`, POST /api/seeds -> scheduler
TOPIC_INDEXED = "documents.indexed"  # indexer -> ranker, key = the batch's first URL
TOPIC_DOCUMENTS = "documents.fetched"  # crawler -> extractor (PDF, Office...: a PageEvent to complete), key = host


@dataclass(frozen=True)
class FetchJob(WireMessage):
    """One URL the frontier has leased to a crawler. ``kind`` is "page" or "robots"."""

    url: str
    host: str
    lease_id: str
    depth: int = 0
    kind: str = "page"
    etag: str = ""
    last_modified: str = ""


@dataclass(frozen=True)
class Outlink(WireMessage):
    url: str
    anchor: str = ""
    lastmod: str = ""  # W3C datetime from a sitemap entry


@dataclass(frozen=True)
class PageEvent(WireMessage):
    """The outcome of one fetch job, success or not.

    ``status`` is the HTTP status, or 0 when no response came (``error`` says why).
    Content fields are empty unless the response was an indexable HTML page.
    """

    url: str
    host: str
    lease_id: str
    kind: str = "page"
    depth: int = 0
    fetched_at: float = 0.0
    status: int = 0
    error: str = ""  # "", "dns", "timeout", "connection", "private_address", "too_large", "not_html", ...
    content_type: str = ""
    encoding: str = ""
    redirect_to: str = ""  # absolute Location of a 3xx
    retry_after: str = ""  # raw Retry-After header of a 429/503
    etag: str = ""
    last_modified: str = ""
    canonical: str = ""  # rel=canonical, absolute, when it differs from url
    noindex: bool = False
    nofollow: bool = False
    title: str = ""
    headings: list[str] = field(default_factory=list)
    body: str = ""
    content_hash: str = ""  # sha1 of the normalised extracted text
    link_page: bool = False  # mostly links: indexed by own_text, shown by body
    own_text: str = ""  # a link page's text without its link texts
    store_key: str = ""  # where the raw bytes live in the page store
    robots_txt: str = ""  # body of a robots.txt job
    size: int = 0  # bytes received
    limits: list[str] = field(default_factory=list)  # crawl limits that cut this page (docs/crawl-limits.md)
    # A document (PDF, Office, WPS, RTF, text), not an HTML page: its format (pdf, docx,
    # ...), or before extraction the family its first bytes show (pdf, zip, ole, rtf,
    # text). The crawler's event of a document finishes the fetch; the extractor's,
    # ``extracted``, carries the text (docs/documents.md).
    document: str = ""
    pages: int = 0  # a document's pages (slides, sheets)
    extracted: bool = False

    @property
    def indexable(self) -> bool:
        return (self.kind == "page" and 200 <= self.status < 300 and not self.error and not self.noindex
                and (not self.document or self.extracted))  # fmt: skip


@dataclass(frozen=True)
class LinkBatch(WireMessage):
    """Outlinks of one page, in document order. Links are absolute but not canonical:
    canonicalising and scoping are the scheduler's job."""

    source: str
    depth: int  # depth of the source page; links get depth + 1
    links: list[Outlink] = field(default_factory=list)
    # "sitemap": entries of a sitemap, not a page's outlinks (no graph edges); "redirect": a
    # 3xx's one link to its Location, for the link graph (the scheduler admits it from the event)
    kind: str = "page"
    sitemaps: list[str] = field(default_factory=list)  # child sitemaps of a sitemap index
    # The URL the page is indexed under when not its own (rel=canonical on its site):
    # the link graph counts links to ``source`` for it.
    canonical: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinkBatch:
        links = [Outlink.from_dict(link) for link in data.get("links", [])]
        return cls(
            source=data["source"],
            depth=int(data.get("depth", 0)),
            links=links,
            kind=str(data.get("kind", "page")),
            sitemaps=list(data.get("sitemaps", [])),
            canonical=str(data.get("canonical", "")),
        )


@dataclass(frozen=True)
class SeedRequest(WireMessage):
    """Seeds for a running crawl. With no ``allow_domains``, the seeds' hosts join the scope."""

    urls: list[str] = field(default_factory=list)
    allow_domains: list[str] = field(default_factory=list)
    submitted_at: float = 0.0
    source: str = ""  # "cli" or "api", for the log


@dataclass(frozen=True)
class PageRemoval(WireMessage):
    """A URL that must leave the index: gone (404/410 twice in a row) or redirected.
    ``at`` orders it against page events: a document fetched after ``at`` stays."""

    url: str
    reason: str
    at: float

    @property
    def kind(self) -> str:
        """The reason's first word ("gone", "redirected"): a small set, fit for a metric label."""
        return self.reason.split(" ", 1)[0].split("(", 1)[0] or "unknown"


@dataclass(frozen=True)
class IndexedDocuments(WireMessage):
    """URLs whose documents an index commit has just made searchable.

    The ranker writes its last computed link fields into each of them, so a page
    indexed after the ranker's last run does not wait for the link graph to change."""

    urls: list[str] = field(default_factory=list)
    at: float = 0.0
