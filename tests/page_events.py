"""Builders of sample page events and index documents for the search tests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from urllib.parse import urlsplit

from services.common.analysis import document_grams
from services.common.domain.documents import IndexDoc
from services.common.domain.messages import PageEvent


def page_event(
    url: str,
    title: str = "",
    body: str = "",
    headings: Sequence[str] = (),
    *,
    status: int = 200,
    noindex: bool = False,
    canonical: str = "",
    content_hash: str | None = None,
    kind: str = "page",
    error: str = "",
) -> PageEvent:
    """A fetched page; the content hash defaults to the sha1 of title and body, as the
    crawler computes one from the extracted text."""
    if content_hash is None:
        content_hash = hashlib.sha1(f"{title}\n{body}".encode()).hexdigest() if (title or body) else ""
    return PageEvent(
        url=url,
        host=urlsplit(url).netloc,
        lease_id="lease-" + hashlib.sha1(url.encode()).hexdigest()[:8],
        kind=kind,
        fetched_at=1_700_000_000.0,
        status=status,
        error=error,
        content_type="text/html",
        canonical=canonical,
        noindex=noindex,
        title=title,
        headings=list(headings),
        body=body,
        content_hash=content_hash,
    )


def index_doc(
    url: str,
    title: str = "",
    body: str = "",
    headings: str = "",
    *,
    content_hash: str = "",
    subwords: str = "",
    site: str = "",
) -> IndexDoc:
    """An already segmented document: the words of each text are its space-separated
    tokens, so a contract test controls term statistics exactly without jieba. Its
    bigram fields are the display text's, as the indexer would make them."""
    title_grams, body_grams = document_grams(title.replace(" ", ""), headings.replace(" ", ""), body.replace(" ", ""))
    return IndexDoc(
        url=url,
        site=site or urlsplit(url).netloc,
        title=title.replace(" ", ""),
        headings=headings.replace(" ", ""),
        body=body.replace(" ", ""),
        title_grams=" ".join(title_grams),
        body_grams=" ".join(body_grams),
        content_hash=content_hash or hashlib.sha1(f"{url}{title}{body}".encode()).hexdigest(),
        title_tokens=title.lower(),
        headings_tokens=headings.lower(),
        body_tokens=body.lower(),
        subword_tokens=subwords,
    )
