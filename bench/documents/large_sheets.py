"""Larger spreadsheets than the document site's, shaped like the lists sites publish.

The document site's spreadsheets hold one page's text each (about 240 rows, few
numbers). The lists a university or a ministry publishes (admitted students, a
budget, a catalogue) are longer and have numbers in every row. Each spreadsheet
here is such a list made of real text: ``--rows`` rows of 序号 (a number), the source
page's title, one line of its text and that line's length (a number), taking the
lines of consecutive pages of the same sources as the document site; a metadata
title (dc:title) is set, so the title path is read too. Written as flat ODF and
converted by LibreOffice (headless) into xlsx, xls and ods; WPS's et is the xls
under its own name, as on the document site.

The result has a ``manifest.json`` like the document site's, so
``bench.documents.extract_bench`` reads it as it reads a site:

    python -m bench.documents.large_sheets DEST [--files 10] [--rows 2000]
    python -m bench.documents.large_sheets DEST --awkward   # for before/after checks

``--awkward`` writes instead a few workbooks of every kind of cell a reader must get
right (integral and fractional floats, dates, times, booleans, formulas, cells with
line breaks, tabs and ideographic spaces, runs of spaces, empty rows and cells, several
sheets), for ``bench.documents.extraction_snapshot`` to compare a change's output with.
    python -m bench.documents.extract_bench DEST --formats xlsx,xls,ods,et --repeat 5
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from xml.sax.saxutils import escape

from bench.sites.document_site import FORMATS, SiteDocument, SourcePage, convert, source_pages

_FODS = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:dc="http://purl.org/dc/elements/1.1/"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:meta><dc:title>{title}</dc:title></office:meta>
<office:body><office:spreadsheet><table:table table:name="{sheet}">{rows}</table:table></office:spreadsheet></office:body>
</office:document>
"""
_HEADER = ("序号", "来源", "内容", "字数")
_FODS_SHEETS = _FODS.replace('<table:table table:name="{sheet}">{rows}</table:table>', "{tables}").replace(
    "xmlns:dc=", 'xmlns:office2="urn:oasis:names:tc:opendocument:xmlns:of:1.2" xmlns:dc='
)
# (office:value-type, value attributes, shown text) of the awkward cells.
_AWKWARD_CELLS = [
    ("float", 'office:value="6"', "6"),
    ("float", 'office:value="2.5"', "2.5"),
    ("float", 'office:value="-0"', "0"),
    ("float", 'office:value="1E+20"', "1E+20"),
    ("float", 'office:value="0.30000000000000004"', "0.3"),
    ("float", 'office:value="12345678901234567"', "1.2E+16"),
    ("percentage", 'office:value="0.125"', "12.5%"),
    ("currency", 'office:value="1500.5" office:currency="CNY"', "¥1500.50"),
    ("date", 'office:date-value="2026-09-01"', "2026-09-01"),
    ("date", 'office:date-value="2026-01-19T00:15:00"', "2026-01-19 00:15"),
    ("time", 'office:time-value="PT13H45M00S"', "13:45"),
    ("boolean", 'office:boolean-value="true"', "TRUE"),
    ("string", "", "数学\n学院"),
    ("string", "", "物理\t学院"),
    ("string", "", "化学\u3000学院"),
    ("string", "", "  前后有空格  "),
    ("string", "", "中间     五个空格"),
    ("string", "", "a\xa0b"),
    ("string", "", ""),
    ("string", "", "   "),
    ("string", "", "第 1 章 GNU/Linux 教程"),
]


def _awkward_cell(kind: str, attrs: str, shown: str) -> str:
    if kind == "string" and not shown:
        return "<table:table-cell/>"
    paras = "".join(f"<text:p>{escape(p)}</text:p>" for p in shown.split("\n"))
    if kind == "string":
        return f'<table:table-cell office:value-type="string">{paras}</table:table-cell>'
    return f'<table:table-cell office:value-type="{kind}" {attrs}>{paras}</table:table-cell>'


def _awkward_tables(n: int) -> str:
    """Sheets whose rows take the awkward cells in turn, three to seven to a row, with
    an empty row now and then and a formula."""
    tables = []
    for sheet in range(1 + n % 3):
        rows = []
        at = n + sheet
        for r in range(40 + 15 * n):
            if r % 9 == 4:
                rows.append("<table:table-row><table:table-cell/><table:table-cell/></table:table-row>")
                continue
            width = 3 + (r + n) % 5
            cells = [_awkward_cell(*_AWKWARD_CELLS[(at + i * 7) % len(_AWKWARD_CELLS)]) for i in range(width)]
            at += width
            if r % 11 == 3:
                cells.append(
                    '<table:table-cell table:formula="of:=1+2" office:value-type="float" office:value="3"><text:p>3</text:p></table:table-cell>'
                )
            rows.append("<table:table-row>" + "".join(cells) + "</table:table-row>")
        tables.append(f'<table:table table:name="表{sheet + 1}">{"".join(rows)}</table:table>')
    return "".join(tables)


