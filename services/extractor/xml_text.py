"""Text of the XML parts of OOXML (docx, pptx) and OpenDocument (odt, odp) files,
read by streaming lxml over the part: only text runs, tabs, breaks and paragraph
ends are looked at, and each element is freed once read, so a 100 MB part costs
little memory. Not python-docx or odfpy: they build the whole tree and are slower for
the same text (docs/benchmarks.md, "Which library reads which format").
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from typing import IO

from lxml import etree

from services.extractor.extracted_text import DocumentLimits, DocumentSkipped, ExtractedText, TextSink
from services.extractor.zip_parts import Package, ZipIndex

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
DC = "{http://purl.org/dc/elements/1.1/}"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_HEADING_STYLE = re.compile(r"(?i)^(heading|title|标题|h\d)")
# Parsers that never fetch a DTD or expand an entity defined in the file (billion laughs).
_SAFE = {"resolve_entities": False, "no_network": True, "huge_tree": True}


def _events(
    part: IO[bytes], tags: tuple[str, ...], events: tuple[str, ...] = ("end",)
) -> Iterator[tuple[str, etree._Element]]:
    try:
        yield from etree.iterparse(part, events=events, tag=tags, **_SAFE)
    except etree.XMLSyntaxError as exc:
        raise DocumentSkipped("malformed", str(exc)) from None


_parsers = threading.local()


def _parser() -> etree.XMLParser:
    """This thread's safe parser: making one costs as much as parsing a metadata part,
    and lxml's parsers are not to be shared between threads."""
    parser: etree.XMLParser | None = getattr(_parsers, "parser", None)
    if parser is None:
        parser = _parsers.parser = etree.XMLParser(**_SAFE)
    return parser


def core_title(pkg: Package, name: str) -> str:
    """The package's metadata title (dc:title in the part ``name``), "" when it has none.
    A part without the word "title" in it has none and is not parsed (the parse cost a
    tenth of calamine's reading of a small spreadsheet), unless it holds NUL bytes
    (UTF-16 or UTF-32, where the word is not spelt in ASCII)."""
    if name not in pkg.names:
        return ""
    raw = pkg.read(name)
    if b"title" not in raw and b"\x00" not in raw:
        return ""
    try:
        root = etree.fromstring(raw, _parser())
    except etree.XMLSyntaxError:
        return ""
    found = root.find(f".//{DC}title")
    return (found.text or "").strip() if found is not None else ""


# --- docx


def read_docx(data: bytes, limits: DocumentLimits, zip_index: ZipIndex | None = None) -> ExtractedText:
    pkg = Package(data, limits.max_unzipped_bytes, zip_index)
    sink = TextSink(limits)
    headings: list[str] = []
    lines: list[str] = []
    run: list[str] = []
    style = ""
    with pkg.open("word/document.xml") as part:
        tags = (f"{W}p", f"{W}t", f"{W}tab", f"{W}br", f"{W}cr", f"{W}pStyle")
        for event, el in _events(part, tags, ("start", "end")):
            tag = el.tag
            if event == "start":
                if tag == f"{W}p":
                    run, style = [], ""
                continue
            if tag == f"{W}t":
                run.append(el.text or "")
            elif tag in (f"{W}tab",):
                run.append("\t")
            elif tag in (f"{W}br", f"{W}cr"):
                run.append("\n")
            elif tag == f"{W}pStyle":
                style = el.get(f"{W}val", "")
            elif tag == f"{W}p":
                text = "".join(run).strip()
                if text:
                    lines.append(text)
                    if _HEADING_STYLE.match(style):
                        headings.append(text)
                el.clear(keep_tail=False)
                if sum(map(len, lines)) > limits.max_chars:
                    break
    sink.page("\n".join(lines))
    title = core_title(pkg, "docProps/core.xml")
    return ExtractedText("docx", title, headings, sink.body(), 1, sink.cut)


# --- pptx


