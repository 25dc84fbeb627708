"""The many-host benchmark's site: one small interlinked Chinese site per loopback address.

Each host's front page lists every page of its host, as a documentation site's table
of contents does, so a host's whole queue is known after one fetch: the crawl then
waits on politeness and CPU, not on discovery. Every page also links to another
host, so links cross hosts as on the web. The text is real Chinese (the demo site's
paragraphs, see ``bench/sites/corpus.py``), cut so that no two pages are the same: identical
pages would be dropped as duplicates and make the indexer's work unlike a real crawl's.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from bench.sites.corpus import site_pages

PARAGRAPHS_PER_PAGE = 12


def loopback_addresses(count: int) -> list[str]:
    """127.0.0.2, 127.0.0.3, …: the whole of 127.0.0.0/8 reaches this machine, so each is
    a host of its own to the crawler (127.0.0.1 is left to everything else)."""
    if not 1 <= count <= 253 * 256:
        raise ValueError(f"between 1 and {253 * 256} hosts, not {count}")
    return [f"127.0.{(n + 2) // 256}.{(n + 2) % 256}" for n in range(count)]


def page_path(n: int) -> str:
    """Page ``n``'s URL path: the front page is ``/``, as a seed names it, so no link
    makes a second URL (``/index.html``) of it."""
    return "/" if n == 0 else f"/p{n}.html"


def _file_name(n: int) -> str:
    return "index.html" if n == 0 else f"p{n}.html"


def paragraphs_of(site_root: Path) -> list[str]:
    """The non-trivial lines of every page of a site, extracted by the crawler's own code."""
    lines = (line.strip() for page in site_pages(site_root) for line in page.body.split("\n"))
    return [line for line in lines if len(line) >= 20]


def write_site(root: Path, hosts: Sequence[str], port: int, pages_per_host: int, paragraphs: Sequence[str]) -> None:
    """``pages_per_host`` pages under ``root/<host>/`` for each host; links to other hosts
    carry ``port``, the one port every host is served on."""
    if pages_per_host < 1 or not paragraphs:
        raise ValueError("a site needs at least one page a host and some text")
    for h, host in enumerate(hosts):
        folder = root / host
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(pages_per_host):
            other = f"http://{hosts[(h + 1 + n) % len(hosts)]}:{port}{page_path(n)}"
            text = _text(paragraphs, h * pages_per_host + n)
            page = _page(host, n, pages_per_host, other, text)
            (folder / _file_name(n)).write_text(page, encoding="utf-8")


def _text(paragraphs: Sequence[str], k: int) -> list[str]:
    """Paragraphs for page ``k``: a run starting at a stride of a prime, so runs overlap
    little and, past the corpus' end, wrap with another phase."""
    start = (k * 7919) % len(paragraphs)
    return [paragraphs[(start + i) % len(paragraphs)] for i in range(PARAGRAPHS_PER_PAGE)]


def _page(host: str, n: int, pages: int, other: str, text: list[str]) -> str:
    title = html.escape(text[0][:30])
    if n == 0:
        links = [page_path(k) for k in range(1, pages)]
    else:
        links = sorted({page_path(0), page_path(n - 1), page_path((n + 1) % pages)})
    nav = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    body = "".join(f"<p>{html.escape(p)}</p>" for p in text)
    return (
        f'<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>{title} · {host}</title></head>'
        f'<body><h1>{title}</h1><ul>{nav}</ul>{body}<p><a href="{other}">另一个站点</a></p></body></html>\n'
    )
