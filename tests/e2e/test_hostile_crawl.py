"""A one-pass `tansuo crawl` of the hostile site (tests/hostile_site.py) with default
limits finishes by itself, never fetches what robots.txt (reached through two
redirects) disallows, never leaves the seed's port, indexes every well-formed page
with the right text and nothing that is not a page, and caps what must be capped;
the cluster's crawl of the same site ends with the same index."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from services.common.bootstrap import build_search_index
from services.common.config import Settings
from tests.hostile_site import (
    BIG5_TEXT,
    DISALLOWED,
    GB18030_TEXT,
    GBK_TEXT,
    NOT_INDEXED,
    SLOW_HOST_CRAWL_DELAY,
    SLOW_HOST_PAGES,
    WELL_FORMED,
    RunningHostileSite,
)
from tests.process_memory import PeakMemory

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
PEAK_RSS_KIB = [0]  # the crawl's, set by the fixture


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, Path, str]]:
    data = tmp_path_factory.mktemp("hostile")
    with RunningHostileSite() as site:
        log = data / "crawl.log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "services.cli.main", "crawl", site.base + "/", site.slow_host_base + "/",
                 *[base + "/" for base in site.robots_trouble_bases.values()],
                 "--data", str(data), "--no-progress", "--allow-private-networks", "--delay", "0"],
                cwd=REPO, stdout=subprocess.DEVNULL, stderr=out,
                # The one-byte-a-second page would hold the crawl for 3 x 30 s at the default timeout.
                env={"PATH": "/usr/bin:/bin", "TANSUO_CRAWLER_TIMEOUT_S": "5"},
            )  # fmt: skip
            peak = PeakMemory(proc)  # the crawl's own, not this test process's (see there)
            peak.join()
        stderr = log.read_text()
        assert proc.returncode == 0, stderr[-3000:]
        PEAK_RSS_KIB[0] = peak.kib
        yield site, data, stderr


def test_the_crawl_finishes_by_itself(crawled) -> None:
    _, _, stderr = crawled
    assert "crawl finished" in stderr


def test_the_crawl_stays_under_500_mb_of_memory(crawled) -> None:
    print(f"crawl peak RSS {PEAK_RSS_KIB[0] // 1024} MiB")
    assert PEAK_RSS_KIB[0] < 500 * 1024, f"peak {PEAK_RSS_KIB[0] // 1024} MiB"  # KiB on Linux


def test_nothing_disallowed_is_fetched_after_a_redirected_robots_txt(crawled) -> None:
    site, _, _ = crawled
    paths = site.paths()
    assert paths[:3] == ["/robots.txt", "/robots/moved-again.txt", "/robots/real.txt"]
    assert not [p for p in paths if p.startswith(DISALLOWED)]


def test_no_two_requests_to_a_host_come_closer_than_its_crawl_delay(crawled) -> None:
    # --delay 0 lets a host take parallel fetches; its Crawl-delay must still win.
    site, _, _ = crawled
    hits = site.slow_host_hits
    assert len(hits) == 3 + SLOW_HOST_PAGES  # robots.txt, /sitemap.xml, the home page, its pages
    gaps = [b.at - a.at for a, b in pairwise(hits)]
    assert min(gaps) >= SLOW_HOST_CRAWL_DELAY, gaps


@pytest.mark.parametrize("trouble", ["timeout", "server-error"])
def test_a_host_whose_robots_txt_cannot_be_had_is_not_crawled(crawled, trouble: str) -> None:
    # RFC 9309 2.3.1.4: an unreachable robots.txt means complete disallow; the one-pass
    # crawl gives the host up (and says so in the report) instead of waiting for ever.
    site, data, _ = crawled
    paths = site.robots_trouble_paths[trouble]
    assert paths and set(paths) == {"/robots.txt"}, paths
    assert _index(data).get(site.robots_trouble_bases[trouble] + "/") is None
    report = _report(data)
    (row,) = [r for r in report["hosts"] if r["host"] == site.robots_trouble_bases[trouble].split("//")[1]]
    assert "robots.txt" in json.dumps(row, ensure_ascii=False), row


def test_the_rule_before_a_megabyte_of_robots_junk_holds(crawled) -> None:
    site, data, _ = crawled
    paths = site.robots_trouble_paths["junk"]
    assert "/open.html" in paths and not [p for p in paths if p.startswith("/private/")], paths
    assert _index(data).get(site.robots_trouble_bases["junk"] + "/open.html") is not None


def test_no_request_reaches_another_port_of_the_address(crawled) -> None:
    site, _, _ = crawled
    assert site.other_port_hits == []


def test_traps_are_cut_by_the_default_limits(crawled) -> None:
    site, _, _ = crawled
    paths = site.paths()
    assert 15 <= sum(p.startswith("/calendar") for p in paths) <= 21
    assert sum(p.startswith("/redirect-chain/") for p in paths) <= 21
    assert sum(p.startswith("/deeper/") for p in paths) <= 10
    assert sum(p.startswith("/session") for p in paths) == 1  # session ids stripped: one URL
    assert sum(p.startswith("/redirect-loop-") for p in paths) == 2


def _report(data: Path) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-m", "services.cli.main", "report", "--data", str(data), "--json"],
                         cwd=REPO, capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _index(data: Path):
    return build_search_index(Settings(data_dir=data), read_only=True)


@pytest.mark.parametrize("path", sorted(WELL_FORMED))
def test_every_well_formed_page_is_indexed_with_its_title(crawled, path: str) -> None:
    site, data, _ = crawled
    doc = _index(data).get(site.base + path)
    assert doc is not None and doc.title == WELL_FORMED[path]


@pytest.mark.parametrize(
    ("path", "text"),
    [("/charset/big5-undeclared.html", BIG5_TEXT), ("/charset/big5-declared.html", BIG5_TEXT),
     ("/charset/gbk-meta-says-utf8.html", GBK_TEXT), ("/charset/gbk-undeclared.html", GBK_TEXT),
     ("/charset/gb18030-declared.html", GB18030_TEXT)],
)  # fmt: skip
def test_chinese_encodings_are_indexed_as_the_right_text(crawled, path: str, text: str) -> None:
    site, data, _ = crawled
    doc = _index(data).get(site.base + path)
    assert doc is not None and text in doc.body


@pytest.mark.parametrize("path", NOT_INDEXED)
def test_binary_huge_and_slow_responses_are_not_indexed(crawled, path: str) -> None:
    site, data, _ = crawled
    assert site.base + path in [site.base + p for p in site.paths()]
    assert _index(data).get(site.base + path) is None


def test_a_huge_title_is_stored_capped(crawled) -> None:
    site, data, _ = crawled
    doc = _index(data).get(site.base + "/huge/title.html")
    assert doc is not None and doc.title == "长" * 512


def test_the_frontier_shows_which_limits_cut(crawled) -> None:
    _, data, _ = crawled
    out = subprocess.run([sys.executable, "-m", "services.cli.main", "frontier", "--data", str(data), "--json"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    import json

    limits = json.loads(out.stdout)["limits"]
    assert {"max_depth", "path_repetition", "title_length", "outlinks"} <= set(limits), limits


def test_the_crawl_report_says_what_was_skipped_and_why(crawled) -> None:
    site, data, _ = crawled
    out = subprocess.run([sys.executable, "-m", "services.cli.main", "report", "--data", str(data), "--json"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    import json

    (row,) = [r for r in json.loads(out.stdout)["hosts"] if r["host"] == site.base.split("//")[1]]
    assert row["skipped"].get("robots", 0) >= 1
    assert {"max_depth", "path_repetition", "title_length"} <= set(row["limits"])
    assert row["fetched"] >= len(WELL_FORMED)


@pytest.mark.browser
def test_no_stored_title_or_snippet_runs_script_in_the_browser(crawled) -> None:
    import urllib.parse

    from services.api.app import create_app
    from services.common.runtime.http.inprocess_server import serve
    from tests.e2e.chromium import headless_chromium

    _, data, _ = crawled
    running = serve(create_app(Settings(data_dir=data)), "127.0.0.1", 0)  # read-only, as `tansuo serve`
    dialogs: list[str] = []
    titles: dict[str, list[str]] = {}
    try:
        with headless_chromium() as browser:
            page = browser.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            for query in ("标题", "正文内容", "alert", "script"):
                page.goto(f"{running.url}/?q={urllib.parse.quote(query)}")
                page.wait_for_load_state("load")
                titles[query] = page.locator("li.result .result-title").all_inner_texts()
                page.wait_for_timeout(300)  # let any injected handler (onerror) fire
    finally:
        running.shutdown()
    assert dialogs == []
    assert any("<script>alert('title')</script>" in t for t in titles["标题"]), titles


# --- the same hostile crawl by the cluster ---------------------------------------------


def _by_role(site, urls_titles: dict[str, str]) -> dict[str, str]:
    """URL → title with each host of the site named by its role, so that two runs of
    the site on other ports compare."""
    roles = {site.base: "main", site.slow_host_base: "slow", site.other_port_base: "other"}
    roles |= {base: f"robots-{trouble}" for trouble, base in site.robots_trouble_bases.items()}
    out = {}
    for url, title in urls_titles.items():
        base = next(b for b in roles if url.startswith(b + "/"))
        out[roles[base] + url[len(base) :]] = title
    return out


def _titles(index) -> dict[str, str]:
    return {url: index.get(url).title for url in index.urls()}


@pytest.mark.integration
def test_the_cluster_crawl_of_the_hostile_site_ends_with_the_same_index(
    crawled, tmp_path, redis_server, kafka_broker, s3_endpoint, es_url
) -> None:
    from tests.cluster import Cluster, cluster_env

    from .test_cluster_crawl import _frontier
    from .test_cluster_crawl import _index as _cluster_index

    embedded_site, data, _ = crawled
    expected = _by_role(embedded_site, _titles(_index(data)))
    assert len(expected) >= len(WELL_FORMED) + 2  # the site's pages, the junk-robots host's two
    env = cluster_env(tmp_path, redis_server, kafka_broker, s3_endpoint, es_url)
    env |= {"TANSUO_CRAWLER_TIMEOUT_S": "5", "TANSUO_FRONTIER_HOST_DELAY_S": "0"}
    cluster = Cluster(env, tmp_path)
    with RunningHostileSite() as site:
        try:
            for name in ("scheduler", "crawler0", "crawler1", "indexer"):
                cluster.start(name, name.rstrip("01"), wait=False)
            for name in cluster.procs:
                cluster.ready(name)
            seeds = [site.base + "/", site.slow_host_base + "/", *[b + "/" for b in site.robots_trouble_bases.values()]]
            subprocess.run([sys.executable, "-m", "services.cli.main", "seed", *seeds], env=env, check=True,
                           capture_output=True, timeout=60)  # fmt: skip
            got = _by_role(site, _settled_titles(cluster, _frontier(env), lambda: _cluster_index(env), len(expected)))
        finally:
            cluster.stop()
    assert got == expected


def _settled_titles(cluster, frontier, open_index, expected: int, timeout_s: float = 300) -> dict[str, str]:
    """The cluster index's URL → title once the frontier is idle and the index has held
    still for five seconds."""
    import time

    def observe() -> tuple[bool, dict[str, str]]:
        counts = frontier.counts(time.time())
        try:
            titles = _titles(open_index())
        except Exception:  # no index before the first page
            titles = {}
        return counts.queued == 0 and counts.leased == 0 and len(titles) >= expected, titles

    return cluster.settle(observe, rounds=5, timeout_s=timeout_s, what=f"the hostile crawl ({expected} documents)")
