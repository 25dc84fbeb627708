"""Does extracting a 100 MB PDF slow the crawl of a site's HTML pages? Pages per second
of the same embedded crawl with and without the PDF, in one run, alternated.

The site is the LibreOffice help in Chinese (bench/sites/libreoffice_help_site.py,
about 2,600 pages). The PDF is a real one (LibreOffice's rendering of Chinese pages of
the demo site) with its pages repeated by qpdf until it passes the size asked for;
the caps are raised so that it is read whole (every page's text; the event sent on
is cut to the bus's message size, as any). It is the first seed, so it is fetched
first and its extraction runs while the pages are crawled. Pages per second are read
from the site server's request log (first to last HTML request), so the extraction
left after the last page is not counted against either run.

    python -m bench.documents.crawl_beside_extraction [--mb 100] [--rounds 2] [--baseline DIR]

With ``--baseline DIR`` (another checkout, e.g. ``git worktree add --detach DIR main``)
each round also runs both crawls from DIR's code, alternated with this checkout's, so
that a change is compared with its base under the same load; each row gives the load
average at its start and the HTML pages fetched in each second.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.sites.document_site import convert
from bench.sites.libreoffice_help_site import build_libreoffice_help_site
from services.cli.demo_site import default_cache
from services.cli.static_site_server import SiteServer

PDF_PATH = "/big-report.pdf"


def big_pdf(dest: Path, megabytes: int) -> Path:
    """A PDF of ``megabytes`` MB (within 3% above): long Chinese pages rendered by
    LibreOffice, their pages repeated by qpdf, then cut to the pages that make the size."""
    target = megabytes * 1024 * 1024
    if dest.is_file() and target <= dest.stat().st_size <= target * 1.03:
        return dest
    qpdf = shutil.which("qpdf")
    if qpdf is None:
        raise SystemExit("qpdf is needed: apt-get install qpdf")
    from services.cli.demo_site import build_demo_site

    demo = default_cache().parent / "zh-docs-site"
    build_demo_site(demo)
    pages = sorted((demo / "handbook").rglob("*.html"), key=lambda p: -p.stat().st_size)[:6]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        convert(pages, "pdf:writer_pdf_Export", work)
        seed = work / "seed.pdf"
        subprocess.run([qpdf, "--empty", "--pages", *[str(work / f"{p.stem}.pdf") for p in pages], "--", str(seed)],
                       check=True)  # fmt: skip
        current = seed
        while current.stat().st_size < target:
            doubled = work / f"x{current.stat().st_size}.pdf"
            subprocess.run([qpdf, "--empty", "--pages", str(current), str(current), "--", str(doubled)], check=True)
            current = doubled
        shutil.copyfile(_cut_to(qpdf, current, target, work), dest)
    return dest


def _cut_to(qpdf: str, pdf: Path, target: int, work: Path) -> Path:
    """The fewest first pages of ``pdf`` whose file reaches ``target`` bytes (its pages are alike in size)."""
    pages = int(subprocess.run([qpdf, "--show-npages", str(pdf)], check=True, capture_output=True, text=True).stdout)
    keep = min(pages, -(-target * pages // pdf.stat().st_size))
    while True:
        cut = work / f"cut{keep}.pdf"
        subprocess.run([qpdf, "--empty", "--pages", str(pdf), f"1-{keep}", "--", str(cut)], check=True)
        if cut.stat().st_size >= target or keep == pages:
            return cut
        keep = min(pages, keep + max(1, pages // 200))


def crawl(site: Path, pdf: Path | None, data: Path, code: Path | None = None) -> dict[str, object]:
    routes = {}
    if pdf is not None:
        routes[PDF_PATH] = lambda _request: (200, {"Content-Type": "application/pdf"}, pdf.read_bytes())
    env = {**os.environ, "TANSUO_DOCUMENTS_MAX_BYTES": str(400 * 1024 * 1024),
           "TANSUO_DOCUMENTS_MAX_PAGES": "1000000", "TANSUO_DOCUMENTS_MAX_CHARS": "100000000",
           "TANSUO_DOCUMENTS_TIMEOUT_S": "3000", "TANSUO_DOCUMENTS_WORKER_MEMORY_MB": "4096"}  # fmt: skip
    with SiteServer(site, extra_routes=routes) as server:
        seeds = ([server.url.rstrip("/") + PDF_PATH] if pdf is not None else []) + [server.url]
        load = os.getloadavg()[0]
        started = time.perf_counter()
        # ``-m`` puts the working directory first on sys.path: ``code``'s services run.
        subprocess.run([sys.executable, "-m", "services.cli.main", "crawl", *seeds, "--data", str(data),
                        "--allow-private-networks", "--delay", "0", "--no-progress"], env=env, check=True,
                       cwd=code)  # fmt: skip
        total = time.perf_counter() - started
        html = [r.time for r in server.requests if r.path.endswith(".html") or r.path.endswith("/")]
    span = max(html) - min(html)
    per_second = [0] * (int(span) + 1)
    for t in html:
        per_second[int(t - min(html))] += 1
    return {"html_pages": len(html), "html_seconds": round(span, 2), "pages_per_s": round(len(html) / span, 1),
            "crawl_seconds": round(total, 1), "load": round(load, 2), "per_second": per_second[:-1]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--baseline", type=Path, help="another checkout, run alternated with this one")
    args = parser.parse_args(argv)
    site = default_cache().parent / "zh-lo-help-site"
    build_libreoffice_help_site(site)
    pdf = big_pdf(default_cache().parent / f"big-{args.mb}mb.pdf", args.mb)
    print(f"PDF: {pdf.stat().st_size / 1e6:.1f} MB", flush=True)
    rows = []
    codes: list[tuple[str, Path | None]] = [("this", None)]
    if args.baseline:
        codes = [("baseline", args.baseline.resolve()), *codes]
    for n in range(args.rounds):
        for code, where in codes if n % 2 == 0 else codes[::-1]:
            # Which crawl goes first alternates too: a crawl's page cache and the machine's load favour neither.
            runs = (("pages only", None), ("pages + PDF", pdf))
            for label, with_pdf in runs if n % 2 == 0 else runs[::-1]:
                with tempfile.TemporaryDirectory(prefix="tansuo-beside-") as tmp:
                    row = {
                        "round": n + 1,
                        "code": code,
                        "run": label,
                        **crawl(site, with_pdf, Path(tmp) / "data", where),
                    }
                rows.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)
    ratios = {}
    for code, _ in codes:
        base = [r["pages_per_s"] for r in rows if r["run"] == "pages only" and r["code"] == code]
        beside = [r["pages_per_s"] for r in rows if r["run"] == "pages + PDF" and r["code"] == code]
        ratios[code] = (sum(beside) / len(beside)) / (sum(base) / len(base))  # type: ignore[arg-type]
        print(f"{code}: pages/s beside the PDF's extraction / alone: {ratios[code]:.3f}")
    ratio = ratios["this"]
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "ratio": ratio}, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
