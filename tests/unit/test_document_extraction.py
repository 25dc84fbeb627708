"""Documents: format detection, each reader on small files made here, the caps, the
title rule and the hostile files. Files LibreOffice makes from real pages are read in
tests/e2e/test_document_crawl.py; these need no program but Python."""

from __future__ import annotations

import io
import zipfile

import pytest

from bench.sites.document_site import _pdf, large_pdf, looping_pdf, truncated_pdf, zip_bomb_docx
from services.extractor.document_title import first_line, real_title
from services.extractor.document_types import NotADocument, document_family, identify, may_be_document
from services.extractor.extract_document import extract_document
from services.extractor.extracted_text import PAGE_BREAK, DocumentLimits, DocumentSkipped, TextSink, tidy
from services.extractor.pdf_text import readable

TEXT = "北京大学二〇二六年硕士研究生招生简章，报名时间为十月。"


def _zip(parts: dict[str, str], first: str = "") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        if first:
            z.writestr("mimetype", first, compress_type=zipfile.ZIP_STORED)
        for name, text in parts.items():
            z.writestr(name, text)
    return buf.getvalue()


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _docx(paragraphs: list[tuple[str, str]], title: str = "") -> bytes:
    body = "".join(
        f'<w:p><w:pPr><w:pStyle w:val="{style}"/></w:pPr><w:r><w:t>{text[:5]}</w:t></w:r><w:r><w:t>{text[5:]}</w:t></w:r></w:p>'
        for style, text in paragraphs
    )
    core = (f'<cp:coreProperties xmlns:cp="x" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title>'
            "</cp:coreProperties>")  # fmt: skip
    return _zip({"word/document.xml": f"<w:document {W}><w:body>{body}</w:body></w:document>", "docProps/core.xml": core})


def _odt(paragraphs: list[str]) -> bytes:
    ns = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    body = "".join(f"<text:p>{p[:3]}<text:span>{p[3:]}</text:span></text:p>" for p in paragraphs)
    content = f"<office:document-content {ns}><office:body><office:text><text:h>标题</text:h>{body}</office:text></office:body></office:document-content>"
    return _zip({"content.xml": content}, first="application/vnd.oasis.opendocument.text")


# --- detection


