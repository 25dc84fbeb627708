"""One document's bytes to its text: format by magic and type, then its reader.

A pure function of (bytes, type, URL, caps), run inside an extraction worker process
(services/extractor/extraction_pool.py), never on the crawler's thread.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from services.extractor import ole_text, plain_text, xml_text
from services.extractor.document_title import first_line, real_title
from services.extractor.document_types import Identified, identify_document
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
    identified = identify_document(data, content_type, url)
    try:
        found = _READERS[identified.format](data, content_type, limits, ocr, identified)
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


# format -> reader(data, content_type, limits, ocr, what identification opened), built
# once: a table of closures made per document cost more than a small sheet's row.
_Reader = Callable[[bytes, str, DocumentLimits, "PageOcr | None", Identified], ExtractedText]
_READERS: dict[str, _Reader] = {
    "pdf": lambda data, ct, limits, ocr, found: read_pdf(data, limits, ocr),
    "docx": lambda data, ct, limits, ocr, found: xml_text.read_docx(data, limits, found.zip_index),
    "pptx": lambda data, ct, limits, ocr, found: xml_text.read_pptx(data, limits, found.zip_index),
    "odt": lambda data, ct, limits, ocr, found: xml_text.read_odf(data, limits, "odt", found.zip_index),
    "odp": lambda data, ct, limits, ocr, found: xml_text.read_odf(data, limits, "odp", found.zip_index),
    "xlsx": lambda data, ct, limits, ocr, found: read_sheets(data, limits, "xlsx", "docProps/core.xml", zip_index=found.zip_index),
    "ods": lambda data, ct, limits, ocr, found: read_sheets(data, limits, "ods", "meta.xml", zip_index=found.zip_index),
    "xls": lambda data, ct, limits, ocr, found: read_sheets(data, limits, "xls", title=found.title),
    "et": lambda data, ct, limits, ocr, found: read_sheets(data, limits, "et", title=found.title),
    "doc": lambda data, ct, limits, ocr, found: ole_text.read_word(data, limits, "doc"),
    "wps": lambda data, ct, limits, ocr, found: ole_text.read_word(data, limits, "wps"),
    "ppt": lambda data, ct, limits, ocr, found: ole_text.read_powerpoint(data, limits, "ppt"),
    "dps": lambda data, ct, limits, ocr, found: ole_text.read_powerpoint(data, limits, "dps"),
    "rtf": lambda data, ct, limits, ocr, found: plain_text.read_rtf(data, limits),
    "txt": lambda data, ct, limits, ocr, found: plain_text.read_text(data, limits, ct, "txt"),
    "csv": lambda data, ct, limits, ocr, found: plain_text.read_text(data, limits, ct, "csv"),
}  # fmt: skip
