"""Sitemaps (sitemaps.org protocol): URL sets and sitemap indexes, plain or gzipped.

Parsing is Scrapy's own helper (lxml with entity resolution off, so an XML bomb
or an external entity cannot reach the file system); we add the gzip cap and turn
the entries into a LinkBatch the scheduler understands.
"""

from __future__ import annotations

import hashlib
import logging

from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

from services.common.domain.messages import FetchJob, LinkBatch, Outlink

log = logging.getLogger(__name__)

_GZIP_MAGIC = b"\x1f\x8b"


def sitemap_bytes(body: bytes, max_bytes: int) -> bytes:
    """The XML of a sitemap, unzipped when it is a .gz file (capped: a small file may
    inflate to gigabytes)."""
    if body[:2] == _GZIP_MAGIC:
        return gunzip(body, max_size=max_bytes)
    return body


def sitemap_batch(job: FetchJob, body: bytes, max_bytes: int) -> tuple[LinkBatch, str]:
    """(entries as a LinkBatch of kind "sitemap", hash of the XML for change detection)."""
    try:
        xml = sitemap_bytes(body, max_bytes)
        sitemap = Sitemap(xml)
    except Exception as exc:  # malformed XML, bad gzip, over the cap: nothing to add
        log.info("unreadable sitemap %s: %s", job.url, exc)
        return LinkBatch(source=job.url, depth=0, kind="sitemap"), ""
    links: list[Outlink] = []
    children: list[str] = []
    for entry in sitemap:
        loc = (entry.get("loc") or "").strip()
        if not loc:
            continue
        if sitemap.type == "sitemapindex":
            children.append(loc)
        else:
            links.append(Outlink(url=loc, lastmod=(entry.get("lastmod") or "").strip()))
    batch = LinkBatch(source=job.url, depth=0, links=links, kind="sitemap", sitemaps=children)
    return batch, hashlib.sha1(xml).hexdigest()
