"""The benchmark's own parts: the naive crawler it compares against, the slow site and
the report writer. The benchmark itself is not run here (bench/ records timings)."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench import report
from bench.crawl import crawl_profile
from bench.crawl.crawl_bench import NAIVE, Contender, CrawlCondition, CrawlRun
from bench.crawl.naive_crawler import crawl
from bench.indexing.index_bench import IndexComparison, IndexRun
from bench.measure import machine
from bench.serving.search_bench import LatencyStats, SearchComparison
from bench.sites.slow_site import SlowSiteServer
from services.cli.static_site_server import SiteServer

PAGES = {
    "index.html": '<title>首页</title><a href="a.html">甲</a> <a href="b.html#top">乙</a> '
    '<a href="http://other.example/">外站</a> <a href="mailto:x@example.cn">信</a>',
    "a.html": '<a href="b.html">乙</a> <a href="c.html">丙</a> <a href="index.html#x">首页</a>',
    "b.html": '<a href="d.html">丁</a> <a href="missing.html">坏链接</a>',
    "c.html": '<a href="d.html#part">丁</a>',
    "d.html": "<p>没有链接</p>",
}


@pytest.fixture
def five_page_site(tmp_path: Path) -> Iterator[SiteServer]:
    site = tmp_path / "site"
    site.mkdir()
    for name, html in PAGES.items():
        (site / name).write_text(f"<!DOCTYPE html><meta charset=utf-8>{html}", encoding="utf-8")
    with SiteServer(site) as server:
        yield server


def test_the_naive_crawler_fetches_every_same_host_url_once(five_page_site: SiteServer) -> None:
    result = crawl(five_page_site.url + "index.html")
    paths = [r.path for r in five_page_site.requests]
    assert sorted(paths) == ["/a.html", "/b.html", "/c.html", "/d.html", "/index.html", "/missing.html"]
    assert (result.fetched, result.html_pages, result.errors) == (6, 5, 1)


def test_the_slow_site_holds_back_every_answer(five_page_site: SiteServer) -> None:
    with SlowSiteServer(five_page_site.root, latency_s=0.05) as slow:
        started = time.perf_counter()
        with urllib.request.urlopen(slow.url + "d.html", timeout=5) as response:
            assert response.status == 200
        assert time.perf_counter() - started >= 0.05


def _results() -> report.BenchResults:
    def runs(pages_per_s: float) -> list[CrawlRun]:
        return [CrawlRun(pages=100, wall_s=100 / pages_per_s, first_request_s=0.1, last_request_s=100 / pages_per_s - 0.1)]

    conditions = [
        CrawlCondition(0, Contender(NAIVE, runs(50.0)), [Contender("tansuo crawl", runs(10.0))]),
        CrawlCondition(50, Contender(NAIVE, runs(15.0)), [Contender("tansuo crawl", runs(30.0))]),
    ]
    index = IndexComparison(
        tansuo=[IndexRun(2000, build_s=8.0, write_s=1.0, commit_s=1.0, close_s=0.0, cpu_s=10.0)],
        fts5=[IndexRun(2000, build_s=8.0, write_s=3.0, commit_s=1.0, close_s=0.0)],
        tansuo_data_dir=Path("unused"),
        fts5_path=Path("unused"),
        floor_s=[4.0],
        tantivy_floor_s=[3.0],
        field_floor_s=[{"words": 1.0, "words and bigrams": 2.0}],
    )
    kinds = ["title", "English"] * 50
    search = SearchComparison(
        queries=100,
        kinds={"title": 50, "English": 50},
        docs=2000,
        tansuo=LatencyStats([float(n % 10 + 1) for n in range(100)], 100, kinds),
        fts5=LatencyStats([float(n % 10 + 2) for n in range(100)], 99, kinds),
        same_total=98,
    )
    return report.BenchResults(
        quick=False,
        started=datetime(2025, 11, 22, 12, 0, tzinfo=UTC),
        duration_s=300.0,
        machine=machine.describe(),
        site_pages=255,
        load=(0.5, 0.7),
        crawl=conditions,
        index=index,
        search=search,
    )


def test_the_report_holds_the_machine_the_date_and_every_ratio(tmp_path: Path) -> None:
    out = tmp_path / "docs" / "benchmarks.md"
    report.write(out, _results())
    text = out.read_text(encoding="utf-8")
    assert "2025-11-22 12:00 UTC" in text
    assert machine.describe().cpu in text and "| Cores | " in text and "Python" in text
    assert "| **0.20** |" in text  # crawl, no latency: 10 / 50 pages/s
    assert "| **2.00** |" in text  # crawl, 50 ms: 30 / 15 pages/s
    assert "Ratio, docs/s: **1.20**" in text  # 2000/10 s over 2000/12 s
    assert "Ratio (Tansuo ÷ FTS5) | **0.83** |" in text  # p50 5 ms over 6 ms
    # Indexing against its floors: 8 s building against 4 s of rjieba; 2,000 documents in
    # 10 s of CPU against 4 + 3 s for rjieba and tantivy alone.
    assert "**2.0x** the time of rjieba" in text and "**200 documents per CPU second**" in text
    assert "**286 documents per CPU second** on this machine" in text and "reaches **0.70** of it" in text
    # The word fields alone 1 s, with the bigrams 2 s: 2,000 documents in 4 + 1 and 4 + 2 s.
    assert "0.50 ms of CPU a document" in text and "allow 400 documents" in text and "**333**" in text
    assert not (tmp_path / "docs" / "benchmarks.md.tmp").exists()


def test_a_full_rewrite_keeps_the_crawl_profile_below_the_crawl_section(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    block = f"{crawl_profile.START}\n### 1b. Where a crawl's CPU goes\n{crawl_profile.END}\n"
    out.write_text(f"# Benchmarks\n\nold results\n\n{block}", encoding="utf-8")
    report.write(out, _results())
    text = out.read_text(encoding="utf-8")
    assert text.count(crawl_profile.START) == 1 and "old results" not in text
    assert text.index("### 1. Crawl") < text.index("### 1b.") < text.index("### 2. Indexing")


def test_commit_cost_reports_each_commit_size_and_interval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.indexing import commit_cost

    site = tmp_path / "site"
    site.mkdir()
    for name, html in PAGES.items():
        (site / name).write_text(f"<!DOCTYPE html><meta charset=utf-8>{html}<p>软件包管理{name}</p>", encoding="utf-8")
    args = ["--site", str(site), "--copies", "2", "--rounds", "1", "--sizes", "2,100", "--rate", "200",
            "--intervals", "0.05"]  # fmt: skip
    assert commit_cost.main(args) == 0
    out = capsys.readouterr().out
    assert "10 pages of `site`" in out
    assert "| 2 | **" in out and out.split("| 2 | **")[1].split("\n")[0].endswith("| 5 |")  # five commits, unmerged
    assert "| 100 | **" in out and out.split("| 100 | **")[1].split("\n")[0].endswith("| 1 |")
    assert "| 0.05 | **" in out
