"""The operator's day (issue 38), through the real `tansuo` command line against a small
local site (tests/operator_site.py): poems, non-HTML files, links to missing pages.

- The counts agree: the progress lines a log gets, the crawl's last line, `tansuo
  report` and the console say the same fetched, errors and indexed figures.
- The report says what went wrong where: each 404 and the pages linking to it, the
  files fetched and not indexed and why, and a --max-pages cut.
- One crawl per data directory; a crawl that reaches none of its seeds exits non-zero;
  `kill -INT` stops `tansuo run` while it serves.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.api.app import create_app
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from tests.operator_site import BROKEN, FILES, OperatorSite, poem_path, serve_operator_site
from tests.servers.net import free_port, stop_process, wait_for_http_ok

pytestmark = pytest.mark.e2e
TOKEN = "operator-token-0123456789"
DELAY = 0.2  # long enough for a few progress lines, short enough for a quick test


def tansuo(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "services.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)  # fmt: skip


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TANSUO_", "PROMETHEUS_"))}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorSite]:
    served = serve_operator_site(tmp_path_factory.mktemp("site"))
    yield served
    served.stop()


@pytest.fixture(scope="module")
def crawled(site: OperatorSite, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One crawl whose output goes to a pipe, as under a service manager or in CI."""
    data = tmp_path_factory.mktemp("crawl")
    result = tansuo("crawl", site.url, "--data", str(data), "--delay", str(DELAY), "--allow-private-networks",
                    env=clean_env(TANSUO_EMBEDDED_PROGRESS_LOG_INTERVAL_S="0.5"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    return data, result


def figures(line: str) -> dict[str, int]:
    return {name: int(n) for n, name in re.findall(r"(\d+) (pages fetched|errors|documents)", line)} | {
        name: int(n) for name, n in re.findall(r"(fetched|errors|indexed) (\d+)", line)}


def test_progress_is_logged_while_the_crawl_runs_off_a_terminal(crawled) -> None:
    _, result = crawled
    lines = result.stderr.splitlines()
    progress = [line for line in lines if line.startswith("crawling: ")]
    last = next(i for i, line in enumerate(lines) if line.startswith("crawl finished"))
    assert len(progress) >= 2, result.stderr  # a line every half second, then the last figures
    assert all(lines.index(p) < last for p in progress)


def test_the_counts_agree_everywhere(crawled, site: OperatorSite) -> None:
    data, result = crawled
    final = next(line for line in result.stderr.splitlines() if line.startswith("crawl finished"))
    last_progress = [line for line in result.stderr.splitlines() if line.startswith("crawling: ")][-1]
    # The text file is indexed like a page; the PDF and the docx are not real ones.
    pages, errors, documents = site.pages + len(FILES) + len(BROKEN), len(BROKEN), site.pages + 1
    f, p = figures(final), figures(last_progress)
    assert (f["pages fetched"], f["errors"], f["documents"]) == (pages, errors, documents), final
    assert (p["fetched"], p["errors"], p["indexed"]) == (pages, errors, documents), last_progress

    report = json.loads(tansuo("report", "--data", str(data), "--json").stdout)
    t = report["totals"]
    assert (t["fetched"], t["errors"], t["documents"]) == (pages, errors, documents)
    (host,) = report["hosts"]
    assert (host["fetched"], host["errors"]) == (pages, errors)  # per host: the same, URL by URL
    assert host["sitemaps"] == {"404": 1}  # the guessed sitemap.xml: not a page, not an error

    cfg = Settings(data_dir=data, api_token=TOKEN)
    client = create_app(cfg, index=build_search_index(cfg, read_only=True)).test_client()
    assert client.post("/admin/login", data={"token": TOKEN}).status_code == 303
    page = client.get("/admin").get_data(as_text=True)
    shown = {name: int(n) for name, n in re.findall(r'id="stat-(fetched|errors|documents)">\s*(\d+)', page)}
    assert shown == {"fetched": pages, "errors": errors, "documents": documents}


def test_the_report_says_what_went_wrong_where(crawled, site: OperatorSite) -> None:
    data, _ = crawled
    report = json.loads(tansuo("report", "--data", str(data), "--json").stdout)
    problems = {"/" + p["url"].removeprefix(site.url): p for p in report["problems"]}
    for path in BROKEN:
        p = problems[path]
        assert (p["kind"], p["status"], p["why"]) == ("error", 404, "HTTP 404")
        assert p["linked_from"], path  # the pages to fix
    # /missing/1.html is linked from the front page and from the poems whose turn it is.
    assert site.url in problems[BROKEN[0]]["linked_from"]
    assert site.url + poem_path(4)[1:] in problems[BROKEN[0]]["linked_from"]
    for path in ("/files/handbook.pdf", "/files/notes.docx"):  # not what they claim to be
        p = problems[path]
        assert p["kind"] == "not_indexed" and p["why"] == "document skipped (malformed)", p
    assert "/files/readme.txt" not in problems  # indexed, as a page is
    text = tansuo("report", "--data", str(data)).stdout
    assert f"HTTP 404  {site.url}missing/1.html" in text and "linked from" in text and "fetched, not indexed" in text


def test_a_crawl_cut_by_max_pages_says_so(site: OperatorSite, tmp_path: Path) -> None:
    result = tansuo("crawl", site.url, "--data", str(tmp_path), "--delay", "0", "--max-pages", "3",
                    "--allow-private-networks", "--no-progress")  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(tansuo("report", "--data", str(tmp_path), "--json").stdout)
    assert report["totals"]["limits"].get("max_pages", 0) == report["totals"]["queued"] > 0
    assert "max_pages" in tansuo("report", "--data", str(tmp_path)).stdout


def test_a_crawl_that_reaches_none_of_its_seeds_exits_non_zero(tmp_path: Path) -> None:
    closed = free_port()  # nothing listens there
    result = tansuo("crawl", f"http://127.0.0.1:{closed}/", "--data", str(tmp_path), "--allow-private-networks",
                    "--no-progress", env=clean_env(TANSUO_FRONTIER_MAX_FETCH_FAILURES="1"))  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "no seed could be fetched" in result.stderr and "Traceback" not in result.stderr


def test_a_second_crawl_into_the_same_directory_is_refused_before_any_request(
    site: OperatorSite, tmp_path: Path
) -> None:
    first = subprocess.Popen([sys.executable, "-m", "services.cli.main", "crawl", site.url, "--data",
                              str(tmp_path), "--delay", "1", "--allow-private-networks", "--no-progress"],
                             stderr=subprocess.PIPE, text=True, env=clean_env())  # fmt: skip
    other = serve_operator_site(tmp_path.parent / f"{tmp_path.name}-other")
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "crawl.lock").exists() or not site.server.requests:
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.1)
        for command in (["crawl"], ["run", "--port", str(free_port())]):
            second = tansuo(command[0], other.url, "--data", str(tmp_path), "--allow-private-networks",
                            "--no-progress", *command[1:])  # fmt: skip
            assert second.returncode == 75, second.stderr
            assert f"pid {first.pid}" in second.stderr and "one crawl per data directory" in second.stderr
        assert other.server.requests == []  # refused before sending anything
        # Reading the crawl as it goes is allowed: `tansuo serve` says who writes it.
        port = free_port()
        serve = subprocess.Popen([sys.executable, "-m", "services.cli.main", "serve", "--data", str(tmp_path),
                                  "--port", str(port), "--workers", "1"],
                                 stderr=subprocess.PIPE, text=True, env=clean_env(TANSUO_HEALTH_PORT="0"))  # fmt: skip
        try:
            wait_for_http_ok(f"http://127.0.0.1:{port}/livez", serve, timeout_s=60)
        finally:
            stop_process(serve)
        assert serve.stderr is not None and f"being crawled into by pid {first.pid}" in serve.stderr.read()
    finally:
        first.send_signal(signal.SIGINT)
        first.wait(60)
        other.stop()


