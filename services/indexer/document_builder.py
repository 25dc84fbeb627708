"""Turn a fetched page into the document the search index stores."""

from __future__ import annotations

from urllib.parse import urlsplit

from services.common.model import IndexDoc, PageEvent
from services.common.analysis import analyze
from services.common.minhash import signature


def doc_url(event: PageEvent) -> str:
    """The URL a page is indexed under: its rel=canonical, so that the variants of a
    page collapse into one document, but only a canonical on the page's own host.

    A page may name any URL as canonical; honouring another host's would let one site
    overwrite another's document (and file it under a site that was never crawled).
    """
    if event.canonical and site_of(event.canonical) == site_of(event.url):
        return event.canonical
    return event.url


def site_of(url: str) -> str:
    """Host of a URL, lower-case, port kept (two ports are two sites)."""
    return urlsplit(url).netloc.lower()


def build_document(event: PageEvent) -> IndexDoc:
    """Raw text for display plus the same text analysed for the index: words,
    sub-words and bigrams (``services/common/analysis``).

    Link fields (pagerank, rank, anchors) stay empty: the ranker owns them, and the
    index keeps the old values when this document replaces an earlier version.
    """
    url = doc_url(event)
    headings = "\n".join(h for h in event.headings if h)
    # A page of links is indexed by its own text; its display body keeps the links.
    title, heads = analyze(event.title), analyze(headings)
    body = analyze(event.own_text if event.link_page else event.body)
    return IndexDoc(
        url=url,
        site=site_of(url),
        title=event.title,
        headings=headings,
        body=event.body,
        content_hash=event.content_hash,
        title_tokens=" ".join(title.words),
        headings_tokens=" ".join(heads.words),
        body_tokens=" ".join(body.words),
        subword_tokens=" ".join(title.subwords + heads.subwords + body.subwords),
        title_grams=" ".join(title.grams),
        body_grams=" ".join(heads.grams + body.grams),
        fetched_at=event.fetched_at,
        minhash=signature(body.words),
    )
