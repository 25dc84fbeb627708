"""Text of spreadsheets (xlsx, xls, ods, and WPS's et) through python-calamine, one page
per sheet and one line per row, its cells separated by a space.

calamine (Rust) reads all four formats, and is faster than openpyxl on xlsx by an order
of magnitude (docs/benchmarks.md, "Which library reads which format"). Rows are taken
one at a time, so the character cap stops a sheet of a million rows early.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

import python_calamine

from services.extractor.extracted_text import DocumentLimits, DocumentSkipped, ExtractedText, TextSink
from services.extractor.xml_text import core_title
from services.extractor.zip_parts import Package, ZipIndex


def read_sheets(
    data: bytes, limits: DocumentLimits, fmt: str, title_part: str = "", title: str = "",
    zip_index: ZipIndex | None = None,
) -> ExtractedText:  # fmt: skip
    """``title_part``: the package part holding the metadata title (xlsx, ods); an OLE
    file's (xls, et) comes as ``title``; ``zip_index``: the package's ZIP directory, when read."""
    if data[:2] == b"PK":
        package = Package(data, limits.max_unzipped_bytes, zip_index)
        package.check_all()  # calamine inflates the parts itself
        if title_part:
            title = core_title(package, title_part)
    try:
        book = python_calamine.CalamineWorkbook.from_filelike(io.BytesIO(data))
    except Exception as exc:  # calamine raises its own error classes, per format
        raise _skipped(exc) from None
    sink = TextSink(limits)
    names = list(book.sheet_names)
    for name in names:
        lines: list[str] = []
        used = 0
        try:
            sheet = book.get_sheet_by_name(name)
            for row in sheet.iter_rows():
                line = _row_text(row)
                if line:
                    lines.append(line)
                    used += len(line) + 1
                    if used > limits.max_chars:
                        break
        except Exception as exc:
            if not lines:
                raise _skipped(exc) from None
        if not sink.page("\n".join(lines), tidied=True):
            break
    return ExtractedText(fmt, title, [], sink.body(), len(names), sink.cut)


def _row_text(row: Sequence[object]) -> str:
    """A row's cells on one line, tidied as the sink would: empty cells dropped and
    every run of whitespace (a cell's own line breaks included) one space. Done with
    joins and a split in C: a Python test per cell cost more than calamine's reading
    of the sheet (docs/benchmarks.md). A row of text is joined as it is; in one with
    numbers or dates those cells alone are converted."""
    try:
        return " ".join(" ".join(row).split())  # type: ignore[arg-type]
    except TypeError:
        return " ".join(" ".join([c if c.__class__ is str else _cell(c) for c in row]).split())


def _cell(value: object) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value):
            return str(int(value))
        return repr(value)
    return str(value).strip()


def _skipped(exc: Exception) -> DocumentSkipped:
    text = str(exc)
    if "password" in text.lower() or "encrypt" in text.lower():
        return DocumentSkipped("encrypted", text[:200])
    return DocumentSkipped("malformed", text[:200])
