"""OCR on: a scanned Chinese page (a real page rendered to an image, wrapped in an
image-only PDF) is read by Tesseract, and a phrase of it finds the document."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from bench.sites.document_site import convert
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.common.domain.messages import PageEvent
from services.extractor.extract_document import extract_document
from services.extractor.extracted_text import DocumentSkipped
from services.extractor.ocr import page_ocr
from services.indexer.document_builder import build_document
from services.search.search_service import SearchService

pytestmark = pytest.mark.skipif(
    shutil.which("tesseract") is None or shutil.which("soffice") is None,
    reason="tesseract and LibreOffice (scripts/install.sh test installs them)",
)
LINES = ("北京大学二〇二六年硕士研究生招生简章", "报名时间为十月十日至十月三十日", "考生须在网上完成报名和缴费")


def _scanned_pdf(tmp_path: Path) -> bytes:
    """Pages LibreOffice lays out, rendered at 150 dpi, as the only thing in a PDF."""
    import pypdfium2 as pdfium

    source = tmp_path / "page.html"
    paragraphs = "".join(f"<h2>{line}</h2>" for line in LINES)
    # A heading too: LibreOffice lays out a page of only short paragraphs as an empty one.
    html = f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>简章</title></head><body><h1>招生简章</h1>{paragraphs}'
    source.write_text(html + "</body></html>", "utf-8")
    convert([source], "pdf:writer_pdf_Export", tmp_path / "out")
    pdf = pdfium.PdfDocument(str(tmp_path / "out" / "page.pdf"))  # held: a page of a closed PDF renders blank
    # Every page (LibreOffice may start this one with an empty page), each a copy made
    # while the bitmap it views is alive.
    images = [pdf[n].render(scale=150 / 72, grayscale=True).to_pil().convert("L") for n in range(len(pdf))]
    buf = io.BytesIO()
    images[0].save(buf, "PDF", resolution=150, save_all=True, append_images=images[1:])
    return buf.getvalue()


def test_a_scan_has_no_text_without_ocr_and_is_found_by_a_phrase_with_it(tmp_path: Path) -> None:
    scan = _scanned_pdf(tmp_path)
    with pytest.raises(DocumentSkipped) as caught:
        extract_document(scan, "application/pdf")
    assert caught.value.reason == "no_text"
    cfg = Settings(data_dir=tmp_path, documents_ocr=True, documents_ocr_languages="chi_sim", documents_ocr_dpi=150)
    text = extract_document(scan, "application/pdf", ocr=page_ocr(cfg))
    assert "document_ocr" in text.limits
    event = PageEvent(url="http://example.cn/scan.pdf", host="example.cn", lease_id="", status=200, document="pdf",
                      extracted=True, title=text.title, headings=text.headings, body=text.body, pages=text.pages)  # fmt: skip
    index = TantivySearchIndex(tmp_path / "index", cfg)
    index.upsert([build_document(event)])
    index.commit()
    results = SearchService(cfg, index).search('"报名时间为十月十日"')["results"]
    assert [r["url"] for r in results] == ["http://example.cn/scan.pdf"], text.body