def _slide_parts(pkg: Package) -> list[str]:
    """Slide parts in the presentation's order (its sldIdLst through its relationships)."""
    rels = etree.fromstring(pkg.read("ppt/_rels/presentation.xml.rels"), etree.XMLParser(**_SAFE))
    targets = {r.get("Id"): r.get("Target", "") for r in rels.iter(f"{PKG_REL}Relationship")}
    pres = etree.fromstring(pkg.read("ppt/presentation.xml"), etree.XMLParser(**_SAFE))
    parts = []
    for sld in pres.iter(f"{P}sldId"):
        target = targets.get(sld.get(f"{R}id"), "")
        if target:
            parts.append(target.lstrip("/") if target.startswith("/") else f"ppt/{target}")
    return parts


def read_pptx(data: bytes, limits: DocumentLimits, zip_index: ZipIndex | None = None) -> ExtractedText:
    pkg = Package(data, limits.max_unzipped_bytes, zip_index)
    sink = TextSink(limits)
    try:
        slides = _slide_parts(pkg)
    except etree.XMLSyntaxError as exc:
        raise DocumentSkipped("malformed", str(exc)) from None
    headings = []
    for name in slides:
        if name not in pkg.names:
            continue
        paragraphs: list[str] = []
        run: list[str] = []
        with pkg.open(name) as part:
            for _, el in _events(part, (f"{A}p", f"{A}t", f"{A}br")):
                if el.tag == f"{A}t":
                    run.append(el.text or "")
                elif el.tag == f"{A}br":
                    run.append("\n")
                else:
                    text = "".join(run).strip()
                    if text:
                        paragraphs.append(text)
                    run = []
                    el.clear(keep_tail=False)
        if paragraphs:
            headings.append(paragraphs[0])
        if not sink.page("\n".join(paragraphs)):
            break
    return ExtractedText("pptx", core_title(pkg, "docProps/core.xml"), headings[:1], sink.body(), len(slides), sink.cut)


# --- odt, odp


def read_odf(data: bytes, limits: DocumentLimits, fmt: str, zip_index: ZipIndex | None = None) -> ExtractedText:
    """odt and odp (ods goes to the spreadsheet reader): paragraphs and headings of
    content.xml, a page per slide of a presentation."""
    pkg = Package(data, limits.max_unzipped_bytes, zip_index)
    sink = TextSink(limits)
    headings: list[str] = []
    page: list[str] = []
    pages = 0
    with pkg.open("content.xml") as part:
        for _, el in _events(part, (f"{TEXT}p", f"{TEXT}h", f"{DRAW}page")):
            if el.tag == f"{DRAW}page":
                pages += 1
                if not sink.page("\n".join(page)):
                    break
                page = []
                el.clear(keep_tail=False)
                continue
            text = _paragraph_text(el)
            if text:
                page.append(text)
                if el.tag == f"{TEXT}h":
                    headings.append(text)
            el.clear(keep_tail=True)  # an enclosing paragraph (a text box's) keeps its own text
            if sum(map(len, page)) > limits.max_chars:
                break
    if page or not pages:
        pages = max(pages, 1)
        sink.page("\n".join(page))
    return ExtractedText(fmt, core_title(pkg, "meta.xml"), headings, sink.body(), pages, sink.cut)


def _paragraph_text(el: etree._Element) -> str:
    """A finished paragraph's text: its spans' text in order, with the spaces, tabs and
    line breaks that ODF writes as elements."""
    out: list[str] = [el.text or ""]
    for child in el:
        out.append(_inline(child))
        out.append(child.tail or "")
    return "".join(out).strip()


def _inline(el: etree._Element) -> str:
    tag = el.tag
    if tag == f"{TEXT}s":
        return " " * int(el.get(f"{TEXT}c", "1") or 1)
    if tag == f"{TEXT}tab":
        return "\t"
    if tag == f"{TEXT}line-break":
        return "\n"
    if tag in (f"{TEXT}note", f"{OFFICE}annotation"):
        return ""
    out = [el.text or ""]
    for child in el:
        out.append(_inline(child))
        out.append(child.tail or "")
    return "".join(out)


Reader = Callable[[bytes, DocumentLimits], ExtractedText]
