"""The text the index and search benchmarks work on: the demo site's pages, extracted
by the crawler's own code, repeated under other hosts to reach a few thousand pages.

Extraction happens once, outside any timing: it is the crawler's work, not the
indexer's. Each copy drops a different eighth of every page's lines, so that copies
are near-duplicates with their own term counts, as mirrored pages are: exact copies
would give every query runs of equal scores, which a real index rarely sees.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from services.common.domain.messages import PageEvent
from services.crawler.charset import decode_html
from services.crawler.extract import extract

_CONTENT_TYPE = "text/html; charset=utf-8"  # what SiteServer declares for the site's pages
_DROP_EVERY = 8


def site_pages(site_root: Path, host: str = "docs.bench.example.cn") -> list[PageEvent]:
    """Every HTML file under ``site_root`` as the page event a crawl would publish."""
    events = []
    for path in sorted(Path(site_root).rglob("*.html")):
        url = f"http://{host}/{path.relative_to(site_root).as_posix()}"
        text, encoding = decode_html(path.read_bytes(), _CONTENT_TYPE)
        page = extract(url, text, {"Content-Type": _CONTENT_TYPE}, encoding=encoding)
        if page.noindex:
            continue
        events.append(PageEvent(
            url=url, host=host, lease_id="", status=200, content_type=_CONTENT_TYPE, encoding=encoding,
            title=page.title, headings=page.headings, body=page.body, content_hash=page.content_hash,
        ))
    return events


def repeated(pages: list[PageEvent], copies: int) -> list[PageEvent]:
    """``copies`` versions of ``pages``; copy 0 is the original, copy k lives on host
    ``copy-k.<host>`` and lacks the lines whose number is k modulo 8."""
    out = list(pages)
    for k in range(1, copies):
        for page in pages:
            lines = page.body.split("\n")
            body = "\n".join(line for i, line in enumerate(lines) if i % _DROP_EVERY != k % _DROP_EVERY)
            host = f"copy-{k}.{page.host}"
            out.append(replace(
                page,
                url=page.url.replace(f"//{page.host}/", f"//{host}/", 1),
                host=host,
                body=body,
                content_hash=hashlib.sha1(f"{page.title}\n{body}".encode()).hexdigest(),
            ))
    return out
