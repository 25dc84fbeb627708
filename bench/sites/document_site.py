"""Builds a site of linked documents in every format Tansuo reads, from real Chinese pages.

Each document holds the text of one page of a real site (the demo site's Debian
manuals, the GIMP manual), run through the crawler's own extraction and converted by
LibreOffice (headless) into PDF, DOCX, DOC, ODT, RTF, XLSX, XLS, ODS, PPTX, PPT and ODP;
CSV and plain text are written directly. WPS Office's own formats (wps, et, dps) are
the compound files of doc, xls and ppt that WPS also writes; no WPS writer runs here,
so they are LibreOffice's doc, xls and ppt served under WPS names and types.

What a real site does to a crawler is varied on purpose: a share of the documents
carry their page's title as metadata, others a junk title ("Microsoft Word - 文档1.doc")
or none, so the title must come from the link text; some are served as
``application/octet-stream``; some plain-text files are GB18030 with no charset.
Listing pages link every document with its page's title as the link text.

``hostile`` adds the files that must not hurt a crawl: a ZIP bomb inside a docx, an
encrypted PDF, a truncated PDF, a PDF whose page tree loops, and a very large PDF
(made in a second, by a stream of filler).

The site is staged beside ``dest`` and renamed into place when complete, with
``manifest.json`` (every document: path, format, link text, served type, source page,
the text that went in) and ``_types.json`` (path -> Content-Type), which
``document_site_routes`` serves.

    python -m bench.sites.document_site DEST [--per-format N] [--hostile] [--big-mb N]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import html
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

from services.crawler.charset import decode_html
from services.crawler.extract import extract

LAYOUT_VERSION = 1
MARKER = ".tansuo-document-site.json"
LINKS_PER_LISTING = 40
# Text per document: a page's first lines, up to this many characters, so that a site
# of 500 documents converts in minutes; long pages are what the large PDF is for.
MAX_DOC_CHARS = 12_000
MIN_HAN_CHARS = 300  # pages with less Chinese than this make poor known items
JUNK_TITLES = ("Microsoft Word - 文档1.doc", "Untitled", "PowerPoint 演示文稿", "无标题", "Sheet1", "新建 Microsoft Word 文档")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
OCTET = "application/octet-stream"


@dataclass(frozen=True)
class Format:
    name: str
    family: str  # writer, calc, impress, text
    target: str  # soffice --convert-to argument ("" = written directly)
    suffix: str  # what LibreOffice names its output
    content_type: str


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("pdf", "writer", "pdf:writer_pdf_Export", "pdf", "application/pdf"),
    Format("docx", "writer", "docx:MS Word 2007 XML", "docx",
           "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    Format("doc", "writer", "doc:MS Word 97", "doc", "application/msword"),
    Format("odt", "writer", "odt:writer8", "odt", "application/vnd.oasis.opendocument.text"),
    Format("rtf", "writer", "rtf:Rich Text Format", "rtf", "application/rtf"),
    Format("wps", "writer", "doc:MS Word 97", "doc", "application/kswps"),
    Format("xlsx", "calc", "xlsx:Calc MS Excel 2007 XML", "xlsx",
           "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    Format("xls", "calc", "xls:MS Excel 97", "xls", "application/vnd.ms-excel"),
    Format("ods", "calc", "ods:calc8", "ods", "application/vnd.oasis.opendocument.spreadsheet"),
    Format("et", "calc", "xls:MS Excel 97", "xls", "application/kset"),
    Format("pptx", "impress", "pptx:Impress MS PowerPoint 2007 XML", "pptx",
           "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    Format("ppt", "impress", "ppt:MS PowerPoint 97", "ppt", "application/vnd.ms-powerpoint"),
    Format("odp", "impress", "odp:impress8", "odp", "application/vnd.oasis.opendocument.presentation"),
    Format("dps", "impress", "ppt:MS PowerPoint 97", "ppt", "application/ksdps"),
    Format("csv", "text", "", "csv", "text/csv; charset=utf-8"),
    Format("txt", "text", "", "txt", "text/plain; charset=utf-8"),
)}  # fmt: skip


class DocumentSiteError(RuntimeError):
    """The site could not be built; the message says what is missing."""


@dataclass(frozen=True)
class SourcePage:
    url: str
    title: str
    lines: tuple[str, ...]


@dataclass
class SiteDocument:
    path: str  # site-relative, e.g. docs/0001.pdf
    format: str
    link_text: str  # the page's title: what a user would know the document by
    meta_title: str  # the title the file carries ("" = none)
    content_type: str
    source: str
    text: str  # what went in, line by line
    extra: dict[str, str] = field(default_factory=dict)


# --- source pages


def source_pages(roots: Sequence[Path], limit: int = 0) -> list[SourcePage]:
    """Pages of the given site roots with enough Chinese text and a title no other page
    has, in path order, extracted by the crawler's own code."""
    pages: list[SourcePage] = []
    seen: set[str] = set()
    for root in roots:
        for path in sorted(Path(root).rglob("*.html")):
            text, encoding = decode_html(path.read_bytes(), "text/html")
            page = extract(f"http://source/{path.relative_to(root).as_posix()}", text, encoding=encoding)
            title = " ".join(page.title.split())
            if not title or title in seen or len(_HAN.findall(page.body)) < MIN_HAN_CHARS:
                continue
            seen.add(title)
            pages.append(SourcePage(f"{Path(root).name}/{path.relative_to(root).as_posix()}", title,
                                    tuple(_first_lines(page.body.splitlines(), MAX_DOC_CHARS))))  # fmt: skip
            if limit and len(pages) >= limit:
                return pages
    return pages


