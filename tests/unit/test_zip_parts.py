"""A package's ZIP directory read once, by struct when plainly laid out, by zipfile
otherwise; small parts inflated in one call only when they check out."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from services.extractor.extract_document import extract_document
from services.extractor.extracted_text import DocumentSkipped
from services.extractor.zip_parts import Package, ZipIndex

CORE = '<cp:coreProperties xmlns:cp="x" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>招生简章</dc:title></cp:coreProperties>'


def _package(comment: bytes = b"", stored: bool = False) -> bytes:
    buf = io.BytesIO()
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(buf, "w", method) as z:
        z.writestr("docProps/core.xml", CORE)
        z.writestr("word/document.xml", "<w:document/>" * 50)
        z.writestr("目录/说明.txt", "中文名字")  # a UTF-8 name
        z.comment = comment
    return buf.getvalue()


@pytest.mark.parametrize("stored", [False, True])
def test_a_plain_package_is_read_as_zipfile_reads_it(stored: bool) -> None:
    data = _package(stored=stored)
    index = ZipIndex(data)
    infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert [(e.name, e.compress_size, e.file_size) for e in index.entries] == [
        (i.filename, i.compress_size, i.file_size) for i in infos
    ]
    assert all(e.offset >= 0 for e in index.entries)  # read by struct, not zipfile
    for entry in index.entries:
        assert index.plain_read(entry, 1 << 20) == zipfile.ZipFile(io.BytesIO(data)).read(entry.name)
    assert Package(data, 1 << 20, index).read("docProps/core.xml") == CORE.encode()


@pytest.mark.parametrize("layout", ["comment", "prefix"])
def test_another_layout_is_left_to_zipfile(layout: str) -> None:
    data = _package(comment=b"made by hand") if layout == "comment" else b"MZ" + b"\0" * 100 + _package()
    index = ZipIndex(data)
    assert all(e.offset < 0 for e in index.entries)  # zipfile read the directory
    assert Package(data, 1 << 20, index).read("docProps/core.xml") == CORE.encode()


def test_a_part_that_does_not_check_out_goes_through_zipfile_and_is_malformed() -> None:
    data = bytearray(_package())
    at = data.index(b"PK\x01\x02")  # the first central entry: docProps/core.xml
    (crc,) = struct.unpack_from("<L", data, at + 16)
    struct.pack_into("<L", data, at + 16, crc ^ 1)  # a CRC that lies
    index = ZipIndex(bytes(data))
    assert index.plain_read(index.by_name["docProps/core.xml"], 1 << 20) is None
    with pytest.raises(DocumentSkipped, match="malformed"):
        Package(bytes(data), 1 << 20, index).read("docProps/core.xml")


def test_a_part_declared_larger_than_asked_for_is_not_inflated_here() -> None:
    index = ZipIndex(_package())
    assert index.plain_read(index.by_name["word/document.xml"], 100) is None


def test_a_part_overlapping_the_next_is_not_read_here() -> None:
    data = bytearray(_package(stored=True))
    at = data.index(b"PK\x01\x02")
    for field in (20, 24):  # the first part claims to run into the second
        struct.pack_into("<L", data, at + field, 5000)
    index = ZipIndex(bytes(data))
    assert index.plain_read(index.by_name["docProps/core.xml"], 1 << 20) is None


def test_an_ods_title_and_type_come_through_the_shared_directory() -> None:
    ns = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"')  # fmt: skip
    content = (f"<office:document-content {ns}><office:body><office:spreadsheet><table:table table:name=\"表1\">"
               '<table:table-row><table:table-cell office:value-type="string"><text:p>录取名单</text:p></table:table-cell>'
               "</table:table-row></table:table></office:spreadsheet></office:body></office:document-content>")  # fmt: skip
    meta = ('<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>二〇二六年录取名单</dc:title>'
            "</office:meta></office:document-meta>")  # fmt: skip
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet", compress_type=zipfile.ZIP_STORED)
        z.writestr("content.xml", content)
        z.writestr("meta.xml", meta)
        z.writestr("META-INF/manifest.xml", '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                   '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>')  # fmt: skip
    found = extract_document(buf.getvalue(), "application/octet-stream")
    assert (found.format, found.title, found.body) == ("ods", "二〇二六年录取名单", "录取名单")
