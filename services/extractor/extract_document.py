"""One document's bytes to its text: format by magic and type, then its reader.

A pure function of (bytes, type, URL, caps), run inside an extraction worker process
(services/extractor/extraction_pool.py), never on the crawler's thread.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from services.extractor import ole_text, plain_text, xml_text
from services.extractor.document_title import first_line, real_title
from services.extractor.document_types import identify_with_title
from services.extractor.extracted_text import DocumentLimits, DocumentSkipped, ExtractedText
from services.extractor.pdf_text import PageOcr, read_pdf
from services.extractor.sheet_text import read_sheets

DEFAULT_LIMITS = DocumentLimits()


def extract_document(
    data: bytes, content_type: str = "", url: str = "", limits: DocumentLimits = DEFAULT_LIMITS,
    ocr: PageOcr | None = None,
) -> ExtractedText:  # fmt: skip
    """The document's text, title and page count; DocumentSkipped with a reason when
    it cannot be read (encrypted, malformed, zip_bomb, unknown_format)."""
    fmt, ole_title = identify_with_title(data, content_type, url)
    try:
        found = _read(fmt, data, content_type, limits, ocr, ole_title)
    except DocumentSkipped:
        raise
    except (MemoryError, RecursionError, zlib.error, UnicodeError, ValueError, KeyError, EOFError) as exc:
        # A reader's own parser gave up on a damaged file: malformed, whatever the library.
        raise DocumentSkipped("malformed", f"{type(exc).__name__}: {exc}"[:300]) from None
    found.title = real_title(found.title)
    found.headings = [h for h in (" ".join(h.split()) for h in found.headings) if h]
    if not found.headings:
        line = first_line(found.body)
        found.headings = [line] if line else []
    if not found.body or found.body.isspace():  # (strip would copy the body)
        raise DocumentSkipped("no_text", "the document holds no text (a scan? see TANSUO_DOCUMENTS_OCR)")
    return found


def _read(
    fmt: str, data: bytes, content_type: str, limits: DocumentLimits, ocr: PageOcr | None, ole_title: str
) -> ExtractedText:
    return _READERS[fmt](data, content_type, limits, ocr, ole_title)


# format -> reader(data, content_type, limits, ocr, the OLE title identification read),
# built once: a table of closures made per document cost more than a small sheet's row.
_Reader = Callable[[bytes, str, DocumentLimits, "PageOcr | None", str], ExtractedText]
_READERS: dict[str, _Reader] = {
    "pdf": lambda data, ct, limits, ocr, title: read_pdf(data, limits, ocr),
    "docx": lambda data, ct, limits, ocr, title: xml_text.read_docx(data, limits),
    "pptx": lambda data, ct, limits, ocr, title: xml_text.read_pptx(data, limits),
    "odt": lambda data, ct, limits, ocr, title: xml_text.read_odf(data, limits, "odt"),
    "odp": lambda data, ct, limits, ocr, title: xml_text.read_odf(data, limits, "odp"),
    "xlsx": lambda data, ct, limits, ocr, title: read_sheets(data, limits, "xlsx", "docProps/core.xml"),
    "ods": lambda data, ct, limits, ocr, title: read_sheets(data, limits, "ods", "meta.xml"),
    "xls": lambda data, ct, limits, ocr, title: read_sheets(data, limits, "xls", title=title),
    "et": lambda data, ct, limits, ocr, title: read_sheets(data, limits, "et", title=title),
    "doc": lambda data, ct, limits, ocr, title: ole_text.read_word(data, limits, "doc"),
    "wps": lambda data, ct, limits, ocr, title: ole_text.read_word(data, limits, "wps"),
    "ppt": lambda data, ct, limits, ocr, title: ole_text.read_powerpoint(data, limits, "ppt"),
    "dps": lambda data, ct, limits, ocr, title: ole_text.read_powerpoint(data, limits, "dps"),
    "rtf": lambda data, ct, limits, ocr, title: plain_text.read_rtf(data, limits),
    "txt": lambda data, ct, limits, ocr, title: plain_text.read_text(data, limits, ct, "txt"),
    "csv": lambda data, ct, limits, ocr, title: plain_text.read_text(data, limits, ct, "csv"),
}
