"""Text of RTF, plain-text and CSV files.

RTF goes through striprtf (BSD-3), told the file's ANSI code page (``\\ansicpg936``
for GBK), since Chinese RTF writes characters as ``\\'xx`` byte pairs in it or as
``\\uN`` escapes. Plain text and CSV are decoded as the crawler decodes pages
(services/crawler/charset.py: BOM, declared charset, then detection), because
Chinese sites still publish GBK text files, labelled or not.
"""

from __future__ import annotations

import csv
import io
import re

from striprtf.striprtf import rtf_to_text

from services.crawler.charset import decode_html
from services.extractor.extracted_text import DocumentLimits, DocumentSkipped, ExtractedText, TextSink

_ANSI_CODE_PAGE = re.compile(rb"\\ansicpg(\d+)")
# The title in the info group; LibreOffice writes it twice, the Unicode copy in \\ud.
_RTF_TITLES = (re.compile(rb"\\ud\s*{\\title\s?([^}]*)}"), re.compile(rb"{\\title\s?([^}]*)}"))


def read_rtf(data: bytes, limits: DocumentLimits) -> ExtractedText:
    found = _ANSI_CODE_PAGE.search(data[:4096])
    encoding = f"cp{int(found.group(1))}" if found else "cp1252"
    try:
        "".encode(encoding)
    except LookupError:
        encoding = "cp1252"
    source = data.decode("latin-1")  # RTF is 7-bit; anything else is kept byte for byte
    try:
        text = rtf_to_text(source, encoding=encoding, errors="replace")
    except (ValueError, IndexError, RecursionError) as exc:
        raise DocumentSkipped("malformed", str(exc)) from None
    title = ""
    match = _RTF_TITLES[0].search(data[:65536]) or _RTF_TITLES[1].search(data[:65536])
    if match:
        title = rtf_to_text("{\\rtf1 " + match.group(1).decode("latin-1") + "}", encoding=encoding, errors="replace")
    sink = TextSink(limits)
    sink.page(text)
    return ExtractedText("rtf", title.strip(), [], sink.body(), 1, sink.cut)


def read_text(data: bytes, limits: DocumentLimits, content_type: str, fmt: str) -> ExtractedText:
    if b"\x00" in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentSkipped("unknown_format", "binary bytes in a text file")
    text, _ = decode_html(data[: limits.max_chars * 4], content_type)
    if fmt == "csv":
        rows = csv.reader(io.StringIO(text))
        try:
            text = "\n".join("\t".join(c.strip() for c in row if c.strip()) for row in rows)
        except csv.Error as exc:
            raise DocumentSkipped("malformed", str(exc)) from None
    sink = TextSink(limits)
    sink.page(text)
    return ExtractedText(fmt, "", [], sink.body(), 1, sink.cut)
