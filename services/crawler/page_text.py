"""Visible text of an HTML tree, laid out the way a reader sees it: one line per block
element, single spaces, and Chinese line wraps joined without a space."""

from __future__ import annotations

import re

from lxml import etree

_INLINE_TAGS = frozenset(
    {"a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font",
     "i", "img", "ins", "kbd", "label", "mark", "nobr", "q", "rp", "rt", "ruby", "s", "samp",
     "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr"}
)
# Spaces that collapse to one " ": a run of any of them becomes a single space.
_SPACE_CHARS = " \t\r\f\v\u00a0\u3000\u200b"
_SPACE_RUN = re.compile("  +")
_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
# A source newline between two Chinese characters is line wrapping, not a word break
# (CSS Text 3 segment-break rules); anywhere else it is a space.
_CJK_WRAP = re.compile(rf"(?<=[{_CJK}])[ \t\r]*\n\s*(?=[{_CJK}])")
# Line breaks the text serialiser must keep, as private-use characters (a page that
# happens to contain one only gains a line break).
_BLOCK_BREAK, _PRE_BREAK = "\ue000", "\ue001"
_LINE_BREAKS = re.compile("[\ue000\ue001]+")


def collapse(text: str) -> str:
    """One line, single spaces; Chinese line wraps joined without a space."""
    if "\n" in text:  # the wrap pattern needs one; most anchor texts and titles have none
        text = _CJK_WRAP.sub("", text).replace("\n", " ")
    return _single_spaces(text).strip()


def _single_spaces(text: str) -> str:
    """Every run of ``_SPACE_CHARS`` as one " ". The other space characters become " "
    by str.replace, then runs of " " shrink by a pattern that starts with a literal:
    the same string as one regex over the character class, which re scans character
    by character, in about a third of the time on the three sites' texts."""
    for ch in _SPACE_CHARS[1:]:
        if ch in text:
            text = text.replace(ch, " ")
    return _SPACE_RUN.sub(" ", text) if "  " in text else text


def text_of(element: etree._Element) -> str:
    """All text under an element, collapsed to one line."""
    return collapse(raw_text(element))


def raw_text(element: etree._Element) -> str:
    """``"".join(element.itertext())``, serialised by libxml2 in one call: the same string
    (every element of the demo, GIMP and LibreOffice sites compared), about five times
    faster than joining the text nodes in Python. The tree has no comments or
    processing instructions (``extract._parse`` drops them), whose text would count."""
    return etree.tostring(element, method="text", encoding="unicode", with_tail=False)


def body_text(root: etree._Element) -> str:
    """Text with a line break around every block element, so words never glue together.

    Destructive: it marks blocks with private-use characters in the tree and then lets
    libxml2 serialise the text, because a Python walk over every node costs several
    times more on long pages. Call it last.
    """
    body = root.find("body")
    body = body if body is not None else root
    _mark_preformatted(body)
    for element in body.iter(etree.Element):
        if element.tag not in _INLINE_TAGS:
            element.text = _BLOCK_BREAK + (element.text or "")
            element.tail = _BLOCK_BREAK + (element.tail or "")
    text = etree.tostring(body, method="text", encoding="unicode", with_tail=False)
    # Spaces collapse over the whole text at once, not line by line (150 calls a page):
    # a run of them never spans a line break, which is no space character.
    text = _single_spaces(_CJK_WRAP.sub("", text).replace("\n", " "))
    lines = (line.strip() for line in _LINE_BREAKS.split(text))
    return "\n".join(line for line in lines if line)


def _mark_preformatted(body: etree._Element) -> None:
    # <pre> keeps its line breaks: code and terminal output read badly on one line.
    for pre in body.iter("pre"):
        for node in pre.iter():
            if node.text:
                node.text = node.text.replace("\n", _PRE_BREAK)
            if node is not pre and node.tail:
                node.tail = node.tail.replace("\n", _PRE_BREAK)
