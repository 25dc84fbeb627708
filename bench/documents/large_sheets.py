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
    args = parser.parse_args(argv)
    docs = build(args.dest, args.files, args.rows)
    print(f"{len(docs)} spreadsheets in {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
