"""Text of spreadsheets (xlsx, xls, ods, and WPS's et) through python-calamine, one page
per sheet and one line per row, its cells separated by a space.

calamine (Rust) reads all four formats, and is faster than openpyxl on xlsx by an order
of magnitude (docs/benchmarks.md, "Which library reads which format"). Rows are taken
one at a time, so the character cap stops a sheet of a million rows early.
"""

from __future__ import annotations

import datetime
import io
import math
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Any

import python_calamine

from services.common.runtime.native_code import native
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
        try:
            text, error = _sheet_text(book.get_sheet_by_name(name).iter_rows(), limits.max_chars)
        except Exception as exc:  # the sheet itself could not be loaded
            text, error = "", exc
        if error is not None and not text:
            raise _skipped(error) from None
        if not sink.page(text, tidied=True):
            break
    return ExtractedText(fmt, title, [], sink.body(), len(names), sink.cut)


# Rows taken from calamine at a time: enough for the joins to run in C over many rows,
# few enough that a sheet of a million rows stops soon after the character cap.
_ROWS_AT_ONCE = 256


def _sheet_text(rows: Iterator[list[Any]], max_chars: int) -> tuple[str, Exception | None]:
    """A sheet's rows, one line each (``_rows_text``), read until ``max_chars`` have been
    passed; and the error that stopped the reading early, if one did (what was read
    before it is kept)."""
    parts: list[str] = []
    used = 0
    error: Exception | None = None
    while used <= max_chars and error is None:
        chunk: list[list[Any]] = []
        try:
            chunk.extend(islice(rows, _ROWS_AT_ONCE))  # keeps the rows read before an error
        except Exception as exc:
            error = exc
        text = rows_text(chunk)
        if text:
            parts.append(text)
            used += len(text) + 1
        if len(chunk) < _ROWS_AT_ONCE:
            break
    return "\n".join(parts), error


def _rows_text(rows: list[list[Any]]) -> str:
    """Each row's cells on one line, tidied as the sink would (empty cells dropped,
    every run of whitespace, a cell's own line breaks included, one space; a number
    written as typed, 6 and not 6.0), the empty lines left out.

    This is the Python twin of the C module's ``sheet_lines`` (services/common/_native.c),
    which ``rows_text`` is where the module was built: this one, though done by ``map``
    in C, cost as much as calamine's reading of a small sheet, the C one a quarter of
    it (docs/benchmarks.md). A row is
    stripped (empty cells at its ends, the common case, leave spaces there); only when
    a row holds whitespace other than spaces (or a control character) are the lines
    split and joined."""
    joined: list[str] = []
    try:
        joined.extend(map(" ".join, rows))
    except TypeError:  # numbers or dates among the cells, first in the row after those joined
        joined = _joined_by_columns(rows, len(joined))
    lines = list(filter(None, map(str.strip, joined)))
    if not all(map(str.isprintable, lines)):  # a tab, a line break, an ideographic space...
        return "\n".join(filter(None, map(" ".join, map(str.split, lines))))
    text = "\n".join(lines)
    while "  " in text:  # runs of spaces (empty cells between full ones): halved each time
        text = text.replace("  ", " ")
    return text


# A chunk of rows to its lines: in C where the module was built, one pass over the
# characters with no object made per row or per cell.
rows_text: Callable[[list[list[Any]]], str] = native.sheet_lines if native is not None else _rows_text


# Cell types whose str() is the cell's text (a float is written as typed, 6 not 6.0).
_STR_AS_TEXT = frozenset({str, int, bool, datetime.datetime, datetime.date, datetime.time, datetime.timedelta})


def _joined_by_columns(rows: list[list[Any]], first: int) -> list[str]:
    """Rows with numbers or dates among their cells, joined: converted a column at a
    time, as lists have numbers in whole columns (an exception and a Python call per
    row cost four times calamine's reading of such a row). The columns converted are
    those with a number in row ``first``, then, if the join still meets one, all."""
    if first >= len(rows) or len(set(map(len, rows))) != 1:  # (calamine's rows are of one width)
        return [_converted_cells(row) for row in rows]
    columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
    suspects = [i for i, cell in enumerate(rows[first]) if cell.__class__ is not str]
    for i in suspects:
        columns[i] = _column_text(columns[i])
    try:
        return list(map(" ".join, zip(*columns, strict=True)))
    except TypeError:
        return list(map(" ".join, zip(*map(_column_text, columns), strict=True)))


def _column_text(column: Sequence[Any]) -> Sequence[str]:
    kinds = set(map(type, column))
    if kinds == {str}:
        return column
    if kinds <= _STR_AS_TEXT:
        return list(map(str, column))
    return [c if c.__class__ is str else _cell(c) for c in column]


def _converted_cells(row: Sequence[object]) -> str:
    return " ".join([c if c.__class__ is str else _cell(c) for c in row])


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
