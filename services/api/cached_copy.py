"""A result's cached copy: the page as the crawler fetched it, made safe to show.

The raw bytes come from the page store, decoded as the crawler decoded them. Scripts,
meta refreshes and ``<base>`` are removed and a ``<base>`` of the page's own URL is
put in, so that its images and styles load and its links lead to the live site, in a
new tab. The copy is served with a Content-Security-Policy that sandboxes it (no
script runs, no form submits, nothing reaches our origin's cookies), whether it is
opened in the frame of the cache page or on its own. A page that asks not to be kept
(``noarchive`` in its robots meta tag or X-Robots-Tag) has no cached copy.
"""

from __future__ import annotations

from collections.abc import Mapping

import lxml.html
from lxml import etree

from services.crawler.charset import decode_html
from services.crawler.robots_directives import BOT_NAME

# The copy's own policy: a sandbox without scripts, and only what a page needs to look
# like itself (images, styles, fonts, media from anywhere); links open in a new tab.
CSP = (
    "sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none'; "
    "img-src http: https: data:; style-src http: https: 'unsafe-inline'; font-src http: https: data:; "
    "media-src http: https:; base-uri http: https:; form-action 'none'; frame-ancestors 'self'"
)
_DROPPED = ("script", "base", "iframe", "frame", "frameset", "object", "embed", "applet")
_SHOWN_TYPES = ("text/html", "application/xhtml+xml", "")


def _header(headers: Mapping[str, str], name: str) -> str:
    return next((v for k, v in headers.items() if k.lower() == name), "")


def _noarchive(words: str, agent_prefixed: bool = False) -> bool:
    for part in words.split(","):
        name, colon, rest = part.partition(":")
        if agent_prefixed and colon and name.strip().lower() not in ("", BOT_NAME):
            continue
        if (rest if colon and agent_prefixed else part).strip().lower() == "noarchive":
            return True
    return False


def refuses_archiving(headers: Mapping[str, str], root: etree._Element | None) -> bool:
    """Whether the page says ``noarchive`` to every crawler or to us."""
    if _noarchive(_header(headers, "x-robots-tag"), agent_prefixed=True):
        return True
    if root is not None:
        for meta in root.iter("meta"):
            if (meta.get("name") or "").strip().lower() in ("robots", BOT_NAME) and _noarchive(meta.get("content") or ""):
                return True
    return False


def showable(headers: Mapping[str, str]) -> bool:
    """Whether the stored response is a web page (a cached PDF is not shown here)."""
    return _header(headers, "content-type").split(";")[0].strip().lower() in _SHOWN_TYPES


def parse(body: bytes, headers: Mapping[str, str]) -> etree._Element | None:
    text, _ = decode_html(body, _header(headers, "content-type"))
    if not text.strip():
        return None
    try:
        return lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError):
        return None


def safe_copy(root: etree._Element, url: str) -> str:
    """The page as HTML text with scripts and the like taken out and its own URL as
    the base of its links."""
    for element in list(root.iter(*_DROPPED)):
        element.drop_tree()
    for meta in list(root.iter("meta")):
        if (meta.get("http-equiv") or "").strip().lower() in ("refresh", "set-cookie", "content-security-policy"):
            meta.drop_tree()
    for element in root.iter():
        for name in [a for a in element.attrib if a.lower().startswith("on")]:
            del element.attrib[name]
    head = root.find("head")
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    base = etree.Element("base", href=url, target="_blank")
    charset = etree.Element("meta", charset="utf-8")
    for meta in list(head.iter("meta")):
        if meta.get("charset") is not None or (meta.get("http-equiv") or "").lower() == "content-type":
            meta.drop_tree()
    head.insert(0, base)
    head.insert(0, charset)
    return "<!doctype html>\n" + lxml.html.tostring(root, encoding="unicode", method="html")
