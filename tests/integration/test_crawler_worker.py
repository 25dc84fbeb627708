"""CrawlerWorker against a real local HTTP server, a real SqliteBus and PackPageStore.

Each crawl runs in a subprocess (crawler_worker_run.py): Twisted's reactor cannot be
restarted, so one process can hold one worker run. The server routes are named for
the behaviour they provoke, as in Scrapy's mock server.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from services.common.adapters.packs.page_store import PackPageStore
from services.common.adapters.sqlite.bus import SqliteBus
from services.common.domain.messages import (
    TOPIC_FETCHES,
    TOPIC_LINKS,
    TOPIC_PAGES,
    FetchJob,
    LinkBatch,
    PageEvent,
    url_fingerprint,
)
from services.crawler.network_guard import host_is_private
from tests.servers.quiet_handler import QuietHandler

pytestmark = pytest.mark.integration

RUNNER = Path(__file__).with_name("crawler_worker_run.py")
REPO = Path(__file__).resolve().parents[2]
MAX_PAGE_BYTES = 4096

UTF8_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>探索 中文测试页面</title></head>
<body><nav><a href="/nav-only.html">导航</a></nav>
<h1>欢迎来到探索</h1><p>这是一个用于测试爬虫的中文网页。</p>
<a href="/gbk.html">国标编码页面</a> <a href="moved">旧地址</a>
<a href="http://example.cn/路径?q=中文">外部链接</a> <a href="mailto:a@example.cn">邮件</a>
<a href="/secret.html" rel="nofollow">不要跟随</a> <a href="/gbk.html">重复链接</a>
</body></html>""".encode()
GBK_PAGE = """<html><head><meta http-equiv="Content-Type" content="text/html; charset=gbk">
<title>国标编码的页面</title></head><body><h1>简体中文</h1><p>北京欢迎你，长城很长。</p>
<a href="/utf8.html">返回</a></body></html>""".encode("gbk")
NOFOLLOW_PAGE = """<html><head><meta name="robots" content="noindex, nofollow"><title>私密</title></head>
<body><a href="/utf8.html">链接</a></body></html>""".encode()
ROBOTS = "\ufeffUser-agent: *\nDisallow: /private/\n# 中文注释\n".encode()
HUGE_ROBOTS = b"User-agent: *\nDisallow: /huge-private/\n" + b"# a padding line of a very large file\n" * 20_000
PDF = b"%PDF-1.4\n" + b"0" * 500


@dataclass
class Site:
    base: str
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]


