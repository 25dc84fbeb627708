"""Documents end to end: a site of documents in every format, made by LibreOffice from
real pages of the demo site, plus the hostile files, crawled by `tansuo crawl`.

The crawl must end by itself with every document indexed and findable by a quote of
its text and by its link text, each hostile file reported with its reason, and the
crawl's processes (crawler, index process, extraction workers) under 1 GB together.
The site is built once into ~/.cache/tansuo (about a minute of LibreOffice) and reused.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.documents.document_crawl import TreeMemory
from bench.sites.document_site import build_document_site, document_site_routes
from services.cli.static_site_server import SiteServer
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.search.search_service import SearchService

from .conftest import CACHE, run_cli

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("soffice") is None or shutil.which("qpdf") is None,
                       reason="LibreOffice and qpdf make the documents (scripts/install.sh test installs them)"),
]  # fmt: skip
_HAN_RUN = re.compile("[\u4e00-\u9fff]{10,}")


@pytest.fixture(scope="module")
def crawled(docs_site_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    site = CACHE / "test-document-site"
    docs = build_document_site(site, [docs_site_dir], per_format=1, hostile=True, big_mb=60)
    data = tmp_path_factory.mktemp("documents") / "data"
    with SiteServer(site, extra_routes=document_site_routes(site)) as server:
        proc = subprocess.Popen([sys.executable, "-m", "services.cli.main", "crawl", server.url, "--data", str(data),
                                 "--allow-private-networks", "--delay", "0", "--no-progress"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
        memory = TreeMemory(proc)
        output, _ = proc.communicate(timeout=600)
        base = server.url
    report = json.loads(run_cli("report", "--data", str(data), "--json").stdout)
    return {"docs": docs, "data": data, "base": base, "exit": proc.returncode, "output": output.decode(),
            "peak_mb": memory.peak_kib / 1024, "report": report["totals"]}  # fmt: skip


def test_the_crawl_ends_by_itself_under_a_gigabyte(crawled: dict) -> None:
    assert crawled["exit"] == 0, crawled["output"][-2000:]
    assert 0 < crawled["peak_mb"] < 1024


def test_every_hostile_file_is_reported_with_its_reason(crawled: dict) -> None:
    documents, limits = crawled["report"]["extraction"], crawled["report"]["limits"]
    assert documents.get("zip_bomb") == 1  # bomb.docx
    assert documents.get("encrypted") == 1  # encrypted.pdf
    assert documents.get("malformed", 0) + documents.get("no_text", 0) == 2  # truncated.pdf, loop.pdf
    assert limits.get("page_size") == 1  # big.pdf, over the 50 MB document cap: not downloaded


def test_every_other_document_is_indexed_and_found_by_a_quote_and_by_its_link_text(crawled: dict) -> None:
    wanted = [d for d in crawled["docs"] if d.text]
    assert len({d.format for d in wanted}) == 16
    assert crawled["report"]["extraction"].get("extracted") == len(wanted)
    cfg = Settings(data_dir=crawled["data"])
    service = SearchService(cfg, build_search_index(cfg, read_only=True))
    for doc in wanted:
        url = crawled["base"] + doc.path
        quote = next(run[:10] for run in _HAN_RUN.findall(doc.text))
        found = [r["url"] for r in service.search(f'"{quote}"', size=10)["results"]]
        assert url in found[:1], (doc.format, quote, found[:3])
        by_link = service.search(doc.link_text, size=10)["results"]
        assert url in [r["url"] for r in by_link], (doc.format, doc.link_text)


def test_a_pdf_result_shows_its_format_size_pages_and_title(crawled: dict) -> None:
    pdf = next(d for d in crawled["docs"] if d.format == "pdf" and d.text)
    cfg = Settings(data_dir=crawled["data"])
    result = SearchService(cfg, build_search_index(cfg, read_only=True)).search(f"filetype:pdf {pdf.link_text}")
    assert {r["filetype"] for r in result["results"]} == {"pdf"}
    top = result["results"][0]
    assert top["url"] == crawled["base"] + pdf.path
    assert top["size"] == (Path(CACHE / "test-document-site") / pdf.path).stat().st_size and top["pages"] >= 1
    # Its own title when the file holds a real one (the page's), else its link's text: the same here.
    assert top["title"] == pdf.link_text