def _first_lines(lines: Iterable[str], budget: int) -> list[str]:
    kept, used = [], 0
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if used + len(line) > budget and kept:
            break
        kept.append(line[:budget])
        used += len(line)
    return kept


# --- inputs for LibreOffice


def _writer_html(title: str, meta_title: str, lines: Sequence[str], heading: bool) -> str:
    head = f"<title>{html.escape(meta_title)}</title>" if meta_title else ""
    h1 = f"<h1>{html.escape(title)}</h1>" if heading else ""
    body = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    return f'<!DOCTYPE html><html><head><meta charset="utf-8">{head}</head><body>{h1}{body}</body></html>'


def _rows(title: str, lines: Sequence[str], heading: bool) -> list[list[str]]:
    """A sheet: the title in the first row (when the document has a heading), then one
    row per line, a long line split after its sentences into up to three cells."""
    rows = [[title]] if heading else []
    for line in lines:
        sentences = [s for s in re.split(r"(?<=[。；！？])", line) if s]
        third = max(1, -(-len(sentences) // 3))
        rows.append(["".join(sentences[i : i + third]) for i in range(0, len(sentences), third)] or [line])
    return rows


_FODP = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
 xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
 xmlns:dc="http://purl.org/dc/elements/1.1/"
 xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.presentation">
<office:meta>{meta}</office:meta>
<office:body><office:presentation>{slides}</office:presentation></office:body>
</office:document>
"""
_SLIDE = (
    '<draw:page draw:name="p{n}">'
    '<draw:frame presentation:class="title" svg:x="1cm" svg:y="0.5cm" svg:width="26cm" svg:height="2.5cm">'
    "<draw:text-box><text:p>{title}</text:p></draw:text-box></draw:frame>"
    '<draw:frame presentation:class="outline" svg:x="1cm" svg:y="3.5cm" svg:width="26cm" svg:height="14cm">'
    "<draw:text-box>{paras}</draw:text-box></draw:frame></draw:page>"
)
LINES_PER_SLIDE = 6


def _fodp(title: str, meta_title: str, lines: Sequence[str], heading: bool) -> str:
    slides = []
    for n, start in enumerate(range(0, max(1, len(lines)), LINES_PER_SLIDE), 1):
        chunk = lines[start : start + LINES_PER_SLIDE]
        slide_title = title if heading and n == 1 else ""
        paras = "".join(f"<text:p>{xml_escape(line)}</text:p>" for line in chunk)
        slides.append(_SLIDE.format(n=n, title=xml_escape(slide_title), paras=paras))
    meta = f"<dc:title>{xml_escape(meta_title)}</dc:title>" if meta_title else ""
    return _FODP.format(meta=meta, slides="".join(slides))


# --- conversion


def soffice() -> str:
    found = shutil.which("soffice") or shutil.which("libreoffice")
    if found is None:
        raise DocumentSiteError(
            "LibreOffice is needed to make the documents: apt-get install libreoffice-writer-nogui "
            "libreoffice-calc-nogui libreoffice-impress-nogui"
        )
    return found


def convert(inputs: Sequence[Path], target: str, outdir: Path, infilter: str = "", batch: int = 60) -> None:
    """Convert files with one LibreOffice process per batch (starting one costs a second
    or two; a batch converts many files in it), with a profile of its own so that it
    never meets a LibreOffice the user runs."""
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tansuo-lo-") as profile:
        for start in range(0, len(inputs), batch):
            cmd = [soffice(), f"-env:UserInstallation=file://{profile}", "--headless", "--norestore",
                   "--convert-to", target, "--outdir", str(outdir)]  # fmt: skip
            if infilter:
                cmd.insert(-4, f"--infilter={infilter}")
            cmd += [str(p) for p in inputs[start : start + batch]]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env={**os.environ, "HOME": profile})
            if proc.returncode != 0:
                raise DocumentSiteError(f"LibreOffice failed ({proc.returncode}): {proc.stderr[-500:]}")


# --- the site


def build_document_site(
    dest: Path,
    roots: Sequence[Path],
    per_format: int = 32,
    formats: Sequence[str] = tuple(FORMATS),
    seed: int = 1,
    hostile: bool = False,
    big_mb: int = 200,
    skip_pages: int = 0,
) -> list[SiteDocument]:
    """Build the site in ``dest`` unless one with the same recipe is there; return its
    documents. ``skip_pages`` leaves out the first pages of the sources, so that two
    sites (one to tune on, one to judge on) share no text."""
    dest = Path(dest)
    recipe = {"layout": LAYOUT_VERSION, "roots": [str(r) for r in roots], "per_format": per_format,
              "formats": list(formats), "seed": seed, "hostile": hostile, "big_mb": big_mb, "skip": skip_pages}  # fmt: skip
    found = _built(dest, recipe)
    if found is not None:
        return found
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        pages = source_pages(roots, limit=skip_pages + per_format * len(formats))[skip_pages:]
        if len(pages) < per_format * len(formats):
            raise DocumentSiteError(f"{len(pages)} usable pages for {per_format * len(formats)} documents")
        docs = _make_documents(stage, pages, per_format, formats, random.Random(seed))
        if hostile:
            docs += make_hostile(stage / "hostile", big_mb=big_mb, good_pdf=_first_pdf(stage, docs))
        _write_listings(stage, docs)
        (stage / "manifest.json").write_text(json.dumps([asdict(d) for d in docs], ensure_ascii=False, indent=0), "utf-8")
        (stage / "_types.json").write_text(json.dumps({d.path: d.content_type for d in docs}, indent=0), "utf-8")
        (stage / MARKER).write_text(json.dumps(recipe), "utf-8")
        stage.rename(dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return load_manifest(dest)


def load_manifest(root: Path) -> list[SiteDocument]:
    rows = json.loads((Path(root) / "manifest.json").read_text("utf-8"))
    return [SiteDocument(**row) for row in rows]


def _built(dest: Path, recipe: Mapping[str, object]) -> list[SiteDocument] | None:
    try:
        if json.loads((dest / MARKER).read_text("utf-8")) == recipe:
            return load_manifest(dest)
    except (OSError, ValueError):
        pass
    return None


def _make_documents(
    stage: Path, pages: Sequence[SourcePage], per_format: int, formats: Sequence[str], rng: random.Random
) -> list[SiteDocument]:
    work = stage / ".work"
    docs: list[SiteDocument] = []
    jobs: dict[tuple[str, str], list[tuple[Path, SiteDocument]]] = {}  # (target, infilter) -> inputs
    for n, page in enumerate(pages[: per_format * len(formats)]):
        fmt = FORMATS[formats[n % len(formats)]]
        choice = rng.random()
        meta_title = page.title if choice < 0.4 else (rng.choice(JUNK_TITLES) if choice < 0.7 else "")
        heading = rng.random() < 0.5
        octet = fmt.family != "text" and rng.random() < 0.2
        name = f"{n + 1:04d}"
        doc = SiteDocument(
            path=f"docs/{fmt.name}/{name}.{fmt.name}", format=fmt.name, link_text=page.title,
            meta_title=meta_title if fmt.family in ("writer", "impress") else "",
            content_type=OCTET if octet else fmt.content_type, source=page.url,
            text="\n".join(([page.title] if heading else []) + list(page.lines)),
        )  # fmt: skip
        docs.append(doc)
        out = stage / doc.path
        out.parent.mkdir(parents=True, exist_ok=True)
        if fmt.family == "text":
            _write_text(out, fmt.name, page, heading, doc, rng)
            continue
        src = work / fmt.name / f"{name}.{ {'writer': 'html', 'calc': 'csv', 'impress': 'fodp'}[fmt.family] }"
        src.parent.mkdir(parents=True, exist_ok=True)
        if fmt.family == "writer":
            src.write_text(_writer_html(page.title, doc.meta_title, page.lines, heading), "utf-8")
        elif fmt.family == "calc":
            buf = io.StringIO()
            csv.writer(buf).writerows(_rows(page.title, page.lines, heading))
            src.write_text(buf.getvalue(), "utf-8")
        else:
            src.write_text(_fodp(page.title, doc.meta_title, page.lines, heading), "utf-8")
        infilter = "CSV:44,34,76,1" if fmt.family == "calc" else ""
        jobs.setdefault((fmt.target, infilter), []).append((src, doc))
    for (target, infilter), items in jobs.items():
        outdir = work / "out" / hashlib.sha1(f"{target}{infilter}".encode()).hexdigest()[:8]
        convert([src for src, _ in items], target, outdir, infilter)
        suffix = target.split(":", 1)[0]
        for src, doc in items:
            made = outdir / f"{src.stem}.{suffix}"
            if not made.is_file():
                raise DocumentSiteError(f"LibreOffice made no {made.name} from {src.name}")
            shutil.move(made, stage / doc.path)
    shutil.rmtree(work, ignore_errors=True)
    return docs


def _write_text(out: Path, kind: str, page: SourcePage, heading: bool, doc: SiteDocument, rng: random.Random) -> None:
    if kind == "csv":
        buf = io.StringIO()
        csv.writer(buf).writerows(_rows(page.title, page.lines, heading))
        text = buf.getvalue()
    else:
        text = doc.text + "\n"
    if rng.random() < 0.3:  # a GB18030 file served with no charset: the extractor must detect it
        out.write_bytes(text.encode("gb18030"))
        doc.content_type = doc.content_type.split(";")[0]
        doc.extra["encoding"] = "gb18030"
    else:
        out.write_text(text, "utf-8")


def _write_listings(stage: Path, docs: Sequence[SiteDocument]) -> None:
    """Listing pages of links, the document's known title as each link's text; the
    front page links every listing page."""
    listings = []
    for n, start in enumerate(range(0, len(docs), LINKS_PER_LISTING), 1):
        chunk = docs[start : start + LINKS_PER_LISTING]
        items = "".join(
            f'<li><a href="{html.escape(d.path)}">{html.escape(d.link_text)}</a>（{d.format.upper()}）</li>' for d in chunk
        )
        name = f"list-{n}.html"
        listings.append(name)
        (stage / name).write_text(
            f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>文件下载 第 {n} 页</title></head>'
            f'<body><h1>文件下载 第 {n} 页</h1><ul>{items}</ul><p><a href="index.html">返回首页</a></p></body></html>',
            "utf-8",
        )
    links = "".join(f'<li><a href="{name}">文件下载 第 {i} 页</a></li>' for i, name in enumerate(listings, 1))
    (stage / "index.html").write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>文件下载中心</title></head>'
        f"<body><h1>文件下载中心</h1><p>本站提供的文件，按页列出。</p><ul>{links}</ul></body></html>",
        "utf-8",
    )


def _first_pdf(stage: Path, docs: Sequence[SiteDocument]) -> Path | None:
    return next((stage / d.path for d in docs if d.format == "pdf"), None)


# --- hostile files


def make_hostile(where: Path, big_mb: int = 200, good_pdf: Path | None = None) -> list[SiteDocument]:
    """The files a crawl must survive, each with the reason it is expected to be skipped
    or cut in ``extra["expect"]``."""
    where.mkdir(parents=True, exist_ok=True)
    made: list[SiteDocument] = []

    def add(name: str, data: bytes | None, fmt: str, expect: str, link: str) -> None:
        if data is not None:
            (where / name).write_bytes(data)
        made.append(SiteDocument(path=f"{where.name}/{name}", format=fmt, link_text=link, meta_title="",
                                 content_type=FORMATS[fmt].content_type, source="", text="",
                                 extra={"expect": expect}))  # fmt: skip

    add("bomb.docx", zip_bomb_docx(), "docx", "zip_bomb", "压缩炸弹文档")
    add("encrypted.pdf", encrypted_pdf(good_pdf), "pdf", "encrypted", "加密的文件")
    add("truncated.pdf", truncated_pdf(good_pdf), "pdf", "malformed", "不完整的文件")
    add("loop.pdf", looping_pdf(), "pdf", "malformed", "循环引用的文件")
    big = where / "big.pdf"
    large_pdf(big, big_mb * 1024 * 1024)
    add("big.pdf", None, "pdf", "too_large", "超大的文件")
    return made


def zip_bomb_docx(uncompressed: int = 1024**3, lying: bool = False) -> bytes:
    """A docx whose document.xml inflates to ``uncompressed`` bytes (1 GiB: about 1 MB
    compressed), declared in its ZIP headers, as a bomb made with zip tools is; with
    ``lying``, the headers claim 1 KiB instead."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CONTENT_TYPES)
        z.writestr("_rels/.rels", _RELS)
    head = buf.getvalue()
    # word/document.xml by hand: zipfile would inflate nothing, but would deflate the
    # whole gigabyte through Python's loop of writes; one compressor does it in seconds.
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    opening = b'<?xml version="1.0"?><w:document xmlns:w="x"><w:body><w:p><w:r><w:t>'
    chunk = b" " * (1 << 20)
    parts, crc, size = [compressor.compress(opening)], zlib.crc32(opening), len(opening)
    for _ in range((uncompressed - size) // len(chunk)):
        parts.append(compressor.compress(chunk))
        crc = zlib.crc32(chunk, crc)
        size += len(chunk)
    parts.append(compressor.flush())
    data = b"".join(parts)
    return _append_entry(head, "word/document.xml", data, claimed_size=1024 if lying else size, crc=crc)


def _append_entry(zip_bytes: bytes, name: str, deflated: bytes, claimed_size: int, crc: int) -> bytes:
    """``zip_bytes`` with one more deflated entry whose header says ``claimed_size``."""
    import struct

    src = zipfile.ZipFile(io.BytesIO(zip_bytes))
    out = io.BytesIO()
    central = []
    for info in src.infolist():
        offset = out.tell()
        raw = zip_bytes[info.header_offset:]
        name_len, extra_len = struct.unpack("<HH", raw[26:30])
        local = raw[: 30 + name_len + extra_len + info.compress_size]
        out.write(local)
        central.append(_central(info.filename.encode(), info.compress_type, info.CRC, info.compress_size,
                                info.file_size, offset))  # fmt: skip
    offset = out.tell()
    encoded = name.encode()
    out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(deflated), claimed_size,
                          len(encoded), 0) + encoded + deflated)  # fmt: skip
    central.append(_central(encoded, 8, crc, len(deflated), claimed_size, offset))
    start = out.tell()
    for entry in central:
        out.write(entry)
    size = out.tell() - start
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), size, start, 0))
    return out.getvalue()


