"""Document extraction: the candidate libraries and Tansuo's extractor on the same files.

For every format of a document site (bench/sites/document_site.py) each candidate
reads every file of that format in a process of its own, which reports its time,
its peak memory (ru_maxrss of that process: the interpreter and the library
included) and two measures of Chinese correctness against the text that went into
the file:

- ``han``: Han characters recovered (multiset overlap over those put in);
- ``quotes``: 10-character windows of the text, whitespace removed, found in the
  extracted text with whitespace removed: characters in reading order, which is what
  a phrase search needs (a line wrap inside a word is the extractor's to join, and
  is not held against a library here).

Extra PDF sets, made here from the site's PDFs: ``pdf-notounicode`` (the ToUnicode
maps stripped out, as CJK PDFs from old tools have them) and ``pdf-vertical`` (text
laid out top to bottom, right to left).

    python -m bench.documents.extract_bench SITE [--formats pdf,docx] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bench.measure.resource_use import status_kib
from bench.sites.document_site import FORMATS, convert, load_manifest

_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
_WS = re.compile(r"\s+")
QUOTE = 10
QUOTE_STEP = 37


# --- candidates: path -> text


def _pypdfium2(path: Path) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    out = []
    for i in range(len(pdf)):
        page = pdf[i]
        tp = page.get_textpage()
        out.append(tp.get_text_range())
        tp.close()
        page.close()
    pdf.close()
    return "\n".join(out)


def _pdfminer(path: Path) -> str:
    from pdfminer.high_level import extract_text

    return str(extract_text(str(path)))


def _command(*args: str) -> Callable[[Path], str]:
    def run(path: Path) -> str:
        proc = subprocess.run([*args, str(path)] + (["-"] if args[0] == "pdftotext" else []),
                              capture_output=True, timeout=300)  # fmt: skip
        return proc.stdout.decode("utf-8", errors="replace")

    return run


def _python_docx(path: Path) -> str:
    import docx

    d = docx.Document(str(path))
    parts = [p.text for p in d.paragraphs]
    for table in d.tables:
        for row in table.rows:
            parts.extend(c.text for c in row.cells)
    return "\n".join(parts)


def _docx2python(path: Path) -> str:
    from docx2python import docx2python

    with docx2python(str(path)) as d:
        return str(d.text)


def _python_pptx(path: Path) -> str:
    from pptx import Presentation

    out = []
    for slide in Presentation(str(path)).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                out.append(shape.text_frame.text)
    return "\n".join(out)


def _calamine(path: Path) -> str:
    import python_calamine

    book = python_calamine.CalamineWorkbook.from_path(str(path))
    out = []
    for name in book.sheet_names:
        for row in book.get_sheet_by_name(name).to_python():
            out.append("\t".join(str(c) for c in row if c != ""))
    return "\n".join(out)


def _calamine_bytes(path: Path) -> str:
    """calamine given the file's bytes, as Tansuo's reader is (the crawler hands it a
    response's body), rather than its path: the same text as ``_calamine``."""
    import io

    import python_calamine

    book = python_calamine.CalamineWorkbook.from_filelike(io.BytesIO(path.read_bytes()))
    out = []
    for name in book.sheet_names:
        for row in book.get_sheet_by_name(name).to_python():
            out.append("\t".join(str(c) for c in row if c != ""))
    return "\n".join(out)


def _openpyxl(path: Path) -> str:
    import openpyxl

    book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    out = []
    for sheet in book.worksheets:
        for row in sheet.iter_rows(values_only=True):
            out.append("\t".join(str(c) for c in row if c is not None))
    return "\n".join(out)


def _odfpy(path: Path) -> str:
    from odf import teletype, text
    from odf.opendocument import load

    doc = load(str(path))
    return "\n".join(teletype.extractText(p) for kind in (text.H, text.P) for p in doc.getElementsByType(kind))


def _striprtf(path: Path) -> str:
    from striprtf.striprtf import rtf_to_text

    data = path.read_bytes()
    found = re.search(rb"\\ansicpg(\d+)", data[:4096])
    return str(rtf_to_text(data.decode("latin-1"), encoding=f"cp{found.group(1).decode()}" if found else "cp1252"))


def _tansuo(fmt: str) -> Callable[[Path], str]:
    def run(path: Path) -> str:
        from services.extractor.extract_document import extract_document

        content_type = FORMATS[fmt].content_type if fmt in FORMATS else ""
        return extract_document(path.read_bytes(), content_type, f"http://bench/{path.name}").body

    return run


# (candidate, licence, function) per format; "tansuo" is the product's extractor.
def candidates(fmt: str) -> list[tuple[str, str, Callable[[Path], str]]]:
    base = fmt.split("-")[0]
    table: dict[str, list[tuple[str, str, Callable[[Path], str]]]] = {
        "pdf": [("pypdfium2", "Apache-2.0/BSD-3", _pypdfium2), ("pdfminer.six", "MIT", _pdfminer),
                ("pdftotext (poppler)", "GPL-2 program", _command("pdftotext", "-q", "-enc", "UTF-8"))],
        "docx": [("python-docx", "MIT", _python_docx), ("docx2python", "MIT", _docx2python)],
        "pptx": [("python-pptx", "MIT", _python_pptx)],
        "xlsx": [("python-calamine", "MIT", _calamine), ("python-calamine-bytes", "MIT", _calamine_bytes),
                 ("openpyxl", "MIT", _openpyxl)],
        "ods": [("python-calamine", "MIT", _calamine), ("python-calamine-bytes", "MIT", _calamine_bytes)],
        "xls": [("python-calamine", "MIT", _calamine), ("python-calamine-bytes", "MIT", _calamine_bytes),
                ("xls2csv (catdoc)", "GPL-2 program", _command("xls2csv", "-d", "utf-8"))],
        "odt": [("odfpy", "Apache-2.0/GPL/LGPL", _odfpy)],
        "odp": [("odfpy", "Apache-2.0/GPL/LGPL", _odfpy)],
        "doc": [("antiword", "GPL-2 program", _command("antiword", "-m", "UTF-8.txt")),
                ("catdoc", "GPL-2 program", _command("catdoc", "-d", "utf-8"))],
        "ppt": [("catppt (catdoc)", "GPL-2 program", _command("catppt", "-d", "utf-8"))],
        "rtf": [("striprtf", "BSD-3", _striprtf)],
    }  # fmt: skip
    alias = {"wps": "doc", "et": "xls", "dps": "ppt"}
    found = list(table.get(alias.get(base, base), []))
    return [*found, ("tansuo", "Apache-2.0", _tansuo(base))]


# --- measuring


def correctness(expected: str, got: str) -> tuple[int, int, int, int]:
    """(Han recovered, Han expected, quotes found, quotes tried)."""
    want = Counter(_HAN.findall(expected))
    have = Counter(_HAN.findall(got))
    recovered = sum((want & have).values())
    flat_want, flat_got = _WS.sub("", expected), _WS.sub("", got)
    quotes = [flat_want[i : i + QUOTE] for i in range(0, max(0, len(flat_want) - QUOTE), QUOTE_STEP)]
    quotes = [q for q in quotes if _HAN.search(q)]
    return recovered, sum(want.values()), sum(1 for q in quotes if q in flat_got), len(quotes)


def run_one(name: str, fmt: str, files: list[tuple[Path, str]], repeat: int = 1) -> dict[str, object]:
    """Every file through one candidate, ``repeat`` times, in this process (a child of
    the benchmark's); correctness from the first pass."""
    read = dict((n, f) for n, _, f in candidates(fmt))[name]
    totals = [0, 0, 0, 0]
    failed = 0
    try:  # imports and first-call set-up are not extraction
        read(files[0][0])
    except Exception:
        pass
    # Correctness from a first pass, untimed: scoring a text costs more than reading a
    # small spreadsheet, and would hide the readers' difference in the timing.
    for path, expected in files:
        try:
            got = read(path)
        except Exception:
            failed += 1
            got = ""
        for i, v in enumerate(correctness(expected, got)):
            totals[i] += v
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    cpu = time.process_time()
    for _ in range(repeat):
        for path, _expected in files:
            try:
                read(path)
            except Exception:
                pass
    seconds = time.perf_counter() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "candidate": name, "format": fmt, "files": len(files), "failed": failed,
        "seconds": round(seconds / repeat, 6),
        "cpu_s": round((time.process_time() - cpu + children.ru_utime + children.ru_stime
                        - before.ru_utime - before.ru_stime) / repeat, 6),
        "bytes": sum(p.stat().st_size for p, _ in files),
        "han": round(totals[0] / max(1, totals[1]), 4), "quotes": round(totals[2] / max(1, totals[3]), 4),
        # This process's own peak (VmHWM: ru_maxrss would carry the parent's over exec);
        # programs run as children are not measured.
        "peak_rss_mb": round(status_kib("VmHWM") / 1024, 1),
    }  # fmt: skip


