"""Text of PDFs through pypdfium2 (PDFium, Apache-2.0/BSD-3), page by page.

PDFium was the fastest of the candidates on the same Chinese PDFs, matched poppler's
pdftotext character for character where both had ToUnicode maps, and is what Chrome
renders PDFs with (docs/benchmarks.md, "Which library reads which format"). PyMuPDF,
faster still by some reports, is AGPL and cannot be a default dependency. A page with no
text layer is passed to ``ocr`` when OCR is on (services/extractor/ocr.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pypdfium2 as pdfium

from services.extractor.extracted_text import DocumentLimits, DocumentSkipped, ExtractedText, TextSink

# A page whose text layer holds fewer characters than this is taken for a scan.
_SCANNED_BELOW_CHARS = 16
# A text layer mostly of control or private-use characters is glyph numbers, not text:
# a CJK font without a ToUnicode map, which no PDF library can read (docs/benchmarks.md).
_UNREADABLE_SHARE = 0.3
_GLYPH_NUMBERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ue000-\uf8ff\ufffd]+")

PageOcr = Callable[["pdfium.PdfPage"], str]


def read_pdf(data: bytes, limits: DocumentLimits, ocr: PageOcr | None = None) -> ExtractedText:
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        text = str(exc).lower()
        raise DocumentSkipped("encrypted" if "password" in text else "malformed", str(exc)) from None
    try:
        pages = len(pdf)
        if pages <= 0:
            raise DocumentSkipped("malformed", "no pages")
        title = _title(pdf)
        sink = TextSink(limits)
        ocred = unreadable = 0
        for number in range(pages):
            text = _page_text(pdf, number)
            if not readable(text):
                text = ""
                unreadable += 1
            if ocr is not None and len(text.strip()) < _SCANNED_BELOW_CHARS:
                page = pdf[number]
                try:
                    text = ocr(page) or text
                    ocred += 1
                finally:
                    page.close()
            if not sink.page(text, wrapped=True):
                break
        limits_hit = sink.cut + (["document_ocr"] if ocred else []) + (["document_unreadable"] if unreadable else [])
        return ExtractedText("pdf", title, [], sink.body(), pages, limits_hit)
    finally:
        pdf.close()


def readable(text: str) -> bool:
    """False for a text layer that is mostly glyph numbers (see _UNREADABLE_SHARE). Runs
    of such characters are counted by one regex: a loop over a page's characters in
    Python cost a third of PDFium's own time per page."""
    bad = sum(map(len, _GLYPH_NUMBERS.findall(text)))
    return bad <= _UNREADABLE_SHARE * len(text.strip())


def _page_text(pdf: pdfium.PdfDocument, number: int) -> str:
    """One page's text; a page PDFium cannot load (a damaged object) reads as empty."""
    try:
        page = pdf[number]
    except pdfium.PdfiumError:
        return ""
    try:
        textpage = page.get_textpage()
        try:
            return str(textpage.get_text_range())
        finally:
            textpage.close()
    except pdfium.PdfiumError:
        return ""
    finally:
        page.close()


def _title(pdf: pdfium.PdfDocument) -> str:
    try:
        return str(pdf.get_metadata_dict().get("Title", "")).strip("\x00 ").strip()
    except pdfium.PdfiumError:
        return ""
