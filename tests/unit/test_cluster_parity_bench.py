"""The cluster parity benchmark's own logic (bench/cluster/cluster_parity.py runs the crawls):
what counts as a page fetched twice, when link fields count as converged, and that
its block of docs/benchmarks.md survives the other benchmarks' rewrites."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bench import report
from bench.cluster import parity_report
from bench.cluster.cluster_parity import ClusterRun, EmbeddedRun, ParityResults
from bench.crawl.repeated_fetches import classify, page_fetches
from bench.measure import machine
from bench.pagerank.link_field_watch import Sample, converged_after, unranked_at
from bench.quality.known_items import Quality
from bench.serving import load_report
from services.cli.static_site_server import RequestRecord


def _get(path: str, at: float = 10.0) -> RequestRecord:
    return RequestRecord(time=at, wall_time=at, method="GET", path=path)


def test_a_page_fetched_again_counts_as_allowed_only_when_it_was_leased_at_the_kill() -> None:
    log = [_get("/robots.txt"), _get("/robots.txt"), _get("/a.html"), _get("/a.html"), _get("/b%20c.html"),
           _get("/b c.html"), _get("/d.html"), _get("/old.html", at=1.0), _get("/old.html", at=1.0)]  # fmt: skip
    fetches = page_fetches(log, since_wall=5.0)
    assert fetches["/b c.html"] == 2 and "/robots.txt" not in fetches and "/old.html" not in fetches
    repeats = classify(fetches, leased_at_kill={"/a.html"})
    assert (repeats.requests, repeats.pages) == (5, 3)
    assert repeats.after_lease == ("/a.html",) and repeats.unexplained == ("/b c.html",)


def test_link_fields_converge_only_once_every_page_is_indexed_and_none_lacks_pagerank() -> None:
    samples = [Sample(0.0, 90, 0), Sample(2.0, 100, 30), Sample(4.1, 100, 0)]
    assert converged_after(samples, expected_docs=100) == 4.1
    assert converged_after(samples[:2], expected_docs=100) is None
    assert unranked_at(samples, 3.0) == samples[1]


def _results(unranked_at_limit: int, mrr_gap: float) -> ParityResults:
    quality = Quality(900, 0.95, {"title": (300, 0.99)}, 10.0)
    samples = (Sample(0.0, 2590, 400), Sample(58.0, 2590, unranked_at_limit), Sample(90.0, 2590, 0))
    cluster = ClusterRun(
        settings={"TANSUO_FRONTIER_LEASE_TIMEOUT_S": "30"}, docs=2590, missing=(), extra=(), fetched_at_kill=860,
        leased_at_kill=12, crawl_s=400.0, settled_after_kill_s=250.0, samples=samples,
        fetches=classify(page_fetches([_get("/a.html"), _get("/a.html")]), {"/a.html"}),
        quality=Quality(900, 0.95 + mrr_gap, {"title": (300, 0.98)}, 60.0), replaced=False,
    )  # fmt: skip
    embedded = EmbeddedRun(2590, 0, 300.0, classify(page_fetches([_get("/a.html")])), quality)
    return ParityResults(datetime(2026, 1, 2, 3, 4, tzinfo=UTC), 1200.0, machine.describe(), 2560,
                         (1.0, 2.0), 60.0, 900, 300, embedded, cluster)  # fmt: skip


def test_the_block_says_which_pass_marks_were_met() -> None:
    good = _results(unranked_at_limit=0, mrr_gap=-0.01)
    assert parity_report.passed(good)
    text = parity_report.render(good)
    assert "2026-01-02 03:04 UTC" in text and "`TANSUO_FRONTIER_LEASE_TIMEOUT_S=30`" in text and "**NO**" not in text
    assert not parity_report.passed(_results(unranked_at_limit=5, mrr_gap=0.0))
    assert not parity_report.passed(_results(unranked_at_limit=0, mrr_gap=0.03))
    assert "**NO**" in parity_report.render(_results(unranked_at_limit=5, mrr_gap=0.0))


def test_the_block_survives_the_other_benchmarks_writing_theirs(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nearlier results\n", encoding="utf-8")
    parity_report.BLOCK.write(out, "## Cluster parity\n\nfirst")
    load_report.write(out, "## Load\n\nload figures")
    parity_report.BLOCK.write(out, "## Cluster parity\n\nsecond")
    text = out.read_text(encoding="utf-8")
    assert "second" in text and "first" not in text and "load figures" in text
    assert parity_report.BLOCK.extract(text).count("Cluster parity") == 1
    assert report.PARITY_BLOCK.extract(text) == parity_report.BLOCK.extract(text)