def sets(site: Path, formats: list[str], work: Path) -> dict[str, list[tuple[Path, str]]]:
    docs = [d for d in load_manifest(site) if d.text]
    out: dict[str, list[tuple[Path, str]]] = {}
    for fmt in formats:
        if fmt == "pdf-notounicode":
            out[fmt] = _without_tounicode([(site / d.path, d.text) for d in docs if d.format == "pdf"], work)
        elif fmt == "pdf-vertical":
            out[fmt] = _vertical([d.text for d in docs if d.format == "pdf"][:8], work)
        else:
            out[fmt] = [(site / d.path, d.text) for d in docs if d.format == fmt]
    return out


def _without_tounicode(files: list[tuple[Path, str]], work: Path) -> list[tuple[Path, str]]:
    """The PDFs with every /ToUnicode entry taken out (qpdf unpacks and repacks them)."""
    qpdf = shutil.which("qpdf")
    if qpdf is None:
        return []
    out = []
    for path, text in files:
        plain = work / f"{path.stem}.qdf.pdf"
        subprocess.run([qpdf, "--qdf", "--object-streams=disable", str(path), str(plain)], check=False)
        data = re.sub(rb"/ToUnicode \d+ 0 R", b"", plain.read_bytes())
        stripped = work / f"{path.stem}.notounicode.pdf"
        plain.write_bytes(data)
        subprocess.run([qpdf, str(plain), str(stripped)], check=False, capture_output=True)
        if stripped.is_file():
            out.append((stripped, text))
    return out