def test_serve_waits_for_the_first_commit_of_a_running_crawl_and_not_without_one(tmp_path: Path) -> None:
    # A stand-in crawl: a process holding the data directory's crawl lock, no index yet.
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from services.cli.data_dir import hold_crawl_lock; "
                               "hold_crawl_lock(Path(sys.argv[1]), 'tansuo crawl'); print('held', flush=True); "
                               "time.sleep(600)", str(tmp_path)], stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        serve = subprocess.Popen([sys.executable, "-m", "services.cli.main", "serve", "--data", str(tmp_path),
                                  "--port", str(free_port()), "--workers", "1"],
                                 stderr=subprocess.PIPE, text=True, env=clean_env(TANSUO_HEALTH_PORT="0"))  # fmt: skip
        assert serve.stderr is not None
        lines = serve.stderr.readline() + serve.stderr.readline()
        assert f"being crawled into by pid {holder.pid}" in lines, lines
        assert f"waiting for the first pages pid {holder.pid}" in lines, lines
        time.sleep(1.5)
        assert serve.poll() is None  # still waiting while the crawl runs
    finally:
        holder.kill()
        holder.wait()
    # The crawl ended without an index: serve says so in a line and exits.
    assert serve.wait(30) == 2
    rest = serve.stderr.read()
    assert "no index in" in rest and "Traceback" not in rest


def test_kill_int_stops_tansuo_run_while_it_serves(site: OperatorSite, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "services.cli.main", "run", site.url, "--data", str(tmp_path),
                             "--delay", "0", "--port", str(port), "--allow-private-networks", "--no-progress"],
                            stderr=subprocess.PIPE, text=True, env=clean_env(TANSUO_HEALTH_PORT="0"))  # fmt: skip
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 120
        for line in proc.stderr:
            if "still serving" in line:
                break
            assert time.monotonic() < deadline
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