class Handler(QuietHandler):
    site: Site

    def do_GET(self) -> None:
        self.site.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        path = self.path.split("?")[0]
        route = ROUTES.get(path) or (Handler.robots_chain if path.startswith("/robots-chain-") else Handler.not_found)
        route(self)

    def utf8(self) -> None:
        self.reply(200, UTF8_PAGE, "text/html; charset=utf-8", ETag='"u1"',
                   Last_Modified="Wed, 21 Oct 2015 07:28:00 GMT")

    def gbk_meta_only(self) -> None:
        self.reply(200, GBK_PAGE, "text/html")

    def moved(self) -> None:
        self.reply(301, b"", Location="/utf8.html")

    def not_found(self) -> None:
        self.reply(404, "<html><title>找不到</title></html>".encode())

    def busy(self) -> None:
        self.reply(503, b"busy", "text/plain", Retry_After="120")

    def too_big(self) -> None:
        self.reply(200, b"<html>" + b"x" * (MAX_PAGE_BYTES * 5), "text/html")

    def too_big_streamed(self) -> None:
        # No Content-Length: the size is only known while reading, as with chunked pages.
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        for _ in range(10):
            self.wfile.write(b"y" * MAX_PAGE_BYTES)
        self.close_connection = True

    def pdf(self) -> None:
        self.reply(200, PDF, "application/pdf")

    def robots(self) -> None:
        self.reply(200, ROBOTS, "text/plain")

    def robots_huge(self) -> None:
        # Past the page cap (4 KiB here) and the robots.txt cap (512 KiB) both.
        self.reply(200, HUGE_ROBOTS, "text/plain")

    def robots_huge_streamed(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        for start in range(0, len(HUGE_ROBOTS), 65536):
            try:
                self.wfile.write(HUGE_ROBOTS[start : start + 65536])
            except OSError:  # the crawler stopped reading, as it should
                break
        self.close_connection = True

    def robots_moved(self) -> None:
        # The common case: http://host/robots.txt sends the crawler to another URL.
        self.reply(301, b"", Location="/robots-final.txt")

    def robots_final(self) -> None:
        self.reply(200, b"User-agent: *\nDisallow: /moved-rules/\n", "text/plain")

    def robots_chain(self) -> None:
        # /robots-chain-<name>/<n> redirects to <n - 1>; 0 serves the file.
        prefix, _, left = self.path.rpartition("/")
        if left == "0":
            self.reply(200, f"User-agent: *\nDisallow: {prefix}/\n".encode(), "text/plain")
        else:
            self.reply(302, b"", Location=f"{prefix}/{int(left) - 1}")

    def conditional(self) -> None:
        if self.headers.get("If-None-Match") == '"v1"' or self.headers.get("If-Modified-Since"):
            self.reply(304, b"", "", ETag='"v1"')
        else:
            self.reply(200, b"<html><title>v1</title></html>", ETag='"v1"')

    def nofollow(self) -> None:
        self.reply(200, NOFOLLOW_PAGE, "text/html; charset=utf-8")

    def slow(self) -> None:
        time.sleep(2.5)
        self.reply(200, b"<html><title>late</title></html>")

    def small(self) -> None:
        self.reply(200, f"<html><title>小页 {self.path}</title><p>内容</p></html>".encode())


ROUTES = {
    "/utf8.html": Handler.utf8,
    "/gbk.html": Handler.gbk_meta_only,
    "/moved": Handler.moved,
    "/busy": Handler.busy,
    "/big.html": Handler.too_big,
    "/big-streamed.html": Handler.too_big_streamed,
    "/doc.pdf": Handler.pdf,
    "/robots.txt": Handler.robots,
    "/robots-moved.txt": Handler.robots_moved,
    "/robots-huge.txt": Handler.robots_huge,
    "/robots-huge-streamed.txt": Handler.robots_huge_streamed,
    "/robots-final.txt": Handler.robots_final,
    "/conditional.html": Handler.conditional,
    "/nofollow.html": Handler.nofollow,
    "/slow.html": Handler.slow,
    **{f"/small/{i}.html": Handler.small for i in range(20)},
    "/late.html": Handler.small,
}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog of 5 drops SYNs when the crawler opens 8 connections at
    # once, and a retransmitted SYN waits a second: longer than the test timeout.
    request_queue_size = 64

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the crawler hangs up on /slow.html and the big pages on purpose


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    site = Site(base="")
    handler = type("BoundHandler", (Handler,), {"site": site})
    server = Server(("127.0.0.1", 0), handler)
    site.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield site
    server.shutdown()
    server.server_close()


@dataclass
class CrawlResult:
    events: dict[str, PageEvent]
    links: dict[str, LinkBatch]
    offsets: dict[tuple[str, str], int]  # (topic, url) -> bus offset, to check order
    pending_jobs: int
    store: PackPageStore
    summary: dict


def job(url: str, **fields: object) -> FetchJob:
    host = url.split("/")[2]
    return FetchJob(url=url, host=host, lease_id=f"lease-{url}", **fields)  # type: ignore[arg-type]


def crawl(data_dir: Path, jobs: list[FetchJob], settings: dict, *, junk: int = 0,
          late: FetchJob | None = None, until_committed: bool = False, store_args: tuple[str, ...] = ()) -> CrawlResult:
    bus = SqliteBus(data_dir / "bus.sqlite3")
    for item in jobs:
        bus.publish(TOPIC_FETCHES, item.to_bytes(), key=item.host)
    for _ in range(junk):
        bus.publish(TOPIC_FETCHES, b"not a fetch job", key="junk")
    bus.close()
    command = [sys.executable, str(RUNNER), str(data_dir), "--expect", str(len(jobs)),
               "--settings", json.dumps(settings)]
    if late is not None:
        command += ["--late-job", late.to_bytes().decode()]
    if until_committed:
        command.append("--until-committed")
    command += store_args
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    return _read_back(data_dir, json.loads(done.stdout.strip().splitlines()[-1]))


def _read_back(data_dir: Path, summary: dict) -> CrawlResult:
    bus = SqliteBus(data_dir / "bus.sqlite3")
    pages = bus.poll(TOPIC_PAGES, "test-reader", timeout_s=0, max_messages=10_000)
    links = bus.poll(TOPIC_LINKS, "test-reader", timeout_s=0, max_messages=10_000)
    events = {e.url: e for e in (PageEvent.from_bytes(m.payload) for m in pages)}
    batches = {b.source: b for b in (LinkBatch.from_bytes(m.payload) for m in links)}
    offsets = {(TOPIC_PAGES, PageEvent.from_bytes(m.payload).url): m.offset for m in pages}
    offsets |= {(TOPIC_LINKS, LinkBatch.from_bytes(m.payload).source): m.offset for m in links}
    assert len(events) == len(pages), "one page event per job"
    pending = bus.pending(TOPIC_FETCHES, "crawler")
    bus.close()
    return CrawlResult(events, batches, offsets, pending, PackPageStore(data_dir / "pages"), summary)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def result(site: Site, tmp_path_factory: pytest.TempPathFactory) -> CrawlResult:
    b = site.base
    jobs = [
        job(f"{b}/utf8.html", depth=2),
        job(f"{b}/gbk.html"),
        job(f"{b}/moved"),
        job(f"{b}/missing"),
        job(f"{b}/busy"),
        job(f"{b}/big.html"),
        job(f"{b}/big-streamed.html"),
        job(f"{b}/doc.pdf"),
        job(f"{b}/robots.txt", kind="robots"),
        job(f"{b}/robots-moved.txt", kind="robots"),
        job(f"{b}/robots-huge.txt", kind="robots"),
        job(f"{b}/robots-huge-streamed.txt", kind="robots"),
        job(f"{b}/robots-chain-five/5", kind="robots"),
        job(f"{b}/robots-chain-six/6", kind="robots"),
        job(f"{b}/conditional.html", etag='"v1"'),
        job(f"{b}/conditional.html?since", last_modified="Wed, 21 Oct 2015 07:28:00 GMT"),
        job(f"{b}/nofollow.html"),
        job(f"{b}/slow.html"),
        job(f"http://127.0.0.1:{closed_port()}/refused"),
        job("ftp://127.0.0.1/file.txt"),
        *[job(f"{b}/small/{i}.html") for i in range(20)],
    ]
    settings = {"crawler_allow_private_networks": True, "crawler_max_page_bytes": MAX_PAGE_BYTES,
                "crawler_timeout_s": 1.0, "crawler_concurrency": 8}
    return crawl(tmp_path_factory.mktemp("crawl"), jobs, settings, junk=1,
                 late=job(f"{b}/late.html"))


def test_every_job_gets_exactly_one_page_event(result: CrawlResult, site: Site) -> None:
    assert len(result.events) == 41  # 40 jobs + the late one; the junk message has none
    assert result.summary["events_seen"] == 40


def test_every_job_is_committed_after_the_run(result: CrawlResult) -> None:
    assert result.pending_jobs == 0


def test_utf8_page_is_extracted_and_stored(result: CrawlResult, site: Site) -> None:
    url = f"{site.base}/utf8.html"
    event = result.events[url]
    assert (event.status, event.error, event.encoding) == (200, "", "utf-8")
    assert event.title == "探索 中文测试页面"
    assert event.headings == ["欢迎来到探索"]
    assert "这是一个用于测试爬虫的中文网页。" in event.body and "导航" not in event.body
    host = url.split("/")[2]
    assert (event.depth, event.lease_id, event.kind, event.host) == (2, f"lease-{url}", "page", host)
    assert event.etag == '"u1"' and event.last_modified == "Wed, 21 Oct 2015 07:28:00 GMT"
    assert event.content_type == "text/html" and event.size == len(UTF8_PAGE)
    stored = result.store.get(url_fingerprint(url))
    assert event.store_key == url_fingerprint(url)
    assert stored is not None and stored.body == UTF8_PAGE and stored.status == 200
    assert stored.content_hash == event.content_hash
    assert any(v == '"u1"' for k, v in stored.headers.items() if k.lower() == "etag")


def test_outlinks_are_absolute_deduplicated_and_in_order(result: CrawlResult, site: Site) -> None:
    batch = result.links[f"{site.base}/utf8.html"]
    assert batch.depth == 2
    assert [(link.url, link.anchor) for link in batch.links] == [
        (f"{site.base}/nav-only.html", "导航"),
        (f"{site.base}/gbk.html", "国标编码页面"),
        (f"{site.base}/moved", "旧地址"),
        ("http://example.cn/%E8%B7%AF%E5%BE%84?q=%E4%B8%AD%E6%96%87", "外部链接"),
    ]


def test_links_are_published_before_the_page_event(result: CrawlResult, site: Site) -> None:
    for url in result.links:
        assert result.offsets[(TOPIC_LINKS, url)] < result.offsets[(TOPIC_PAGES, url)]


def test_gbk_page_with_charset_only_in_meta_is_decoded(result: CrawlResult, site: Site) -> None:
    event = result.events[f"{site.base}/gbk.html"]
    assert event.encoding == "gb18030"
    assert event.title == "国标编码的页面"
    assert "北京欢迎你，长城很长。" in event.body


def test_redirect_is_reported_not_followed(result: CrawlResult, site: Site) -> None:
    event = result.events[f"{site.base}/moved"]
    assert event.status == 301 and event.redirect_to == f"{site.base}/utf8.html"
    assert site.paths().count("/utf8.html") == 1
    # Its one link, for the link graph only (the scheduler admits the target from the event).
    batch = result.links[f"{site.base}/moved"]
    assert batch.kind == "redirect" and [link.url for link in batch.links] == [f"{site.base}/utf8.html"]


def test_error_statuses_are_reported_with_their_headers(result: CrawlResult, site: Site) -> None:
    missing = result.events[f"{site.base}/missing"]
    assert missing.status == 404 and missing.title == "" and missing.store_key
    busy = result.events[f"{site.base}/busy"]
    assert busy.status == 503 and busy.retry_after == "120"
    assert f"{site.base}/missing" not in result.links


def test_pages_over_the_size_limit_are_too_large(result: CrawlResult, site: Site) -> None:
    for path in ("/big.html", "/big-streamed.html"):
        event = result.events[site.base + path]
        assert (event.status, event.error, event.store_key) == (0, "too_large", "")


def test_a_document_is_stored_and_handed_on_unparsed(result: CrawlResult, site: Site) -> None:
    event = result.events[f"{site.base}/doc.pdf"]
    assert (event.status, event.error, event.content_type, event.document) == (200, "", "application/pdf", "pdf")
    assert event.body == "" and not event.indexable  # its text comes from the extractor (docs/documents.md)
    assert result.links[f"{site.base}/doc.pdf"].links == []  # a node of the link graph, no outlinks
    assert result.store.get(event.store_key).body == PDF  # type: ignore[union-attr]


def test_robots_job_reports_the_text_without_bom(result: CrawlResult, site: Site) -> None:
    event = result.events[f"{site.base}/robots.txt"]
    assert event.kind == "robots" and event.status == 200
    assert event.robots_txt == "User-agent: *\nDisallow: /private/\n# 中文注释\n"
    assert f"{site.base}/robots.txt" not in result.links


def test_a_robots_txt_past_the_page_cap_is_read_up_to_its_own_cap(result: CrawlResult, site: Site) -> None:
    # RFC 9309 2.5: at least 500 KiB of a robots.txt is parsed; the rest may be ignored.
    # The page cap (4 KiB here, 10 MiB by default) refused it whole, and the host was
    # given up for a file it could have read.
    assert len(HUGE_ROBOTS) > 512 * 1024
    for path in ("/robots-huge.txt", "/robots-huge-streamed.txt"):
        event = result.events[site.base + path]
        assert (event.status, event.error) == (200, ""), path
        assert event.robots_txt.startswith("User-agent: *\nDisallow: /huge-private/\n"), path
        assert len(event.robots_txt.encode()) <= 512 * 1024 and event.robots_txt.endswith("\n"), path
        assert event.limits == ["robots_size"], path


def test_robots_redirects_are_followed_to_the_file(result: CrawlResult, site: Site) -> None:
    moved = result.events[f"{site.base}/robots-moved.txt"]
    assert (moved.status, moved.robots_txt) == (200, "User-agent: *\nDisallow: /moved-rules/\n")
    five = result.events[f"{site.base}/robots-chain-five/5"]
    assert (five.status, five.robots_txt) == (200, "User-agent: *\nDisallow: /robots-chain-five/\n")
    assert (five.lease_id, five.kind) == (f"lease-{site.base}/robots-chain-five/5", "robots")


def test_robots_redirects_past_five_hops_are_reported_as_the_redirect(result: CrawlResult, site: Site) -> None:
    six = result.events[f"{site.base}/robots-chain-six/6"]
    assert six.status == 302 and six.robots_txt == ""
    assert "/robots-chain-six/0" not in site.paths() and "/robots-chain-six/1" in site.paths()


def test_conditional_requests_send_validators_and_report_304(result: CrawlResult, site: Site) -> None:
    assert result.events[f"{site.base}/conditional.html"].status == 304
    assert result.events[f"{site.base}/conditional.html?since"].status == 304
    sent = {path: headers for path, headers in site.requests if path.startswith("/conditional")}
    assert sent["/conditional.html"]["if-none-match"] == '"v1"'
    assert sent["/conditional.html?since"]["if-modified-since"] == "Wed, 21 Oct 2015 07:28:00 GMT"


def test_nofollow_page_still_publishes_an_empty_link_batch(result: CrawlResult, site: Site) -> None:
    url = f"{site.base}/nofollow.html"
    assert result.events[url].noindex and result.events[url].nofollow
    assert result.links[url].links == []


def test_network_failures_get_status_zero_and_a_reason(result: CrawlResult, site: Site) -> None:
    errors = {u.rsplit("/", 1)[-1]: (e.status, e.error) for u, e in result.events.items() if e.status == 0}
    assert errors["slow.html"] == (0, "timeout")
    assert errors["refused"] == (0, "connection")
    assert errors["file.txt"] == (0, "bad_url")


def test_user_agent_comes_from_settings_and_nothing_is_fetched_twice(result: CrawlResult, site: Site) -> None:
    assert all(h["user-agent"].startswith("TansuoBot/") for _, h in site.requests)
    assert all("cookie" not in h for _, h in site.requests)
    assert "/secret.html" not in site.paths() and "/nav-only.html" not in site.paths()
    assert len(site.paths()) == len(set(site.paths()))


def test_stats_count_responses_errors_and_bytes(result: CrawlResult) -> None:
    stats = result.summary["stats"]
    statuses = [e.status for e in result.events.values()]
    assert stats["fetched"] == sum(1 for s in statuses if s)
    assert stats["errors"] == statuses.count(0)
    assert stats["bytes"] == sum(e.size for e in result.events.values())


def test_a_job_published_while_idle_is_fetched_without_waiting_for_the_heartbeat(
    result: CrawlResult,
) -> None:
    # Scrapy's engine re-asks an empty scheduler only every 5 s; the poll loop must not.
    assert result.summary["late_latency_s"] < 1.5


def test_private_addresses_are_refused_before_any_request(site: Site, tmp_path: Path) -> None:
    port = site.base.rsplit(":", 1)[1]
    urls = [f"http://127.0.0.1:{port}/private-literal", f"http://localhost:{port}/private-name",
            f"http://[::1]:{port}/private-v6", f"http://2130706433:{port}/private-decimal"]
    result = crawl(tmp_path, [job(u) for u in urls], {"crawler_allow_private_networks": False})
    assert {u: (e.status, e.error) for u, e in result.events.items()} == {
        u: (0, "private_address") for u in urls
    }
    assert not [p for p in site.paths() if p.startswith("/private")]
    assert result.pending_jobs == 0


def test_a_page_that_cannot_be_stored_is_logged_and_its_job_committed(site: Site, tmp_path: Path) -> None:
    # The page store is an S3 URL where nothing listens. The page is not lost: its
    # lease runs out in the frontier, which hands it out again; the job is committed
    # so that the partition's committed offset (and its lag) keeps moving.
    urls = [f"{site.base}/small/{i}.html?unstored" for i in range(3)]
    store = f"s3://k:s@127.0.0.1:{closed_port()}/pages"
    settings = {"crawler_allow_private_networks": True, "store": store, "store_timeout_s": 1.0}
    result = crawl(tmp_path, [job(u) for u in urls], settings, until_committed=True)
    assert result.events == {}
    assert result.pending_jobs == 0
    assert sum(p.endswith("?unstored") for p in site.paths()) == 3


def test_pages_are_stored_off_the_reactor_thread_so_slow_puts_overlap(site: Site, tmp_path: Path) -> None:
    # A store across a network takes milliseconds a put; on the reactor's thread each
    # one would hold up every fetch. One page's put fails: it alone goes unpublished.
    urls = [f"{site.base}/small/{i}.html?slow" for i in range(12)]
    settings = {"crawler_allow_private_networks": True}
    result = crawl(tmp_path, [job(u) for u in urls], settings, until_committed=True,
                   store_args=("--slow-store-s", "0.2", "--store-fails-for", "/small/3.html"))  # fmt: skip
    assert result.summary["puts"]["threads"] == ["other"]
    assert result.summary["puts"]["most_at_once"] >= 2
    assert sorted(result.events) == sorted(u for u in urls if "/small/3.html" not in u)
    assert result.pending_jobs == 0
    assert all(result.store.get(e.store_key) is not None for e in result.events.values())


def test_host_is_private_resolves_names_before_judging() -> None:
    assert host_is_private("localhost")


def test_ctrl_c_stops_the_worker_and_commits_what_it_published(site: Site, tmp_path: Path) -> None:
    jobs = [job(f"{site.base}/small/{i}.html") for i in range(3)]
    bus = SqliteBus(tmp_path / "bus.sqlite3")
    for item in jobs:
        bus.publish(TOPIC_FETCHES, item.to_bytes(), key=item.host)
    settings = json.dumps({"crawler_allow_private_networks": True})
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # --expect more than will ever come: only the signal can end this run.
    command = [sys.executable, str(RUNNER), str(tmp_path), "--expect", "99", "--settings", settings]
    proc = subprocess.Popen(command, cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen = 0
        deadline = time.monotonic() + 20
        while seen < len(jobs) and time.monotonic() < deadline:
            seen += len(bus.poll(TOPIC_PAGES, "test-ctrl-c", timeout_s=0.1))
        assert seen == len(jobs)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1])["stats"]["fetched"] == len(jobs)
    bus.close()
    assert SqliteBus(tmp_path / "bus.sqlite3").pending(TOPIC_FETCHES, "crawler") == 0
