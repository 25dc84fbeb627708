"""Which URL a page is known by: the indexer files the page under it, and the link
graph counts links to the page's other URL for it, so both must agree."""

from __future__ import annotations

from urllib.parse import urlsplit


def site_of(url: str) -> str:
    """Host of a URL, lower-case, port kept (two ports are two sites)."""
    return urlsplit(url).netloc.lower()


def document_url(url: str, canonical: str) -> str:
    """The page's rel=canonical, so that the variants of a page collapse into one
    document, but only a canonical on the page's own host.

    A page may name any URL as canonical; honouring another host's would let one site
    overwrite another's document (and file it under a site that was never crawled).
    """
    if canonical and site_of(canonical) == site_of(url):
        return canonical
    return url
