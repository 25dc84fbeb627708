"""What extraction makes of one document, and the caps it is held to while it is made.

Each format's reader hands its text to a ``TextSink`` a piece at a time, so that the
character and page caps stop a reader early (a 2,000-page PDF is not read to its end
only to be cut), and every cap that cut something is named for ``tansuo report``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Between two pages of a paged document (PDF, slides): the page of a snippet is the
# number of these before it, plus one (services/search/document_results.py).
PAGE_BREAK = "\f"
_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
# A line break between two Chinese characters is where a line of a page wrapped, not
# a word break (the same rule as services/crawler/page_text.py): joined, so that a
# phrase over the wrap is found.
_CJK_WRAP = re.compile(rf"(?<=[{_CJK}])[ \t]*\r?\n[ \t]*(?=[{_CJK}])")
_SPACES = re.compile(r"[ \t\u00a0\u3000]+")
# A table of contents's dot leaders ("2.1 软件包管理 . . . . . . 35"): one ellipsis, so a
# snippet shows the entry rather than a line of dots.
_LEADER = re.compile(r"(?:[ \t]*[.．·][ \t]*){4,}")


class DocumentSkipped(Exception):
    """The document cannot be read: ``reason`` is one short snake_case word
    (encrypted, malformed, zip_bomb, unknown_format, timeout, ...) for the report."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True)
class DocumentLimits:
    max_pages: int = 2000  # pages (or slides, or sheets) read
    max_chars: int = 500_000  # characters of text kept
    max_unzipped_bytes: int = 200 * 1024 * 1024  # the parts of an OOXML/ODF package read, inflated


@dataclass
class ExtractedText:
    format: str
    title: str = ""  # from the file's metadata, "" when it has none worth showing
    headings: list[str] = field(default_factory=list)
    body: str = ""  # pages separated by PAGE_BREAK
    pages: int = 0  # pages (slides, sheets) the document has, read or not
    limits: list[str] = field(default_factory=list)  # caps that cut it: document_pages, document_chars


class TextSink:
    """Collects a document's text within the caps; ``full`` tells a reader to stop."""

    def __init__(self, limits: DocumentLimits) -> None:
        self._limits = limits
        self._pages: list[str] = []
        self._chars = 0
        self.cut: list[str] = []

    @property
    def full(self) -> bool:
        return bool(self.cut)

    def page(self, text: str, wrapped: bool = False, tidied: bool = False) -> bool:
        """Add one page's text; False once a cap is reached (the reader stops).
        ``wrapped``: its lines are a page's laid-out lines (PDF), not paragraphs.
        ``tidied``: the reader made it as ``tidy`` would (single spaces, no blank or
        padded lines), so it is not gone over again."""
        if self.full:
            return False
        if len(self._pages) >= self._limits.max_pages:
            self.cut.append("document_pages")
            return False
        if not tidied:
            text = tidy(text, wrapped)
        room = self._limits.max_chars - self._chars
        if len(text) > room:
            text = text[:room]
            self.cut.append("document_chars")
        self._pages.append(text)
        self._chars += len(text) + 1
        return not self.full

    @property
    def pages_read(self) -> int:
        return len(self._pages)

    def body(self) -> str:
        return PAGE_BREAK.join(self._pages).strip(" \n")


def tidy(text: str, wrapped: bool = False) -> str:
    """One page's text: runs of spaces as one, dot leaders as one ellipsis, no empty
    lines, and with ``wrapped`` the line wraps inside Chinese joined."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace(PAGE_BREAK, "\n")
    if wrapped:
        text = _CJK_WRAP.sub("", text)
    text = _SPACES.sub(" ", _LEADER.sub(" … ", text))
    return "\n".join(filter(None, map(str.strip, text.split("\n"))))