def build_awkward(dest: Path, files: int = 6) -> int:
    """``files`` workbooks per format (xlsx, xls, ods, et) of awkward cells; how many were written."""
    if dest.exists():
        shutil.rmtree(dest)
    written = 0
    with tempfile.TemporaryDirectory(prefix="tansuo-awkward-sheets-") as tmp:
        work = Path(tmp)
        sources = []
        for n in range(files):
            src = work / f"awkward-{n:02d}.fods"
            src.write_text(_FODS_SHEETS.format(title=escape(f"难读的表格 {n}"), tables=_awkward_tables(n)), "utf-8")
            sources.append(src)
        for fmt in ("xlsx", "xls", "ods"):
            convert(sources, FORMATS[fmt].target, work / fmt)
        for fmt in ("xlsx", "xls", "ods", "et"):
            made = "xls" if fmt == "et" else fmt
            (dest / fmt).mkdir(parents=True, exist_ok=True)
            for src in sources:
                shutil.copyfile(work / made / f"{src.stem}.{made}", dest / fmt / f"{src.stem}.{fmt}")
                written += 1
    return written


def _cell(value: str | int) -> str:
    if isinstance(value, int):
        return f'<table:table-cell office:value-type="float" office:value="{value}"><text:p>{value}</text:p></table:table-cell>'
    return f'<table:table-cell office:value-type="string"><text:p>{escape(value)}</text:p></table:table-cell>'


def _lists(pages: list[SourcePage], files: int, rows: int) -> list[tuple[str, list[list[str | int]]]]:
    """(title, rows) of each list: consecutive pages' lines, wrapping round the pages."""
    lists: list[tuple[str, list[list[str | int]]]] = []
    at = 0
    for n in range(files):
        table: list[list[str | int]] = [list(_HEADER)]
        first = pages[at % len(pages)]
        while len(table) <= rows:
            page = pages[at % len(pages)]
            at += 1
            for line in page.lines:
                if len(table) > rows:
                    break
                table.append([len(table), page.title, line, len(line)])
        lists.append((f"{first.title}（列表 {n + 1}）", table))
    return lists


def build(dest: Path, files: int, rows: int) -> list[SiteDocument]:
    from bench.sites.document_site import _demo_root, _gimp_root

    pages = source_pages([_demo_root(), _gimp_root()])
    if dest.exists():
        shutil.rmtree(dest)
    docs: list[SiteDocument] = []
    with tempfile.TemporaryDirectory(prefix="tansuo-large-sheets-") as tmp:
        work = Path(tmp)
        sources = []
        for n, (title, table) in enumerate(_lists(pages, files, rows), 1):
            src = work / f"{n:04d}.fods"
            body = "".join("<table:table-row>" + "".join(map(_cell, row)) + "</table:table-row>" for row in table)
            src.write_text(_FODS.format(title=escape(title), sheet="列表", rows=body), "utf-8")
            sources.append((src, title, "\n".join(" ".join(str(c) for c in row) for row in table)))
        for fmt in ("xlsx", "xls", "ods"):
            convert([s for s, _, _ in sources], FORMATS[fmt].target, work / fmt)
        for fmt in ("xlsx", "xls", "ods", "et"):
            made = "xls" if fmt == "et" else fmt
            (dest / "docs" / fmt).mkdir(parents=True, exist_ok=True)
            for src, title, text in sources:
                path = f"docs/{fmt}/{src.stem}.{fmt}"
                shutil.copyfile(work / made / f"{src.stem}.{made}", dest / path)
                docs.append(SiteDocument(path=path, format=fmt, link_text=title, meta_title=title,
                                         content_type=FORMATS[fmt].content_type, source="", text=text))  # fmt: skip
    (dest / "manifest.json").write_text(json.dumps([asdict(d) for d in docs], ensure_ascii=False, indent=0), "utf-8")
    return docs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--files", type=int, default=10, help="spreadsheets per format")
    parser.add_argument("--rows", type=int, default=2000, help="rows per spreadsheet, below its header")
    parser.add_argument("--awkward", action="store_true", help="workbooks of awkward cells instead of lists")
    args = parser.parse_args(argv)
    if args.awkward:
        print(f"{build_awkward(args.dest)} awkward workbooks in {args.dest}")
        return 0
    docs = build(args.dest, args.files, args.rows)
    print(f"{len(docs)} spreadsheets in {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
