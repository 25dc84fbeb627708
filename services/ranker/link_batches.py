"""What a ``links.discovered`` message puts into the link graph: a page's outlinks,
canonicalised, with the links that name it another URL's alias."""

from __future__ import annotations

from dataclasses import dataclass

from services.common.domain.messages import LinkBatch
from services.common.domain.url_canonical import BadUrl, canonicalize
from services.common.errors import BadMessage
from services.ranker.anchor_text import clean_anchor
from services.ranker.link_snapshot import ALIAS_MARK


class BadBatch(BadMessage):
    """The message cannot be decoded, or its source is not a URL: redelivery would fail
    the same way, so it is skipped, not retried."""


@dataclass(frozen=True)
class PageLinks:
    source: str
    links: list[tuple[str, str]]  # (target, anchor)
    dropped: int  # targets that were not http(s) URLs, or the page itself


def page_links(payload: bytes) -> PageLinks | None:
    """The graph's view of one message; None for a batch that names no links (a
    sitemap, a redirect to itself)."""
    try:
        batch = LinkBatch.from_bytes(payload)
        source = canonicalize(batch.source)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # BadUrl, JSON errors
        raise BadBatch(str(exc)) from exc
    if batch.kind == "redirect":
        # Its one link, to the target: the URL is the target's other name.
        links = alias_link(source, batch.links[0].url if batch.links else "")
        return PageLinks(source, links, 0) if links else None
    if batch.kind == "page":
        links, dropped = _outlinks(source, batch)
        return PageLinks(source, links + alias_link(source, batch.canonical), dropped)
    return None  # a sitemap lists pages; it does not link to them


def _outlinks(source: str, batch: LinkBatch) -> tuple[list[tuple[str, str]], int]:
    links: list[tuple[str, str]] = []
    dropped = 0
    for link in batch.links:
        try:
            target = canonicalize(link.url)
        except (BadUrl, AttributeError):  # AttributeError: a url that is not a string
            dropped += 1
            continue
        if target == source:
            # Links to the page itself ("#top", tables of contents) say nothing
            # about its importance, and would lend it its own anchor text.
            dropped += 1
            continue
        links.append((target, clean_anchor(link.anchor)))
    return links, dropped


def alias_link(source: str, url: str) -> list[tuple[str, str]]:
    """The link that makes ``source`` another name of ``url`` (a redirect's target, a
    page's rel=canonical), its anchor naming ``source`` (see ``link_snapshot``); none
    when ``url`` is empty, not a URL, or ``source`` itself."""
    try:
        target = canonicalize(url) if url else source
    except (BadUrl, AttributeError):
        return []
    return [(target, ALIAS_MARK + source)] if target != source else []
