"""The crawl baseline: a naive single-threaded crawler with only the standard library.

Breadth-first from the root, same host only, fragments stripped, each URL fetched
once; it parses ``<a href>`` out of HTML and does nothing else (no robots.txt, no
storage, no indexing). It is what a first script would do, so the crawl ratio says
what the crawler's machinery costs or buys on top of plain fetching.

Run it in its own process, as the benchmark does, so that it pays for its start-up
just as ``tansuo crawl`` does::

    python -m bench.crawl.naive_crawler http://127.0.0.1:8000/
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import asdict, dataclass
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

TIMEOUT_S = 30.0


@dataclass(frozen=True)
class NaiveCrawlResult:
    fetched: int  # URLs requested, whatever the answer
    html_pages: int  # 2xx HTML responses whose links were followed
    errors: int  # HTTP errors and failed connections
    elapsed_s: float


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("a", "area"):
            for name, value in attrs:
                if name == "href" and value:
                    self.hrefs.append(value)


def _links(page_url: str, html: str, host: str) -> list[str]:
    parser = _LinkParser()
    parser.feed(html)
    parser.close()
    out = []
    for href in parser.hrefs:
        url = urldefrag(urljoin(page_url, href.strip())).url
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc == host:
            out.append(url)
    return out


def _charset(content_type: str) -> str:
    for param in content_type.split(";")[1:]:
        name, _, value = param.strip().partition("=")
        if name.lower() == "charset" and value:
            return value.strip("\"'")
    return "utf-8"


def crawl(root: str) -> NaiveCrawlResult:
    """Fetch every same-host page reachable from ``root`` by links."""
    started = time.perf_counter()
    host = urlsplit(root).netloc
    root = urldefrag(root).url
    seen = {root}
    queue = deque([root])
    fetched = html_pages = errors = 0
    while queue:
        url = queue.popleft()
        fetched += 1
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
                body = response.read()
                content_type = response.headers.get("Content-Type", "")
                final_url = response.geturl()  # after redirects: links resolve against it
        except (urllib.error.URLError, OSError):
            errors += 1
            continue
        if not content_type.lower().startswith("text/html"):
            continue
        html_pages += 1
        html = body.decode(_charset(content_type), errors="replace")
        for link in _links(final_url, html, host):
            if link not in seen:
                seen.add(link)
                queue.append(link)
    return NaiveCrawlResult(fetched, html_pages, errors, time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="start URL; only its host is crawled")
    args = parser.parse_args(argv)
    print(json.dumps(asdict(crawl(args.root))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
