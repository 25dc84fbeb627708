"""The Debian Chinese docs site, served on 127.0.0.1 with GBK copies and a robots.txt rule.

The site is built by the product's own demo builder (Debian packages), once per machine,
into a cache that later runs reuse.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import lxml.html
import pytest

from services.cli.demo_site import build_demo_site
from services.cli.static_site_server import SiteServer

CACHE = Path(os.environ.get("TANSUO_TEST_CACHE", Path.home() / ".cache" / "tansuo"))
# A real page of the FAQ that other pages link to; robots.txt forbids it.
DISALLOWED = "/faq/support.zh-cn.html"
ROBOTS = f"User-agent: *\nDisallow: {DISALLOWED}\n"
GBK_SOURCES = ("faq/basic-defs.zh-cn.html", "faq/compatibility.zh-cn.html", "faq/software.zh-cn.html")


@dataclass(frozen=True)
class GbkPage:
    path: str
    title: str
    text: str  # the Chinese text it carries, as Unicode


@dataclass
class ServedSite:
    root: Path
    server: SiteServer
    gbk_pages: list[GbkPage]

    @property
    def url(self) -> str:
        return self.server.url


def _paragraph_text(path: Path, limit: int = 800) -> str:
    doc = lxml.html.fromstring(path.read_bytes())
    parts = []
    for p in doc.iter("p"):
        text = " ".join(p.text_content().split())
        if sum(0x4E00 <= ord(c) <= 0x9FFF for c in text) > 20:
            parts.append(text)
        if sum(map(len, parts)) > limit:
            break
    return "\n".join(parts)


def _gbk_routes(root: Path) -> tuple[dict, list[GbkPage]]:
    """Three GBK/GB18030 pages: charset only in the header, only in the meta tag, nowhere."""
    variants = [
        ("/gbk/header.html", "text/html; charset=GBK", "", "gbk"),
        ("/gbk/meta.html", "text/html", '<meta http-equiv="Content-Type" content="text/html; charset=gb2312">', "gbk"),
        ("/gbk/sniffed.html", "text/html", "", "gb18030"),
    ]
    routes, pages = {}, []
    for (path, ctype, meta, codec), source in zip(variants, GBK_SOURCES, strict=True):
        text = _paragraph_text(root / source)
        title = f"国标编码测试页 {path.rsplit('/', 1)[-1]}"
        paras = "".join(f"<p>{line}</p>" for line in text.splitlines())
        html = f"<html><head>{meta}<title>{title}</title></head><body><h1>{title}</h1>{paras}</body></html>"
        routes[path] = (200, {"Content-Type": ctype}, html.encode(codec, errors="xmlcharrefreplace"))
        pages.append(GbkPage(path, title, text))
    return routes, pages


@pytest.fixture(scope="session")
def docs_site_dir() -> Path:
    dest = CACHE / "zh-docs-site"
    build_demo_site(dest, cache=CACHE / "debs", documents=False)
    return dest


@pytest.fixture(scope="session")
def demo_site_dir() -> Path:
    """The demo's own site: the docs site and the PDF it publishes."""
    dest = CACHE / "zh-demo-site"
    build_demo_site(dest, cache=CACHE / "debs")
    return dest


@pytest.fixture(scope="session")
def site_copy(docs_site_dir: Path, tmp_path_factory) -> tuple[Path, dict, list[GbkPage]]:
    root = tmp_path_factory.mktemp("site") / "www"
    shutil.copytree(docs_site_dir, root)
    routes, pages = _gbk_routes(root)
    index = root / "index.html"
    links = "".join(f'<li><a href="{p.path.lstrip("/")}">{p.title}</a></li>' for p in pages)
    index.write_text(index.read_text(encoding="utf-8").replace("</ul>", links + "</ul>", 1), encoding="utf-8")
    return root, routes, pages


def serve_site(site_copy) -> ServedSite:
    root, routes, pages = site_copy
    server = SiteServer(root, robots_txt=ROBOTS, extra_routes=routes).start()
    return ServedSite(root, server, pages)


def run_cli(*args: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "services.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def reachable_pages(site: ServedSite) -> dict[str, str]:
    """URL -> sha1 of the file's bytes, for every HTML page and text document reachable
    by links from the root, robots.txt aside. An independent, simple walk: lxml, no Tansuo code."""
    base = site.url
    seen: dict[str, str] = {}
    queue = deque([base])
    while queue:
        url = queue.popleft()
        if url in seen:
            continue
        path = unquote(urlsplit(url).path)
        if path == DISALLOWED:
            continue
        route = site.server.extra_routes.get(path)
        if route is not None:
            seen[url] = hashlib.sha1(route[2]).hexdigest()
            continue
        file = site.root / path.lstrip("/")
        if file.is_dir():
            file = file / "index.html"
        if not file.is_file() or file.suffix not in (".html", ".txt"):
            continue
        body = file.read_bytes()
        seen[url] = hashlib.sha1(body).hexdigest()
        if file.suffix == ".txt":  # a text file is a document, indexed too (docs/documents.md); it has no links
            continue
        doc = lxml.html.fromstring(body)
        for href in doc.xpath("//a/@href"):
            target = urljoin(url, href.strip()).split("#", 1)[0]
            if target.startswith(base):
                queue.append(target)
    return seen


def check_indexed_exactly_once(site: ServedSite, urls: list[str]) -> None:
    """Each reachable page's content is in the index once: under one of the URLs that
    serve it (index.html and its directory are one page), never twice."""
    reachable = reachable_pages(site)
    assert len(urls) == len(set(urls)), "a URL is indexed twice"
    assert set(urls) <= set(reachable), f"indexed but unreachable: {set(urls) - set(reachable)}"
    by_content = defaultdict(set)
    for url, digest in reachable.items():
        by_content[digest].add(url)
    indexed = set(urls)
    missing = [sorted(group)[0] for group in by_content.values() if not group & indexed]
    doubled = [sorted(group) for group in by_content.values() if len(group & indexed) > 1]
    assert not missing, f"{len(missing)} reachable pages not indexed, e.g. {missing[:5]}"
    assert not doubled, f"pages indexed under two URLs: {doubled[:3]}"
    assert len(reachable) > 200


@pytest.fixture(scope="session")
def embedded_reference(site_copy, tmp_path_factory) -> Path:
    """One embedded crawl of the site, the reference that cluster runs are compared with."""
    site = serve_site(site_copy)
    data = tmp_path_factory.mktemp("embedded")
    result = run_cli("crawl", site.url, "--data", str(data), "--delay", "0", "--allow-private-networks", "--no-progress")
    site.server.stop()
    assert result.returncode == 0, result.stderr
    return data