_FODT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
<office:automatic-styles><style:page-layout style:name="pm1"><style:page-layout-properties
 style:writing-mode="tb-rl" fo:page-width="21cm" fo:page-height="29.7cm" fo:margin="2cm"/></style:page-layout>
</office:automatic-styles><office:master-styles><style:master-page style:name="Standard" style:page-layout-name="pm1"/>
</office:master-styles><office:body><office:text>{paras}</office:text></office:body></office:document>
"""


def _vertical(texts: list[str], work: Path) -> list[tuple[Path, str]]:
    from xml.sax.saxutils import escape

    sources = []
    for n, text in enumerate(texts):
        src = work / f"vertical-{n}.fodt"
        src.write_text(_FODT.format(paras="".join(f"<text:p>{escape(line)}</text:p>" for line in text.splitlines())))
        sources.append((src, text))
    convert([s for s, _ in sources], "pdf:writer_pdf_Export", work / "vertical")
    return [(work / "vertical" / f"{s.stem}.pdf", t) for s, t in sources if (work / "vertical" / f"{s.stem}.pdf").is_file()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--formats", default=",".join([*FORMATS, "pdf-notounicode", "pdf-vertical"]))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--repeat", type=int, default=5, help="passes over the files, timed together")
    parser.add_argument("--candidates", default="", help="only these (comma-separated names), e.g. python-calamine,tansuo")
    parser.add_argument("--one", nargs=2, metavar=("CANDIDATE", "FORMAT"), help=argparse.SUPPRESS)
    parser.add_argument("--files", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        files = [(Path(p), t) for p, t in json.loads(args.files.read_text("utf-8"))]
        print(json.dumps(run_one(args.one[0], args.one[1], files, args.repeat)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="tansuo-extract-bench-") as tmp:
        work = Path(tmp)
        for fmt, files in sets(args.site, args.formats.split(","), work).items():
            if not files:
                continue
            listing = work / f"{fmt}.json"
            listing.write_text(json.dumps([(str(p), t) for p, t in files], ensure_ascii=False), "utf-8")
            for name, licence, _ in candidates(fmt):
                if args.candidates and name not in args.candidates.split(","):
                    continue
                proc = subprocess.run([sys.executable, "-m", "bench.documents.extract_bench", str(args.site),
                                       "--one", name, fmt, "--files", str(listing), "--repeat", str(args.repeat)],
                                      capture_output=True, text=True, timeout=3600)  # fmt: skip
                if proc.returncode != 0:
                    print(f"{fmt} {name}: failed: {proc.stderr[-300:]}", file=sys.stderr)
                    continue
                row = json.loads(proc.stdout.strip().splitlines()[-1]) | {"licence": licence}
                rows.append(row)
                print(f"{fmt:16} {name:22} {row['files']:4} files {row['seconds']:9.6f} s "
                      f"cpu {row['cpu_s']:9.6f} s  han {row['han']:.4f} quotes {row['quotes']:.4f} "
                      f"rss {row['peak_rss_mb']:6.1f} MB failed {row['failed']}", flush=True)  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
