"""Which document format a response holds, from its Content-Type and its first bytes.

Never by the extension alone: servers send PDFs as ``application/octet-stream`` and
HTML error pages under ``.pdf`` names. The crawler asks ``document_family`` (cheap: a
type lookup and a magic number) whether a response goes to extraction; the extractor
asks ``identify`` (which opens a ZIP's directory or an OLE file's streams) which
format exactly. The file name only tells apart formats whose bytes are the same
(WPS Office's wps, et and dps are the compound files of doc, xls and ppt).
"""

from __future__ import annotations

import zipfile
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

from services.extractor.compound_file import SUMMARY_INFORMATION, CompoundFile, UnexpectedLayout, summary_title
from services.extractor.extracted_text import DocumentSkipped
from services.extractor.ole_text import decode_title
from services.extractor.zip_parts import ZipIndex

# Format names, as the index's ``filetype`` field and the ``filetype:`` operator hold them.
FORMATS = ("pdf", "docx", "xlsx", "pptx", "odt", "ods", "odp", "doc", "xls", "ppt",
           "wps", "et", "dps", "rtf", "txt", "csv")  # fmt: skip

# Declared types that name one format.
_TYPES = {
    "application/pdf": "pdf", "application/x-pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
    "application/msword": "doc", "application/vnd.ms-word": "doc",
    "application/vnd.ms-excel": "xls", "application/excel": "xls", "application/x-excel": "xls",
    "application/vnd.ms-powerpoint": "ppt", "application/mspowerpoint": "ppt",
    "application/kswps": "wps", "application/wps-office.wps": "wps", "application/vnd.ms-works": "wps",
    "application/kset": "et", "application/wps-office.et": "et",
    "application/ksdps": "dps", "application/wps-office.dps": "dps",
    "application/rtf": "rtf", "text/rtf": "rtf", "application/x-rtf": "rtf",
    "text/plain": "txt", "text/csv": "csv", "application/csv": "csv", "text/comma-separated-values": "csv",
}  # fmt: skip
# Types that say nothing about the bytes: the magic number decides.
_GENERIC_TYPES = frozenset({
    "", "application/octet-stream", "binary/octet-stream", "application/binary", "application/download",
    "application/x-download", "application/force-download", "application/x-msdownload", "application/zip",
    "application/x-zip-compressed", "application/x-ole-storage", "application/cdfv2", "application/unknown",
})  # fmt: skip
_PDF, _ZIP, _OLE, _RTF = b"%PDF-", b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"{\\rtf"
# Families: what the first bytes can tell.
_FAMILY_FORMATS = {
    "pdf": ("pdf",),
    "zip": ("docx", "xlsx", "pptx", "odt", "ods", "odp"),
    "ole": ("doc", "xls", "ppt", "wps", "et", "dps"),
    "rtf": ("rtf",),
    "text": ("txt", "csv"),
}
_WPS_NAMES = {"doc": "wps", "xls": "et", "ppt": "dps"}
# An ODF package's mimetype entry; variants (text-web, text-master, *-template) are
# the same formats for reading.
_ODF_TYPES = (
    (b"application/vnd.oasis.opendocument.text", "odt"),
    (b"application/vnd.oasis.opendocument.spreadsheet", "ods"),
    (b"application/vnd.oasis.opendocument.presentation", "odp"),
)
_OOXML_MAIN = (("word/document.xml", "docx"), ("xl/workbook.xml", "xlsx"), ("ppt/presentation.xml", "pptx"))


class NotADocument(DocumentSkipped):
    """The bytes are not in any format Tansuo extracts (an archive, an image), or
    cannot even be opened far enough to tell."""


def mime_type(content_type: str) -> str:
    """"application/pdf; name=x" -> "application/pdf"."""
    return content_type.split(";", 1)[0].strip().lower()


def may_be_document(content_type: str) -> bool:
    """Whether a declared type lets a response be a document, and so grow to the
    document size cap rather than the page cap: a document type, or one that says
    nothing (octet-stream and its kin)."""
    declared = mime_type(content_type)
    return declared in _TYPES or declared in _GENERIC_TYPES and declared != ""


def _family_of_bytes(head: bytes) -> str | None:
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(_PDF):
        return "pdf"
    if head.startswith(_ZIP):
        return "zip"
    if head.startswith(_OLE):
        return "ole"
    if head.startswith(_RTF):
        return "rtf"
    return None


