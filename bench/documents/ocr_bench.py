"""OCR of scanned Chinese pages: pages per second and character accuracy.

Real pages (PDFs LibreOffice made of the demo site's Chinese pages, from a document
site of bench/sites/document_site.py) are rendered to images by poppler's pdftoppm,
as a scanner would make them, and wrapped into image-only PDFs (Pillow). Tansuo's
extractor reads those with OCR on (services/extractor/ocr.py: PDFium renders the page,
Tesseract reads it with chi_sim+chi_tra+eng). Accuracy is against each page's own
text layer in the original PDF: 1 - edit distance / length, over the Han characters
(order kept; spaces, Latin letters and punctuation left out), and again with both
texts folded to one script, as the index folds them (OCR with chi_tra beside chi_sim
reads some characters in their traditional form).

    python -m bench.documents.ocr_bench SITE [--pages 24] [--dpi 200] [--out FILE.json]
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
from pathlib import Path

_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one row at a time."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the tesseract runs)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def han(text: str) -> str:
    return "".join(_HAN.findall(text))


def scanned_pages(site: Path, pages: int, dpi: int, work: Path) -> list[tuple[Path, str]]:
    """(image-only one-page PDF, the original page's text) for ``pages`` pages."""
    import pypdfium2 as pdfium
    from PIL import Image

    if shutil.which("pdftoppm") is None:
        raise SystemExit("pdftoppm is needed: apt-get install poppler-utils")
    out: list[tuple[Path, str]] = []
    for pdf_path in sorted((site / "docs" / "pdf").glob("*.pdf")):
        pdf = pdfium.PdfDocument(str(pdf_path))
        for number in range(len(pdf)):
            text = pdf[number].get_textpage().get_text_range()
            if len(han(text)) < 200:
                continue
            prefix = work / f"{pdf_path.stem}-{number + 1}"
            subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", "-png", "-f", str(number + 1), "-l", str(number + 1),
                            str(pdf_path), str(prefix)], check=True)  # fmt: skip
            image = next(work.glob(f"{prefix.name}*.png"))
            scan = prefix.with_suffix(".pdf")
            Image.open(image).convert("L").save(scan, "PDF", resolution=dpi)
            out.append((scan, text))
            if len(out) >= pages:
                return out
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--pages", type=int, default=24)
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from services.common.analysis.fold import fold
    from services.common.config import Settings
    from services.extractor.extract_document import extract_document
    from services.extractor.ocr import page_ocr

    cfg = Settings(documents_ocr=True, documents_ocr_dpi=args.dpi)
    ocr = page_ocr(cfg)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tansuo-ocr-") as tmp:
        scans = scanned_pages(args.site, args.pages, args.dpi, Path(tmp))
        for scan, truth in scans:
            data = scan.read_bytes()
            started, cpu = time.perf_counter(), _cpu()
            found = extract_document(data, "application/pdf", ocr=ocr)
            seconds, cpu_s = time.perf_counter() - started, _cpu() - cpu
            want, got = han(truth), han(found.body)
            accuracy = 1 - edit_distance(want, got) / max(1, len(want))
            # As a search sees them: both folded to one script (traditional 張 = 张).
            folded = 1 - edit_distance(fold(want), fold(got)) / max(1, len(want))
            rows.append({"page": scan.stem, "seconds": round(seconds, 2), "cpu_s": round(cpu_s, 2), "han": len(want),
                         "accuracy": round(accuracy, 4), "folded_accuracy": round(folded, 4)})  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    total_s = sum(r["seconds"] for r in rows)
    chars = sum(r["han"] for r in rows)
    weighted = sum(r["accuracy"] * r["han"] for r in rows) / max(1, chars)
    folded_weighted = sum(r["folded_accuracy"] * r["han"] for r in rows) / max(1, chars)
    cpu_total = sum(r["cpu_s"] for r in rows)
    summary = {"pages": len(rows), "pages_per_s": round(len(rows) / total_s, 3), "seconds_per_page": round(total_s / len(rows), 2),
               "cpu_s_per_page": round(cpu_total / len(rows), 2),
               "han_accuracy": round(weighted, 4), "han_accuracy_folded": round(folded_weighted, 4), "dpi": args.dpi, "languages": cfg.documents_ocr_languages}  # fmt: skip
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "pages": rows}, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