def _central(name: bytes, method: int, crc: int, csize: int, usize: int, offset: int) -> bytes:
    import struct

    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc, csize, usize,
                       len(name), 0, 0, 0, 0, 0, offset) + name  # fmt: skip


_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="word/document.xml"/></Relationships>'
)


def encrypted_pdf(source: Path | None) -> bytes:
    """A PDF that needs a password to open (AES-256, by qpdf), made from ``source``."""
    qpdf = shutil.which("qpdf")
    if qpdf is None or source is None:
        raise DocumentSiteError("qpdf is needed for the encrypted PDF: apt-get install qpdf")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "e.pdf"
        subprocess.run([qpdf, "--encrypt", "用户密码", "owner", "256", "--", str(source), str(out)], check=True)
        return out.read_bytes()


def truncated_pdf(source: Path | None) -> bytes:
    """The first 40% of a real PDF: a download cut short."""
    data = source.read_bytes() if source is not None else _pdf([b"BT /F1 12 Tf 72 720 Td (x) Tj ET"])
    return data[: len(data) * 2 // 5]


def looping_pdf() -> bytes:
    """A PDF whose page tree loops: the Pages node lists itself among its kids, and a
    second Pages node is its own parent's kid, so a naive walk never ends."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 2 0 R 4 0 R] /Count 3 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R >>",
        b"<< /Type /Pages /Parent 2 0 R /Kids [4 0 R 2 0 R] /Count 2 >>",
        b"<< /Length 0 >>\nstream\n\nendstream",
    ]
    return _pdf_objects(objects)


def _pdf(contents: Sequence[bytes]) -> bytes:
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>"]  # fmt: skip
    stream = b"\n".join(contents)
    objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return _pdf_objects(objects)


def _pdf_objects(objects: Sequence[bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % n + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def large_pdf(path: Path, size: int) -> None:
    """A valid one-page PDF of ``size`` bytes, written in a second: its page's content
    stream is one line of text followed by a comment of filler."""
    text = b"BT /F1 24 Tf 72 720 Td (large file) Tj ET\n%"
    filler = size - 2000
    objects_head = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                    b"/Resources << /Font << /F1 5 0 R >> >> >>"]  # fmt: skip
    with path.open("wb") as out:
        out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for n, body in enumerate(objects_head, 1):
            offsets.append(out.tell())
            out.write(b"%d 0 obj\n" % n + body + b"\nendobj\n")
        offsets.append(out.tell())
        length = len(text) + filler + 1
        out.write(b"4 0 obj\n<< /Length %d >>\nstream\n" % length + text)
        block = b"x" * (1 << 20)
        left = filler
        while left > 0:
            out.write(block[: min(left, len(block))])
            left -= len(block)
        out.write(b"\n\nendstream\nendobj\n")
        offsets.append(out.tell())
        out.write(b"5 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n")
        xref = out.tell()
        out.write(b"xref\n0 6\n0000000000 65535 f \n")
        for offset in offsets:
            out.write(b"%010d 00000 n \n" % offset)
        out.write(b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref)


# --- serving


def document_site_routes(root: Path) -> dict[str, Callable[[object], tuple[int, dict[str, str], bytes]]]:
    """SiteServer routes that serve each document with the type the manifest gives it
    (octet-stream, WPS types, no charset), read when asked for, not held in memory."""
    types = json.loads((Path(root) / "_types.json").read_text("utf-8"))
    routes = {}
    for rel, content_type in types.items():
        path = Path(root) / rel

        def serve(_request: object, path: Path = path, content_type: str = content_type) -> tuple[int, dict[str, str], bytes]:
            if not path.is_file():
                return 404, {"Content-Type": "text/plain"}, b"not found"
            return 200, {"Content-Type": content_type}, path.read_bytes()

        routes["/" + rel] = serve
    return routes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--per-format", type=int, default=32)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-pages", type=int, default=0)
    parser.add_argument("--hostile", action="store_true")
    parser.add_argument("--big-mb", type=int, default=200)
    parser.add_argument("--source", type=Path, action="append", help="site root(s) to take pages from")
    args = parser.parse_args(argv)
    roots = args.source or [_demo_root(), _gimp_root()]
    docs = build_document_site(args.dest, roots, args.per_format, args.formats.split(","), args.seed,
                               args.hostile, args.big_mb, args.skip_pages)  # fmt: skip
    print(f"{len(docs)} documents in {args.dest}")
    return 0


def _demo_root() -> Path:
    from services.cli.demo_site import build_demo_site, default_cache

    root = default_cache().parent / "zh-docs-site"
    build_demo_site(root, documents=False)
    return root


def _gimp_root() -> Path:
    from bench.sites.gimp_site import build_gimp_site
    from services.cli.demo_site import default_cache

    root = default_cache().parent / "zh-gimp-site"
    build_gimp_site(root)
    return root


if __name__ == "__main__":
    sys.exit(main())
