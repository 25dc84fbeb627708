"""Remove page chrome (scripts, navigation, headers, sidebars...) from an HTML tree so
the text left is the page's own content.

Conservative on purpose: a search engine that drops an article's text loses the page,
while one that keeps a menu only indexes a few extra words.
"""

from __future__ import annotations

import re

from lxml import etree

from services.crawler.page_text import collapse, text_of

# Never page content.
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "math", "iframe", "object",
              "embed", "canvas", "select", "button", "nav", "aside", "form")
# <header>/<footer> inside an article are the article's own (byline, title): keep those.
_PAGE_CHROME_TAGS = ("header", "footer")
_CONTENT_TAGS = frozenset({"article", "main"})
# Words in an id/class that mark site chrome. Matched as whole words of the name,
# so "menu-item" matches but "menuiserie" or "content-navigator" do not.
_CHROME_WORDS = frozenset(
    {"nav", "navbar", "navigation", "navheader", "navfooter", "docnav", "topnav", "subnav", "menu",
     "menubar", "breadcrumb", "breadcrumbs", "crumbs", "sidebar", "footer", "header", "masthead",
     "skip", "skiplink", "share", "social", "cookie", "cookies", "banner", "pagination", "pager"}
)
# Names that mark chrome on one site and prose on another (DocBook's "sidebar" is a
# boxed note of the article): such an element stays when it holds prose, that is
# enough text of which little is links.
_AMBIGUOUS_WORDS = frozenset({"sidebar", "banner", "share"})
_MIN_LINK_DENSITY = 0.5
_OWN_TEXT = etree.XPath("descendant::text()[not(ancestor::a)]", smart_strings=False)
# Above this share of its text inside links, a whole page is a page of links.
LINK_PAGE_DENSITY = 0.6
_MIN_PROSE_CHARS = 80
# Chrome on an article, content on an index page: considered only after the rest is gone.
_WEAK_CHROME_WORDS = frozenset({"toc"})
_CHROME_NAME = re.compile(
    r"(?:^|(?<=[\s_-]))({})(?=$|[\s_-])".format("|".join(sorted(_CHROME_WORDS | _WEAK_CHROME_WORDS)))
)
# An id/class match is only a hint: an element holding more than this share of the
# text still left is the content (a documentation index is one big "toc").
_MAX_SHARE = {False: 0.8, True: 0.5}  # by "is the match weak"


def prune(root: etree._Element) -> None:
    """Drop chrome in place; the text that follows a dropped element stays."""
    doomed = list(root.iter(*_DROP_TAGS))
    doomed += [e for e in root.iter(*_PAGE_CHROME_TAGS) if not _inside_content(e)]
    doomed += [e for e in root.iter(etree.Element) if e.get("role") == "navigation"]  # 0.7 the XPath's time
    drop(doomed)
    _drop_chrome_by_name(root)


def drop(elements: list[etree._Element]) -> None:
    """Remove elements but keep their tail text, which belongs to the parent."""
    for element in elements:
        parent = element.getparent()
        if parent is None or element.tag in ("html", "body"):
            continue
        if element.tail:
            previous = element.getprevious()
            if previous is not None:
                previous.tail = (previous.tail or "") + element.tail
            else:
                parent.text = (parent.text or "") + element.tail
        parent.remove(element)


def _drop_chrome_by_name(root: etree._Element) -> None:
    """Smallest first, and never a block holding most of what is left: on a chapter
    index page the "toc" is the content, once the nav bars around it are gone."""
    found = _chrome_by_name(root)
    if not found:
        return
    remaining = len(text_of(root))
    ranked = sorted((weak, len(text_of(e)), i, e) for i, (e, weak) in enumerate(found))
    # Only a drop inside an element changes its text (a dropped element's tail stays
    # with its parent), so the size measured for ranking holds for every element no
    # dropped element was under. (ranked keeps the elements' proxies alive, so the
    # ancestors met below are the same objects.)
    changed: set[etree._Element] = set()
    for weak, size, _, element in ranked:
        ancestors = list(element.iterancestors())
        if not any(parent is root for parent in ancestors):
            continue  # already gone with a dropped ancestor
        if element in changed:
            size = len(text_of(element))
        if size <= remaining * _MAX_SHARE[weak]:
            drop([element])
            changed.update(ancestors)
            remaining -= size


def _chrome_by_name(root: etree._Element) -> list[tuple[etree._Element, bool]]:
    """Elements whose id/class names them as chrome, each with "is the match weak"."""
    found = []
    # A walk in Python reading two attributes finds the named elements in 0.6 the time
    # of the XPath //*[@id or @class] (88 of them a page on the LibreOffice help site).
    for element in root.iter(etree.Element):
        ident, cls = element.get("id"), element.get("class")
        if ident is None and cls is None:
            continue
        names = f"{ident or ''} {cls or ''}".lower()
        if _CHROME_NAME.search(names) is None:
            continue  # most named elements: one search, no set built
        if element.tag in ("html", "body", *_CONTENT_TAGS) or element.get("role") == "main":
            continue
        words = {m.group(1) for m in _CHROME_NAME.finditer(names)}
        if words <= _AMBIGUOUS_WORDS and _is_prose(element):
            continue
        if next(element.iterdescendants(*_CONTENT_TAGS), None) is None:
            found.append((element, words <= _WEAK_CHROME_WORDS))
    return found


def _is_prose(element: etree._Element) -> bool:
    """Enough text, little of it inside links: a note or a box, not a menu or a widget."""
    total = len(text_of(element))
    if total < _MIN_PROSE_CHARS:
        return False
    linked = sum(len(text_of(a)) for a in element.iter("a"))
    return linked / total < _MIN_LINK_DENSITY


def _inside_content(element: etree._Element) -> bool:
    return any(parent.tag in _CONTENT_TAGS for parent in element.iterancestors())


def link_page_text(root: etree._Element) -> str | None:
    """The page's own text if it is a page of links (a front page, an index, a tag
    cloud: most of its text inside links), else None.

    Such a page's link texts are other pages' titles, not what it says itself: the
    index takes its words from its own text only, so it is found by them and does not
    outrank the pages it lists; readers still see the links in its snippet. Run after
    ``prune``, on a tree ``body_text`` has not yet consumed.
    """
    body = root.find("body")
    body = body if body is not None else root
    total = len(text_of(body))
    linked = sum(len(text_of(a)) for a in body.iter("a"))
    if total == 0 or linked / total < LINK_PAGE_DENSITY:
        return None
    # Text nodes outside links, one space apart: a copy of the tree would double the
    # memory of a page of 100,000 links for text that only feeds the index.
    return collapse(" ".join(_OWN_TEXT(body)))