def test_a_document_is_known_by_its_first_bytes_whatever_type_the_server_declares() -> None:
    assert document_family("application/octet-stream", b"%PDF-1.7\n") == "pdf"
    assert document_family("text/html; charset=utf-8", b"%PDF-1.4") == "pdf"
    assert document_family("", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1") == "ole"
    assert document_family("application/octet-stream", b"PK\x03\x04") == "zip"
    assert document_family("text/plain; charset=gbk", b"hello") == "text"


def test_an_extension_or_a_type_alone_makes_no_document() -> None:
    assert document_family("application/pdf", b"<!DOCTYPE html><html>") is None
    assert document_family("text/html", b"<html>") is None
    assert document_family("application/java-archive", b"PK\x03\x04") is None  # a ZIP of another kind
    assert document_family("image/png", b"\x89PNG\r\n\x1a\n") is None


def test_identify_opens_the_package_to_tell_formats_of_one_family_apart() -> None:
    assert identify(_docx([("", TEXT)])) == "docx"
    assert identify(_odt([TEXT])) == "odt"
    assert identify(_zip({"xl/workbook.xml": "<x/>"})) == "xlsx"
    assert identify(_zip({"ppt/presentation.xml": "<x/>"})) == "pptx"
    with pytest.raises(NotADocument):
        identify(_zip({"readme.txt": "x"}))


def test_the_size_cap_of_a_document_applies_to_document_and_unlabelled_types_only() -> None:
    assert may_be_document("application/pdf") and may_be_document("application/octet-stream")
    assert not may_be_document("text/html; charset=utf-8") and not may_be_document("")


# --- readers


def test_docx_paragraphs_headings_and_title_are_read_across_runs() -> None:
    found = extract_document(_docx([("Heading1", "第一章 总则"), ("", TEXT)], title="招生简章"))
    assert found.format == "docx" and found.title == "招生简章"
    assert found.headings == ["第一章 总则"]
    assert TEXT in found.body


def test_odt_text_inside_spans_is_kept_in_order() -> None:
    found = extract_document(_odt([TEXT, "第二段"]))
    assert TEXT in found.body.split("\n") and found.headings == ["标题"]


def test_gb18030_text_without_a_charset_is_detected() -> None:
    found = extract_document((TEXT * 5).encode("gb18030"), "text/plain")
    assert TEXT in found.body


def test_csv_rows_are_lines_of_their_cells() -> None:
    found = extract_document("姓名,学院\n张三,数学学院\n".encode(), "text/csv")
    assert found.format == "csv" and "张三 数学学院" in found.body.split("\n")


def _ods(rows: list[list[tuple[str, str]]]) -> bytes:
    """A spreadsheet of (type, value) cells: "string" cells hold their text, "float"
    cells their number, "" an empty cell."""
    ns = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"')  # fmt: skip

    def cell(kind: str, value: str) -> str:
        if kind == "float":
            return f'<table:table-cell office:value-type="float" office:value="{value}"><text:p>{value}</text:p></table:table-cell>'
        if kind == "string":
            paragraphs = "".join(f"<text:p>{p}</text:p>" for p in value.split("\n"))
            return f'<table:table-cell office:value-type="string">{paragraphs}</table:table-cell>'
        return "<table:table-cell/>"

    body = "".join("<table:table-row>" + "".join(cell(k, v) for k, v in row) + "</table:table-row>" for row in rows)
    content = (f"<office:document-content {ns}><office:body><office:spreadsheet><table:table table:name=\"表1\">"
               f"{body}</table:table></office:spreadsheet></office:body></office:document-content>")  # fmt: skip
    manifest = ('<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
                "</manifest:manifest>")  # fmt: skip
    return _zip({"content.xml": content, "META-INF/manifest.xml": manifest},
                first="application/vnd.oasis.opendocument.spreadsheet")  # fmt: skip


def test_a_spreadsheet_row_is_one_line_of_its_cells_numbers_written_as_typed() -> None:
    data = _ods([
        [("string", "姓名"), ("", ""), ("string", "  学院  "), ("float", "6"), ("float", "2.5")],
        [("string", "张三"), ("string", "数学\n学院"), ("string", " "), ("", ""), ("float", "1")],
        [("", ""), ("string", "  "), ("", "")],
    ])  # fmt: skip
    found = extract_document(data, "application/octet-stream")
    assert found.format == "ods" and found.body == "姓名 学院 6 2.5\n张三 数学 学院 1"


def test_rtf_unicode_escapes_and_code_page_bytes_are_decoded() -> None:
    escaped = "".join(f"\\u{ord(c)}?" for c in "招生简章")
    gbk = "".join(f"\\'{b:02x}" for b in "报名时间".encode("gbk"))
    rtf = f"{{\\rtf1\\ansi\\ansicpg936 {{\\info{{\\title {escaped}}}}}{escaped}\\par {gbk}\\par}}".encode()
    found = extract_document(rtf, "application/rtf")
    assert "招生简章" in found.body and "报名时间" in found.body


def test_a_pdf_page_becomes_a_page_of_the_body() -> None:
    data = _pdf([b"BT /F1 24 Tf 72 720 Td (Admission brochure 2026) Tj ET"])
    found = extract_document(data, "application/pdf")
    assert found.format == "pdf" and found.pages == 1 and "Admission brochure 2026" in found.body


def test_glyph_numbers_are_not_text() -> None:
    assert not readable("\x01\x02\x03\x04 \x05\x06")
    assert readable("招生简章 2026")


# --- caps and the title rule


def test_the_page_and_character_caps_cut_and_say_so() -> None:
    sink = TextSink(DocumentLimits(max_pages=2, max_chars=10_000))
    assert sink.page("一") and sink.page("二") is True
    assert sink.page("三") is False and sink.cut == ["document_pages"]
    assert sink.body() == f"一{PAGE_BREAK}二"
    chars = TextSink(DocumentLimits(max_chars=5))
    chars.page(TEXT)
    assert chars.cut == ["document_chars"] and len(chars.body()) == 5


def test_line_wraps_inside_chinese_are_joined_on_laid_out_pages_only() -> None:
    assert tidy("硕士研究\n生招生", wrapped=True) == "硕士研究生招生"
    assert tidy("第一段。\n第二段", wrapped=False) == "第一段。\n第二段"
    assert tidy("Debian\nsystem", wrapped=True) == "Debian\nsystem"
    assert tidy("2.1 软件包管理 . . . . . . . . 35\n2.1.1 配置.........36") == "2.1 软件包管理 … 35\n2.1.1 配置 … 36"
    assert tidy("版本 1.2.3，见 www.debian.org...") == "版本 1.2.3，见 www.debian.org..."


@pytest.mark.parametrize(
    "title",
    ["Microsoft Word - 文档1.doc", "Untitled", "PowerPoint 演示文稿", "无标题", "新建 Microsoft Word 文档", "2026.pdf", "  "],
)
def test_titles_a_program_made_up_are_not_titles(title: str) -> None:
    assert real_title(title) == ""


def test_a_real_title_is_kept_with_its_spaces_collapsed() -> None:
    assert real_title("2026年  硕士研究生招生简章") == "2026年 硕士研究生招生简章"
    assert first_line("\n  \n第一章 总则\n正文") == "第一章 总则"


def test_a_metadata_title_is_read_whatever_the_parts_encoding() -> None:
    # A part without the word "title" in ASCII is not parsed; in UTF-16 the word is
    # not spelt in ASCII, and the part must still be parsed.
    core = ('<?xml version="1.0" encoding="UTF-16"?><cp:coreProperties xmlns:cp="x" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>二〇二六年招生简章</dc:title></cp:coreProperties>')  # fmt: skip
    body = f"<w:document {W}><w:body><w:p><w:r><w:t>{TEXT}</w:t></w:r></w:p></w:body></w:document>"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", body)
        z.writestr("docProps/core.xml", core.encode("utf-16"))
    assert extract_document(buf.getvalue()).title == "二〇二六年招生简章"
    assert extract_document(_docx([("", TEXT)], title="二〇二六年招生简章")).title == "二〇二六年招生简章"
    untitled = _zip({"word/document.xml": body, "docProps/core.xml": '<cp:coreProperties xmlns:cp="x"/>'})
    assert extract_document(untitled).title == ""


def test_a_document_without_a_real_title_takes_its_first_line_as_heading() -> None:
    found = extract_document(_docx([("", "关于开展二〇二六年招生工作的通知"), ("", TEXT)], title="Microsoft Word - 文档1.doc"))
    assert found.title == "" and found.headings == ["关于开展二〇二六年招生工作的通知"]


# --- hostile files


def test_a_zip_bomb_in_a_docx_is_refused_before_it_is_inflated() -> None:
    bomb = zip_bomb_docx(uncompressed=64 * 1024 * 1024)
    assert len(bomb) < 1024 * 1024
    with pytest.raises(DocumentSkipped) as caught:
        extract_document(bomb, "application/octet-stream", limits=DocumentLimits(max_unzipped_bytes=8 * 1024 * 1024))
    assert caught.value.reason == "zip_bomb"


def test_a_zip_bomb_whose_headers_lie_is_cut_at_its_claimed_size_and_is_malformed() -> None:
    with pytest.raises(DocumentSkipped) as caught:
        extract_document(zip_bomb_docx(uncompressed=64 * 1024 * 1024, lying=True), "application/octet-stream")
    assert caught.value.reason == "malformed"


def test_a_declared_size_over_the_cap_is_a_zip_bomb() -> None:
    big = _zip({"word/document.xml": f"<w:document {W}><w:body>" + " " * (2 * 1024 * 1024) + "</w:body></w:document>"})
    with pytest.raises(DocumentSkipped) as caught:
        extract_document(big, limits=DocumentLimits(max_unzipped_bytes=1024 * 1024))
    assert caught.value.reason == "zip_bomb"


def test_a_truncated_or_looping_pdf_ends_with_a_reason_or_what_could_be_read() -> None:
    good = _pdf([b"BT /F1 24 Tf 72 720 Td (Admission brochure 2026) Tj ET"] * 40)
    for data in (truncated_pdf_bytes(good), looping_pdf()):
        try:
            extract_document(data, "application/pdf")
        except DocumentSkipped as exc:
            assert exc.reason in ("malformed", "no_text")


def truncated_pdf_bytes(data: bytes) -> bytes:
    return data[: len(data) * 2 // 5]


def test_the_large_pdf_is_written_quickly_and_is_a_valid_pdf(tmp_path) -> None:
    path = tmp_path / "big.pdf"
    large_pdf(path, 8 * 1024 * 1024)
    assert path.stat().st_size >= 8 * 1024 * 1024 - 4096
    assert "large file" in extract_document(path.read_bytes(), "application/pdf").body
    assert truncated_pdf(path)[:5] == b"%PDF-"
