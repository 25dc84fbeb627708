"""The whole embedded pipeline, driven through the real `tansuo` CLI, against the
Debian Chinese docs site served on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from services.api.app import create_app
from services.common.analysis.words import segment
from services.common.bootstrap import build_search_index
from services.common.config import Settings

from .conftest import DISALLOWED, check_indexed_exactly_once, run_cli, serve_site

pytestmark = pytest.mark.e2e
DELAY = 0.05


@pytest.fixture(scope="module")
def crawled(site_copy, tmp_path_factory):
    """One full crawl with a politeness delay, shared by the checks below."""
    site = serve_site(site_copy)
    data = tmp_path_factory.mktemp("crawl")
    result = run_cli(
        "crawl", site.url, "--data", str(data), "--delay", str(DELAY), "--allow-private-networks", "--no-progress"
    )
    assert result.returncode == 0, result.stderr
    yield site, data, result
    site.server.stop()


def _index(data: Path):
    return build_search_index(Settings(data_dir=data), read_only=True)


def assert_indexed_exactly_once(site, data: Path) -> None:
    check_indexed_exactly_once(site, _index(data).urls())


def test_every_reachable_page_is_indexed_exactly_once(crawled):
    site, data, _ = crawled
    assert_indexed_exactly_once(site, data)


def test_exact_titles_find_their_page_first(crawled):
    _, data, _ = crawled
    index = _index(data)
    titles = defaultdict(list)
    for url in index.urls():
        doc = index.get(url)
        if doc.title.strip():
            titles[doc.title.strip()].append(url)
    unique = {t: urls[0] for t, urls in titles.items() if len(urls) == 1}
    assert len(unique) > 150
    misses = []
    for title, url in unique.items():
        out = run_search(data, title, size=1)
        if not out["results"] or out["results"][0]["url"] != url:
            misses.append(title)
    share = 1 - len(misses) / len(unique)
    assert share >= 0.90, f"title found first for {share:.1%}; misses: {misses[:10]}"


def run_search(data: Path, query: str, size: int = 10, site: str = "") -> dict:
    from services.search.search_service import SearchService

    cfg = Settings(data_dir=data)
    return SearchService(cfg, _index(data)).search(query, page=1, size=size, site=site)


def test_gbk_pages_are_found_by_a_chinese_word_from_their_body(crawled):
    site, data, _ = crawled
    index = _index(data)
    for page in site.gbk_pages:
        url = site.url + page.path.lstrip("/")
        doc = index.get(url)
        assert doc is not None, f"{page.path} not indexed"
        # Decoded right: a long run of the original text is in the stored body.
        sample = page.text.splitlines()[0][:30]
        assert sample in doc.body, f"{page.path} decoded wrongly: {doc.body[:80]!r}"
        words = [w for w in segment(page.text) if len(w) >= 2 and re.fullmatch(r"[\u4e00-\u9fff]+", w)]
        found = False
        for word in sorted(set(words), key=words.index)[:40]:
            out = run_search(data, word, size=50)
            if 0 < out["total"] <= 50:
                assert url in [r["url"] for r in out["results"]], f"{word} does not find {page.path}"
                found = True
                break
        assert found, f"no distinctive word tried for {page.path}"


def test_robots_disallow_is_never_fetched(crawled):
    site, _, _ = crawled
    paths = [unquote(urlsplit(r.path).path) for r in site.server.requests]
    assert "/robots.txt" in paths
    assert DISALLOWED not in paths
    assert paths.index("/robots.txt") == 0, "a page was fetched before robots.txt"


def test_two_fetches_of_one_host_are_never_closer_than_the_delay(crawled):
    site, _, _ = crawled
    times = sorted(r.time for r in site.server.requests)
    gaps = [b - a for a, b in pairwise(times)]
    assert len(gaps) > 200
    assert min(gaps) >= DELAY, f"smallest gap {min(gaps):.4f}s is below the {DELAY}s delay"


def test_pagerank_is_stored_and_sums_to_one(crawled):
    _, data, _ = crawled
    index = _index(data)
    ranks = [index.get(u).pagerank for u in index.urls()]
    assert all(r > 0 for r in ranks)
    assert sum(ranks) == pytest.approx(1.0, abs=0.02)  # pages outside the index hold the rest


def test_the_api_returns_highlighted_escaped_snippets(crawled):
    _, data, _ = crawled
    client = create_app(Settings(data_dir=data)).test_client()
    body = client.get("/api/search", query_string={"q": "软件包 管理"}).get_json()
    assert body["total"] > 0 and body["results"]
    assert set(body) >= {"query", "total", "took_ms", "page", "size", "results"}
    hit = body["results"][0]
    assert set(hit) >= {"url", "title", "snippet", "score", "pagerank", "site"}
    assert "<em>" in hit["snippet"]
    stripped = hit["snippet"].replace("<em>", "").replace("</em>", "")
    assert "<" not in stripped and ">" not in stripped
    assert client.get("/api/search", query_string={"q": "软件", "page": "x"}).status_code == 400
    assert client.get("/api/search").status_code == 400


def test_cli_search_json_is_the_api_json(crawled):
    _, data, _ = crawled
    out = run_cli("search", "安装 系统", "--data", str(data), "--json", "--size", "5")
    assert out.returncode == 0, out.stderr
    cli = json.loads(out.stdout)
    api = create_app(Settings(data_dir=data)).test_client().get(
        "/api/search", query_string={"q": "安装 系统", "size": 5}
    ).get_json()
    cli.pop("took_ms"), api.pop("took_ms")
    # Links into the HTTP server (the click link and the cached copy) are the API's own.
    api["results"] = [{k: v for k, v in r.items() if k not in ("click_url", "cache_url")} for r in api["results"]]
    assert cli == api


def test_one_process_doing_everything_builds_the_same_index(crawled, tmp_path):
    """The crawl above indexed in its own index process (the default); the same site
    crawled with TANSUO_EMBEDDED_PROCESSES=1 ends with the same documents."""
    site, data, _ = crawled
    single = tmp_path / "single"
    env = {**os.environ, "TANSUO_EMBEDDED_PROCESSES": "1"}
    result = run_cli("crawl", site.url, "--data", str(single), "--delay", "0", "--allow-private-networks",
                     "--no-progress", env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    two, one = _index(data), _index(single)
    assert sorted(two.urls()) == sorted(one.urls())
    for url in one.urls():
        a, b = dataclasses.asdict(two.get(url)), dataclasses.asdict(one.get(url))
        # Link fields are rewritten only when they move by more than 0.1% (the ranker's
        # RANK_CHANGE), so two crawls may keep values that close apart.
        for field in ("pagerank", "rank"):
            assert a.pop(field) == pytest.approx(b.pop(field), rel=2e-3), (url, field)
        fetched = a.pop("fetched_at"), b.pop("fetched_at")
        if (a["modified_at"], b["modified_at"]) == fetched:  # no Last-Modified: the page's date is its fetch time
            a.pop("modified_at"), b.pop("modified_at")
        assert a == b, url


def test_a_crawl_killed_midway_resumes_without_refetching(site_copy, tmp_path):
    site = serve_site(site_copy)
    data = tmp_path / "data"
    cmd = [sys.executable, "-m", "services.cli.main", "crawl", site.url, "--data", str(data),
           "--delay", "0.01", "--allow-private-networks", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        done = _wait_for_done(data / "frontier.sqlite3", at_least=80, proc=proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = _done_urls(data / "frontier.sqlite3")
    assert 80 <= len(done) < 250
    before = len(site.server.requests)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    again = {site.url.rstrip("/") + r.path for r in site.server.requests[before:]}
    refetched = {u for u in done if u in again}
    assert not refetched, f"{len(refetched)} finished pages fetched again, e.g. {sorted(refetched)[:3]}"
    assert_indexed_exactly_once(site, data)
    site.server.stop()


def _done_urls(db_path: Path) -> set[str]:
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return {u for (u,) in db.execute("SELECT url FROM urls WHERE state = 'done'")}
    finally:
        db.close()


def _wait_for_done(db_path: Path, at_least: int, proc: subprocess.Popen, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"crawl ended early: {proc.stderr.read().decode()[-2000:]}"
        if db_path.exists():
            try:
                n = len(_done_urls(db_path))
            except sqlite3.OperationalError:
                n = 0
            if n >= at_least:
                return n
        time.sleep(0.05)
    raise AssertionError("crawl made no progress")
