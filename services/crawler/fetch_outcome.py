"""The result of one fetch job, as the messages and stored page it turns into.

Pure functions of (job, status, headers, body): no Scrapy here, so the rules about
which fields a PageEvent carries can be tested without a server.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from urllib.parse import urljoin

from services.common.domain.document_url import document_url
from services.common.domain.documents import StoredPage
from services.common.domain.messages import (
    FetchJob,
    LinkBatch,
    Outlink,
    PageEvent,
    url_fingerprint,
)
from services.common.ports import Message
from services.crawler.charset import decode_html
from services.crawler.extract import extract
from services.crawler.message_caps import (
    DEFAULT_CAPS,
    OutcomeCaps,
    cap_event,
    cap_links,
    cap_robots,
    chunk_sitemap,
)
from services.crawler.robots_directives import header_robots
from services.crawler.sitemap_parse import sitemap_batch
from services.extractor.document_types import document_family

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# A document larger than this is hashed (and stored) on a thread, not the reactor's:
# on the reactor, a 100 MB file's SHA-1 and write would hold up every fetch for a
# fraction of a second.
LARGE_BODY_BYTES = 1024 * 1024
_SNIFF_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title")
_BINARY_MAGIC = (
    b"%PDF-", b"PK\x03\x04", b"PK\x05\x06", b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a",
    b"\x1f\x8b", b"\xfd7zXZ\x00", b"7z\xbc\xaf\x27\x1c", b"Rar!\x1a\x07", b"\xd0\xcf\x11\xe0",
    b"OggS", b"fLaC", b"\x1aE\xdf\xa3", b"\x00asm", b"\x7fELF",
)  # fmt: skip


@dataclass(frozen=True)
class FetchOutcome:
    """What the publisher does for one job: store ``page``, publish ``links`` and
    ``more_links`` (if any) then ``event``, then ``document`` (to the extractor), then
    commit ``message``. ``more_links`` holds the further chunks of a sitemap too large
    for one message."""

    message: Message
    event: PageEvent
    links: LinkBatch | None = None
    page: StoredPage | None = None
    more_links: tuple[LinkBatch, ...] = ()
    document: PageEvent | None = None  # a document's event, for extraction (documents.fetched)


def outcome_from_error(job: FetchJob, message: Message, error: str) -> FetchOutcome:
    """No response at all: status 0 and a short snake_case reason."""
    return FetchOutcome(message, _base_event(job, time.time(), status=0, error=error))


def outcome_from_response(
    job: FetchJob,
    message: Message,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    max_body_chars: int,
    caps: OutcomeCaps = DEFAULT_CAPS,
    documents: bool = False,
) -> FetchOutcome:
    """``headers`` is flat (one string per name); names are matched case-insensitively.
    With ``documents``, a PDF, Office, WPS, RTF or text file goes to extraction."""
    fetched_at = time.time()
    lower = {k.lower(): v for k, v in headers.items()}
    event = _response_event(job, status, lower, body, fetched_at)
    links: LinkBatch | None = None
    more: tuple[LinkBatch, ...] = ()
    document: PageEvent | None = None
    if job.kind == "robots" and 200 <= status < 300:
        text, hits = cap_robots(_robots_text(body), caps)
        event = replace(event, robots_txt=text, limits=hits)
    elif job.kind == "sitemap" and 200 <= status < 300:
        batch, digest = sitemap_batch(job, body, max_bytes=50 * 1024 * 1024)
        links, *rest = chunk_sitemap(batch, caps)
        more = tuple(rest)
        event = replace(event, content_hash=digest)
    elif job.kind == "page" and 200 <= status < 300 and documents and (
        family := document_family(lower.get("content-type", ""), body[:16])
    ):
        event, links = _document_fields(job, event, lower, body, family)
        document = event if not event.noindex else None
    elif job.kind == "page" and 200 <= status < 300:
        event, links = _html_fields(job, event, lower, body, max_body_chars, caps)
    elif job.kind == "page" and event.redirect_to:
        # For the link graph: links to this URL count for its target (services/ranker).
        links = LinkBatch(source=job.url, depth=job.depth, links=[Outlink(event.redirect_to)], kind="redirect")
    page = None
    if body:
        page = StoredPage(job.url, status, dict(headers), fetched_at, body, event.content_hash)
    return FetchOutcome(message, event, links, page, more, document)


def _base_event(job: FetchJob, fetched_at: float, **fields: object) -> PageEvent:
    return PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, kind=job.kind,
                     depth=job.depth, fetched_at=fetched_at, **fields)  # type: ignore[arg-type]


def _response_event(
    job: FetchJob, status: int, headers: Mapping[str, str], body: bytes, fetched_at: float
) -> PageEvent:
    location = headers.get("location", "")
    return _base_event(
        job,
        fetched_at,
        status=status,
        content_type=mime_type(headers.get("content-type", "")),
        redirect_to=_absolute(job.url, location) if 300 <= status < 400 and location else "",
        retry_after=headers.get("retry-after", "") if status in (429, 503) else "",
        etag=headers.get("etag", ""),
        last_modified=headers.get("last-modified", ""),
        store_key=url_fingerprint(job.url) if body else "",
        size=len(body),
    )


def _html_fields(
    job: FetchJob, event: PageEvent, headers: Mapping[str, str], body: bytes, max_body_chars: int, caps: OutcomeCaps
) -> tuple[PageEvent, LinkBatch | None]:
    if not is_html(event.content_type, body) or looks_binary(body):
        return replace(event, error="not_html"), None
    text, encoding = decode_html(body, headers.get("content-type", ""))
    content = extract(job.url, text, headers, encoding=encoding, max_body_chars=max_body_chars)
    event = replace(
        event,
        encoding=encoding,
        canonical=content.canonical,
        noindex=content.noindex,
        nofollow=content.nofollow,
        title=content.title,
        headings=content.headings,
        body=content.body,
        content_hash=content.content_hash,
        link_page=content.own_text is not None,
        own_text=content.own_text or "",
    )
    event = cap_event(event, caps)
    links, hits = cap_links(content.links, caps)
    if hits:
        event = replace(event, limits=[*event.limits, *hits])
    # Published even when empty: the ranker learns from it that the page is a graph node.
    indexed_as = document_url(job.url, event.canonical)
    return event, LinkBatch(source=job.url, depth=job.depth, links=links,
                            canonical=indexed_as if indexed_as != job.url else "")  # fmt: skip


def _document_fields(
    job: FetchJob, event: PageEvent, headers: Mapping[str, str], body: bytes, family: str
) -> tuple[PageEvent, LinkBatch]:
    """A document's event, with its family and the hash of its bytes, which decides
    whether it changed (services/scheduler/recrawl_policy.py): its text comes later,
    from the extractor. No parsing here: a 50 MB PDF must not hold up the reactor."""
    noindex, nofollow = header_robots(headers)
    digest = hashlib.sha1(body).hexdigest() if len(body) <= LARGE_BODY_BYTES else ""  # else see ``hashed``
    event = replace(event, document=family, noindex=noindex, nofollow=nofollow, content_hash=digest)
    # An empty link batch: the ranker learns from it that the document is a graph node,
    # so it gets a PageRank and the anchor texts of the links to it.
    return event, LinkBatch(source=job.url, depth=job.depth, links=[])


def hashed(outcome: FetchOutcome) -> FetchOutcome:
    """``outcome`` with the content hash of a large document, which ``_document_fields``
    leaves to be computed here, on a thread of the publisher's."""
    if outcome.document is None or outcome.event.content_hash or outcome.page is None:
        return outcome
    digest = hashlib.sha1(outcome.page.body).hexdigest()
    event = replace(outcome.event, content_hash=digest)
    return replace(outcome, event=event, document=event, page=replace(outcome.page, content_hash=digest))


def mime_type(content_type: str) -> str:
    """"text/html; charset=gbk" -> "text/html"."""
    return content_type.split(";", 1)[0].strip().lower()


def is_html(mime: str, body: bytes) -> bool:
    """HTML by declared type; an undeclared type counts if the body looks like HTML."""
    if mime:
        return mime in HTML_TYPES
    head = body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return any(marker in head for marker in _SNIFF_MARKERS)


def looks_binary(body: bytes) -> bool:
    """A file format's magic number at the start: PDF, ZIP (and docx, xlsx...), images,
    archives, audio and video. Servers label such files text/html often enough; parsed
    as HTML they index as text full of U+FFFD."""
    head = body[:16].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(_BINARY_MAGIC)


def _robots_text(body: bytes) -> str:
    return body.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _absolute(url: str, location: str) -> str:
    try:
        return urljoin(url, location.strip())
    except ValueError:
        return location
