"""What a search engine needs from one HTML page: title, headings, main text, outlinks
and the robots directives. A pure function over (url, text, headers), so the indexer
can re-run it over stored pages and the tests need no network.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

from lxml import etree
from w3lib.url import safe_url_string

from services.common.domain.messages import Outlink
from services.common.domain.url_canonical import BadUrl, canonicalize
from services.crawler.boilerplate import link_page_text, prune
from services.crawler.page_text import body_text, collapse, text_of
from services.crawler.robots_directives import header_robots, meta_robots

_SKIP_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "#")
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# A reference whose path is empty, split as urllib.parse splits it: an optional scheme,
# an optional authority, then nothing, a query, a fragment or parameters (";").
_NO_PATH = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?(?://[^/?#]*)?(?:[?#;]|$)")


@dataclass(frozen=True)
class PageContent:
    title: str = ""
    headings: list[str] = field(default_factory=list)
    body: str = ""
    links: list[Outlink] = field(default_factory=list)  # empty when nofollow
    canonical: str = ""  # absolute, only when it differs from the page URL
    noindex: bool = False
    nofollow: bool = False
    content_hash: str = ""
    own_text: str | None = None  # a page of links: its text without the link texts


def extract(
    url: str,
    html: str,
    headers: Mapping[str, str] | None = None,
    *,
    encoding: str = "utf-8",
    max_body_chars: int = 200_000,
) -> PageContent:
    """``encoding`` only affects how non-ASCII query strings in links are percent-encoded,
    as a browser would do for a link on that page."""
    header_noindex, header_nofollow = header_robots(headers or {})
    root = _parse(html)
    if root is None:
        empty_hash = content_hash("", "")
        return PageContent(noindex=header_noindex, nofollow=header_nofollow, content_hash=empty_hash)
    base = _base_url(root, url)
    meta_noindex, meta_nofollow = meta_robots(root)
    nofollow = header_nofollow or meta_nofollow
    # Links before pruning: navigation is chrome to the reader but how a crawl spreads.
    links = [] if nofollow else list(_outlinks(root, base, encoding))
    canonical = _canonical(root, base, url)
    title = _title(root)
    prune(root)
    headings = [h for h in (text_of(e) for e in root.iter(*_HEADINGS)) if h]
    own = link_page_text(root)
    body = body_text(root)[:max_body_chars]
    return PageContent(title=title, headings=headings, body=body, links=links, canonical=canonical,
                       noindex=header_noindex or meta_noindex, nofollow=nofollow,
                       content_hash=content_hash(title, body), own_text=None if own is None else own[:max_body_chars])


def content_hash(title: str, body: str) -> str:
    """sha1 of the normalised text, so one article under two URLs hashes the same."""
    text = collapse(title) + "\n" + body
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _parse(html: str) -> etree._Element | None:
    # Bytes with an explicit parser encoding: lxml refuses str input that carries an
    # XML encoding declaration, which XHTML pages do. Plain etree, not lxml.html: its
    # per-element Python class lookup doubles the cost of every walk over the tree.
    html = _CONTROL_CHARS.sub("", html)  # lxml refuses them when text nodes are rewritten
    if not html.strip():
        return None
    parser = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        return etree.fromstring(html.encode("utf-8", "replace"), parser=parser)
    except (etree.XMLSyntaxError, ValueError):
        return None


def _title(root: etree._Element) -> str:
    for element in root.iter("title"):
        text = text_of(element)
        if text and not any(parent.tag == "svg" for parent in element.iterancestors()):
            return text
    return next((t for t in (text_of(h) for h in root.iter("h1")) if t), "")


def _base_url(root: etree._Element, url: str) -> str:
    for element in root.iter("base"):  # an XPath costs more than this walk
        href = element.get("href")
        if href and href.strip():
            try:
                return urljoin(url, href.strip())
            except ValueError:
                break
    return url


def _resolve(base: str, href: str, encoding: str, directory: str | None = None) -> str | None:
    """Absolute http(s) URL without fragment, or None for anything not worth a fetch.
    ``directory`` is ``_directory(base)``, when the caller resolves many links of one page."""
    href = href.strip()
    if "\n" in href or "\t" in href or "\r" in href:
        href = re.sub(r"[\t\n\r]", "", href)  # browsers ignore them inside URLs
    if not href or href.lower().startswith(_SKIP_SCHEMES):
        return None
    # Only a reference with no path ("?x", "//", "http:") takes the base's whole path
    # and query; any other resolves against the base's directory alike, which the pages
    # of one directory share, so their navigation links are resolved once.
    if _NO_PATH.match(href):
        return _absolute(base, href, encoding)
    return _absolute(directory if directory is not None else _directory(base), href, encoding)


def _directory(base: str) -> str:
    """The base URL up to the last "/" of its path, without query or fragment."""
    try:
        scheme, netloc, path, _, _ = urlsplit(base)
    except ValueError:
        return base
    return urlunsplit((scheme, netloc, path[: path.rfind("/") + 1], "", ""))


@functools.lru_cache(maxsize=16_384)
def _absolute(base: str, href: str, encoding: str) -> str | None:
    """Remembered: a site's navigation links repeat on every page of a directory, and
    ``urljoin`` and ``urlsplit`` were a fifth of ``extract``'s time."""
    try:
        absolute = urljoin(base, href).split("#", 1)[0]
        parts = urlsplit(absolute)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    if absolute.isascii() and " " not in absolute:
        return absolute
    try:
        return safe_url_string(absolute, encoding=encoding)
    except ValueError:
        return None


def _outlinks(root: etree._Element, base: str, encoding: str) -> Iterator[Outlink]:
    anchors: dict[str, str] = {}
    directory = _directory(base)
    for element in root.iter("a", "area"):
        href = element.get("href")
        if href is None or "nofollow" in (element.get("rel") or "").lower().split():
            continue
        target = _resolve(base, href, encoding, directory)
        if target is not None and not anchors.get(target):
            anchors[target] = _anchor_text(element)  # first non-empty anchor, first position
    return (Outlink(url=u, anchor=a) for u, a in anchors.items())


def _anchor_text(element: etree._Element) -> str:
    text = text_of(element) if element.tag == "a" else ""
    if not text:
        alts = [img.get("alt", "") for img in element.iter("img")] + [element.get("alt", "")]
        text = collapse(" ".join(a for a in alts if a))
    return text or collapse(element.get("title", ""))


def _canonical(root: etree._Element, base: str, url: str) -> str:
    for link in root.iter("link"):
        if "canonical" not in (link.get("rel") or "").lower().split() or not link.get("href"):
            continue
        target = _resolve(base, link.get("href", ""), "utf-8")
        if target is None:
            return ""
        try:
            same = canonicalize(target) == canonicalize(url)
        except BadUrl:
            same = target == url
        return "" if same else target
    return ""
