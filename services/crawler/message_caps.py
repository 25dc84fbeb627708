"""Caps on what one fetch may put on the bus and in the index.

A hostile or broken page can carry a 1 MB <title>, 100,000 links or a 50,000-entry
sitemap. Uncapped, the title comes back whole in every search answer that hits it,
and a message over the bus's limit (4 MiB) is refused: the page is dropped, its lease
runs out and it is fetched again, forever. So every field is capped here, in the
crawler, before anything is sent; each cap that cut something is named in the
event's ``limits``, which the scheduler counts (docs/crawl-limits.md).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from services.common.config import Settings
from services.common.domain.messages import LinkBatch, Outlink, PageEvent

# JSON around each link ({"url": "", "anchor": "", "lastmod": ""}, ", ") and escapes:
# an estimate on the safe side, so a batch is never measured by serialising it twice.
_LINK_OVERHEAD = 48
_ESCAPE_SLACK = 2  # JSON may escape a character into more bytes ("\"", control chars)


@dataclass(frozen=True)
class OutcomeCaps:
    title_chars: int = 512
    heading_chars: int = 256
    headings: int = 100
    anchor_chars: int = 256
    outlinks: int = 5000
    robots_bytes: int = 512 * 1024
    url_chars: int = 2048  # the frontier's limit on a URL, which a rel=canonical must keep too
    # Room for one links message: the bus's limit less a margin for the envelope.
    message_bytes: int = 3 * 1024 * 1024

    @classmethod
    def from_settings(cls, cfg: Settings) -> OutcomeCaps:
        return cls(
            title_chars=cfg.crawler_max_title_chars,
            heading_chars=cfg.crawler_max_heading_chars,
            headings=cfg.crawler_max_headings,
            anchor_chars=cfg.crawler_max_anchor_chars,
            outlinks=cfg.crawler_max_outlinks,
            robots_bytes=cfg.crawler_max_robots_bytes,
            url_chars=cfg.frontier_max_url_length,
            message_bytes=cfg.bus_max_message_bytes * 3 // 4,
        )


# The caps of a crawl run with the default settings (tests and tools that build one outcome).
DEFAULT_CAPS = OutcomeCaps()


def cap_event(event: PageEvent, caps: OutcomeCaps) -> PageEvent:
    """Title and headings within their caps, and a rel=canonical within the URL
    limit; a cut is added to ``limits``."""
    hits = list(event.limits)
    if len(event.canonical) > caps.url_chars:
        # The page is indexed under the URL it was fetched by, which met the limit: a
        # canonical the frontier would refuse is no better a name for it, and an index
        # cannot always keep so long a key (tantivy drops a term over 65,530 bytes).
        event = dataclasses.replace(event, canonical="")
        hits.append("canonical_length")
    title = event.title
    if len(title) > caps.title_chars:
        title = title[: caps.title_chars]
        hits.append("title_length")
    headings = event.headings
    if len(headings) > caps.headings:
        headings = headings[: caps.headings]
        hits.append("headings")
    if any(len(h) > caps.heading_chars for h in headings):
        headings = [h[: caps.heading_chars] for h in headings]
        hits.append("heading_length")
    event = dataclasses.replace(event, title=title, headings=headings, limits=hits)
    return _event_within(event, caps.message_bytes)


def _event_within(event: PageEvent, budget: int) -> PageEvent:
    """Last resort, for settings that let the body (or a rel=canonical URL) grow past
    one message: cut the canonical, then the body, until the event fits."""
    # Six bytes a character bounds any JSON escape; most pages are far below the
    # budget by that bound, and are not serialised here at all.
    chars = len(event.body) + len(event.title) + sum(map(len, event.headings)) + len(event.canonical)
    if chars * 6 + 65_536 < budget:
        return event
    size = len(event.to_bytes())
    if size <= budget:
        return event
    limits = [*event.limits, "message_size"]
    if len(event.canonical) > 4096:
        event = dataclasses.replace(event, canonical="")
        size = len(event.to_bytes())
    if size > budget:
        body = event.body.encode("utf-8")
        keep = max(0, len(body) - (size - budget) * _ESCAPE_SLACK)
        event = dataclasses.replace(event, body=body[:keep].decode("utf-8", errors="ignore"))
    return dataclasses.replace(event, limits=limits)


def cap_links(links: list[Outlink], caps: OutcomeCaps) -> tuple[list[Outlink], list[str]]:
    """(links kept, limits that cut): anchors trimmed, at most ``outlinks`` links, and
    no more than fit in one message; the first links in document order are kept."""
    hits = []
    if any(len(link.anchor) > caps.anchor_chars for link in links):
        links = [_trim_anchor(link, caps.anchor_chars) for link in links]
        hits.append("anchor_length")
    if len(links) > caps.outlinks:
        links = links[: caps.outlinks]
        hits.append("outlinks")
    fitting = _fitting(links, caps.message_bytes)
    if fitting < len(links):
        links = links[:fitting]
        hits.append("message_size")
    return links, hits


def chunk_sitemap(batch: LinkBatch, caps: OutcomeCaps) -> list[LinkBatch]:
    """A sitemap's entries in as many messages as they need: a sitemap may hold
    50,000 URLs (about 5.4 MiB of JSON), all of them wanted. Each chunk is a batch of
    its own for the scheduler, which admits entries one by one anyway."""
    chunks, rest = [], list(batch.links)
    children = list(batch.sitemaps)
    while True:
        n = max(1, _fitting(rest, caps.message_bytes - _size(children)))
        chunks.append(dataclasses.replace(batch, links=rest[:n], sitemaps=children))
        rest, children = rest[n:], []
        if not rest:
            return chunks


def cap_robots(text: str, caps: OutcomeCaps) -> tuple[str, list[str]]:
    """RFC 9309 2.5: crawlers must read at least 500 KiB of robots.txt; what is past
    the cap is ignored, cut at a line end so no rule is read half."""
    raw = text.encode("utf-8")
    if len(raw) <= caps.robots_bytes:
        return text, []
    head = raw[: caps.robots_bytes].decode("utf-8", errors="ignore")
    end = max(head.rfind("\n"), head.rfind("\r"))  # a line may end with CR alone (RFC 9309 2.1)
    return head[: end + 1], ["robots_size"]


def _trim_anchor(link: Outlink, chars: int) -> Outlink:
    return link if len(link.anchor) <= chars else dataclasses.replace(link, anchor=link.anchor[:chars])


def _size(urls: list[str]) -> int:
    return sum(len(u.encode("utf-8")) * _ESCAPE_SLACK + 4 for u in urls)


def _fitting(links: list[Outlink], budget: int) -> int:
    """How many of the first links fit in ``budget`` bytes of JSON."""
    used = 0
    for i, link in enumerate(links):
        used += _LINK_OVERHEAD + _ESCAPE_SLACK * (
            len(link.url.encode("utf-8")) + len(link.anchor.encode("utf-8")) + len(link.lastmod)
        )
        if used > budget:
            return i
    return len(links)