def document_family(content_type: str, head: bytes) -> str | None:
    """"pdf", "zip", "ole", "rtf" or "text" when a response is a document to extract,
    else None (an HTML page, an image, an archive of another kind).

    The magic number wins over the declared type when it is one of the four document
    families; plain text and CSV have none, so they count only when declared."""
    found = _family_of_bytes(head[:16])
    declared = mime_type(content_type)
    if found is not None:
        # A ZIP is a document only if declared as one or not declared at all.
        if found == "zip" and declared not in _GENERIC_TYPES and _TYPES.get(declared) not in _FAMILY_FORMATS["zip"]:
            return None
        return found
    if _TYPES.get(declared) in ("txt", "csv"):
        return "text"
    return None


def identify(data: bytes, content_type: str = "", url: str = "") -> str:
    """The exact format of a document's bytes; NotADocument when it is none Tansuo reads."""
    return identify_document(data, content_type, url).format


def identify_with_title(data: bytes, content_type: str = "", url: str = "") -> tuple[str, str]:
    """``identify``, and an OLE file's metadata title; "" otherwise."""
    found = identify_document(data, content_type, url)
    return found.format, found.title


@dataclass(frozen=True)
class Identified:
    """A document's format, and what was opened to tell it, for its reader not to open
    it again: an OLE spreadsheet's metadata title, a package's ZIP directory."""

    format: str
    title: str = ""
    zip_index: ZipIndex | None = None


def identify_document(data: bytes, content_type: str = "", url: str = "") -> Identified:
    family = _family_of_bytes(data[:16])
    declared = _TYPES.get(mime_type(content_type))
    if family is None:
        if declared in ("txt", "csv"):
            return Identified(declared)
        raise NotADocument("unknown_format")
    if family in ("pdf", "rtf"):
        return Identified(family)
    if family == "zip":
        fmt, index = _zip_format(data)
        return Identified(fmt, zip_index=index)
    base, title = _ole_format(data)
    if declared == _WPS_NAMES[base] or _suffix(url) == _WPS_NAMES[base]:
        return Identified(_WPS_NAMES[base], title)
    return Identified(base, title)


def _suffix(url: str) -> str:
    path = urlsplit(url).path.lower()
    return path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ""


def _zip_format(data: bytes) -> tuple[str, ZipIndex]:
    try:
        index = ZipIndex(data)
    except (zipfile.BadZipFile, ValueError, OSError):
        raise NotADocument("malformed") from None
    names = index.by_name
    if "mimetype" in names:
        declared = _odf_mimetype(index)
        for prefix, name in _ODF_TYPES:
            if declared.startswith(prefix):
                return name, index
    for main, name in _OOXML_MAIN:
        if main in names:
            return name, index
    raise NotADocument("unknown_format")


def _odf_mimetype(index: ZipIndex) -> bytes:
    """The ODF package's own type: the "mimetype" part's first bytes (a few dozen)."""
    plain = index.plain_read(index.by_name["mimetype"], max_size=1024)
    if plain is not None:
        return plain[:100].strip()
    with index.zip.open("mimetype") as f:
        return f.read(100).strip()


def _ole_format(data: bytes) -> tuple[str, str]:
    """The format from the root's streams, and a spreadsheet's title: read by
    ``CompoundFile`` when the file is laid out as expected, else by olefile."""
    try:
        return _ole_format_of(CompoundFile(data))
    except UnexpectedLayout:
        return _ole_format_by_olefile(data)


def _format_of_streams(streams: Collection[str]) -> str:
    if "encryptedpackage" in streams:  # an encrypted OOXML file is an OLE wrapper around it
        raise NotADocument("encrypted")
    if "workbook" in streams or "book" in streams:
        return "xls"
    if "worddocument" in streams:
        return "doc"
    if "powerpoint document" in streams:
        return "ppt"
    raise NotADocument("unknown_format")


def _ole_format_of(ole: CompoundFile) -> tuple[str, str]:
    fmt = _format_of_streams(ole.streams)
    if fmt != "xls" or SUMMARY_INFORMATION not in ole.streams:
        return fmt, ""
    return fmt, decode_title(*summary_title(ole.read(SUMMARY_INFORMATION)))


def _ole_format_by_olefile(data: bytes) -> tuple[str, str]:
    import olefile

    from services.extractor.ole_text import ole_title

    try:
        ole = olefile.OleFileIO(data)
    except (OSError, ValueError):
        raise NotADocument("malformed") from None
    try:
        streams = {"/".join(s).lower() for s in ole.listdir()}
        fmt = _format_of_streams(streams)
        return fmt, ole_title(ole) if fmt == "xls" else ""
    finally:
        ole.close()
