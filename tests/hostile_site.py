"""A hostile web site, served on 127.0.0.1: what real sites do to crawlers, on purpose.

Routes are named for what they do, in the manner of Scrapy's mock server. The site is
finite for a crawler that keeps its limits and infinite for one that does not: a
calendar with a next page for ever, ever-deeper paths, endless redirect chains, a
session id in every link. It also serves what must not be parsed (binary bodies
labelled text/html, a gzip bomb, an endless response, a server sending one byte a
second), what must be capped (a 1 MB title, 100,000 links, a 60,000-entry sitemap),
and pages in Big5, GBK and GB18030, declared, mis-declared and undeclared.

Every request is recorded with its time, so a test can check that nothing
disallowed was fetched and that the host's Crawl-delay held.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

from tests.servers.quiet_handler import QuietHandler

BIG5_TEXT = "國立臺灣大學圖書館提供豐富的館藏資源，歡迎各位讀者利用。"
GBK_TEXT = "北京大学图书馆欢迎你，馆藏丰富，开放时间为周一至周五。"
GB18030_TEXT = "𠮷野家的牛肉饭很好吃，欢迎光临。"
SCRIPT_TITLE = "<script>alert('title')</script>标题"
DISALLOWED = "/private/"
CALENDAR_PAGES_MAX = 1_000_000  # the calendar never ends


@dataclass
class Hit:
    path: str
    at: float


@dataclass
class HostileSite:
    """The site's base URL, the requests it received, and an off-limits port whose
    server counts the requests that reached it (a crawl must send none)."""

    base: str = ""
    other_port_base: str = ""
    slow_host_base: str = ""  # a second host, on 127.0.0.2, whose robots.txt asks for a Crawl-delay
    hits: list[Hit] = field(default_factory=list)
    other_port_hits: list[str] = field(default_factory=list)
    slow_host_hits: list[Hit] = field(default_factory=list)
    # Hosts on 127.0.0.3-5 whose robots.txt times out, answers 500, or is 1 MB of junk
    # after its one rule: base URL and the paths each one was asked for, by trouble.
    robots_trouble_bases: dict[str, str] = field(default_factory=dict)
    robots_trouble_paths: dict[str, list[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def paths(self) -> list[str]:
        with self.lock:
            return [h.path for h in self.hits]


def _page(title: str, body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}<title>{title}</title></head><body>{body}</body></html>"


class Handler(QuietHandler):
    site: HostileSite
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        with self.site.lock:
            self.site.hits.append(Hit(self.path, time.monotonic()))
        path = self.path.split("?", 1)[0]
        for pattern, route in ROUTES:
            if re.fullmatch(pattern, path):
                route(self)
                return
        self.reply(404, b"<html><title>not here</title></html>")

    # --- helpers

    def html(self, text: str, charset: str = "utf-8", declared: str | None = "utf-8") -> None:
        content_type = f"text/html; charset={declared}" if declared else "text/html"
        self.reply(200, text.encode(charset), content_type)

    def query_int(self, name: str) -> int:
        match = re.search(rf"[?&]{name}=(\d+)", self.path)
        return int(match.group(1)) if match else 0

    # --- robots.txt: redirected twice, then the file
    def robots_moved(self) -> None:
        self.reply(301, b"", Location="/robots/moved-again.txt")

    def robots_moved_again(self) -> None:
        self.reply(302, b"", Location=f"{self.site.base}/robots/real.txt")

    def robots_real(self) -> None:
        sitemap = f"Sitemap: {self.site.base}/sitemaps/index-of-indexes.xml\n"
        self.reply(200, f"User-agent: *\nDisallow: {DISALLOWED}\n{sitemap}".encode(), "text/plain")

    # --- the well-formed pages
    def home(self) -> None:
        links = "".join(f'<a href="{p}">{p}</a> ' for p in HOME_LINKS)
        self.html(_page("恶意测试站点首页", f"<h1>测试站点</h1><p>这里的每个链接都是一种陷阱。</p>{links}"))

    def private(self) -> None:
        self.html(_page("不许抓取", "<p>robots.txt 不允许抓取这个页面。</p>"))

    def big5_undeclared(self) -> None:
        self.html(_page("臺灣大學圖書館", f"<p>{BIG5_TEXT}</p>"), "big5", None)

    def big5_declared(self) -> None:
        self.html(_page("臺灣大學首頁", f"<p>{BIG5_TEXT}</p>"), "big5", "big5")

    def gbk_meta_says_utf8(self) -> None:
        body = _page("北京大学图书馆", f"<p>{GBK_TEXT}</p>", head='<meta charset="utf-8">')
        self.html(body, "gbk", None)

    def gbk_undeclared(self) -> None:
        self.html(_page("北大图书馆", f"<p>{GBK_TEXT}</p>"), "gbk", None)

    def gb18030_declared(self) -> None:
        self.html(_page("吉野家", f"<p>{GB18030_TEXT}</p>"), "gb18030", "gb18030")

    def script_in_title_and_body(self) -> None:
        body = "<p>正文<script>alert('body')</script><img src=x onerror=alert(1)>内容</p>"
        self.html(_page(SCRIPT_TITLE.replace("<", "&lt;").replace(">", "&gt;"), body))

    def invalid_utf8(self) -> None:
        self.reply(200, _page("坏的编码", "<p>正常文字").encode() + b"\xff\xfe\xc3\x28" + "后面的文字</p>".encode(),
                   "text/html; charset=utf-8")  # fmt: skip

    def nul_bytes(self) -> None:
        self.reply(200, _page("空字节页面", "<p>前面\x00中间\x00后面</p>").encode(), "text/html; charset=utf-8")

    # --- what must be capped
    def huge_title(self) -> None:
        self.html(_page("长" * 1_000_000, "<p>标题有一百万个字。</p>"))

    def hundred_thousand_links(self) -> None:
        # To another port of this address: out of scope, so none is fetched.
        links = "".join(f'<a href="{self.site.other_port_base}/link/{i}">链接{i}</a>' for i in range(100_000))
        self.html(_page("十万个链接", links))

    def sitemap_index_of_indexes(self) -> None:
        self.xml(f"<sitemapindex><sitemap><loc>{self.site.base}/sitemaps/index.xml</loc></sitemap></sitemapindex>")

    def sitemap_index(self) -> None:
        self.xml(f"<sitemapindex><sitemap><loc>{self.site.base}/sitemaps/60000-entries.xml</loc></sitemap></sitemapindex>")

    def sitemap_60000_entries(self) -> None:
        # Out of scope too (another port), so the test crawl stays short.
        urls = "".join(f"<url><loc>{self.site.other_port_base}/from-sitemap/{i}</loc></url>" for i in range(60_000))
        self.xml(f"<urlset>{urls}</urlset>")

    def xml(self, inner: str) -> None:
        ns = ' xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        inner = inner.replace("<sitemapindex>", f"<sitemapindex{ns}>").replace("<urlset>", f"<urlset{ns}>")
        self.reply(200, f'<?xml version="1.0" encoding="UTF-8"?>{inner}'.encode(), "application/xml")

    # --- infinite URL spaces
    def calendar_next_page(self) -> None:
        n = self.query_int("page")
        self.html(_page(f"日历第{n}页", f'<p>日历</p><a href="/calendar?page={n + 1}">下一页</a>'))

    def ever_deeper_path(self) -> None:
        self.html(_page("越来越深", '<p>相对链接</p><a href="more/">更深</a> <a href="deeper/more/">更更深</a>'))

    def session_id_in_every_link(self) -> None:
        sid = int(time.monotonic() * 1e6)
        self.html(_page("会话", f'<a href="/session?sid={sid}">同一页</a> <a href="/session?jsessionid={sid}&utm_source=x">又一次</a>'))

    def endless_redirect_chain(self) -> None:
        n = int(self.path.rstrip("/").rsplit("/", 1)[1])
        self.reply(302, b"", Location=f"/redirect-chain/{n + 1}")

    def redirect_loop(self) -> None:
        self.reply(302, b"", Location="/redirect-loop-b" if self.path.startswith("/redirect-loop-a") else "/redirect-loop-a")

    # --- what must not be parsed, or not for long
    def pdf_as_html(self) -> None:
        self.reply(200, b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 40, "text/html")

    def zip_as_html(self) -> None:
        self.reply(200, b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256)) * 40, "text/html")

    def jpeg_as_html(self) -> None:
        self.reply(200, b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256)) * 40, "text/html")

    def gzip_bomb(self) -> None:
        self.reply(200, GZIP_BOMB, "text/html", Content_Encoding="gzip")

    def fifty_megabyte_page(self) -> None:
        self.reply(200, b"<html><title>big</title><p>" + b"x" * (50 * 1024 * 1024), "text/html")

    def endless_chunked_response(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"<p>" + b"y" * 65_536 + b"</p>"
        try:
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            self.close_connection = True

    def one_byte_per_second(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _ in range(100_000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(1)
        except OSError:
            self.close_connection = True


def _gzip_bomb(inflated_mb: int = 256) -> bytes:
    """A small gzip body that inflates to ``inflated_mb`` MiB of zeros."""
    block = b"\0" * (1024 * 1024)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: gzip framing
    out = bytearray()
    for _ in range(inflated_mb):
        out += compressor.compress(block)
    out += compressor.flush()
    return bytes(out)


GZIP_BOMB = _gzip_bomb()

# Pages expected in the index, with their title, and the text a search must find.
WELL_FORMED = {
    "/": "恶意测试站点首页",
    "/charset/big5-undeclared.html": "臺灣大學圖書館",
    "/charset/big5-declared.html": "臺灣大學首頁",
    "/charset/gbk-meta-says-utf8.html": "北京大学图书馆",
    "/charset/gbk-undeclared.html": "北大图书馆",
    "/charset/gb18030-declared.html": "吉野家",
    "/xss/script-in-title-and-body.html": SCRIPT_TITLE,
    "/broken/invalid-utf8.html": "坏的编码",
    "/broken/nul-bytes.html": "空字节页面",
}
NOT_INDEXED = [
    "/binary/pdf-as-html.html", "/binary/zip-as-html.html", "/binary/jpeg-as-html.html",
    "/huge/gzip-bomb.html", "/huge/fifty-megabyte-page.html", "/huge/endless-chunked-response.html",
    "/slow/one-byte-per-second.html",
]  # fmt: skip
HOME_LINKS = [
    *[p for p in WELL_FORMED if p != "/"], *NOT_INDEXED, "/private/secret.html",
    "/huge/title.html", "/huge/hundred-thousand-links.html",
    "/calendar?page=1", "/deeper/", "/session?sid=1", "/redirect-chain/1", "/redirect-loop-a",
]  # fmt: skip

ROUTES: list[tuple[str, Callable[[Handler], None]]] = [
    (r"/", Handler.home),
    (r"/robots\.txt", Handler.robots_moved),
    (r"/robots/moved-again\.txt", Handler.robots_moved_again),
    (r"/robots/real\.txt", Handler.robots_real),
    (r"/private/.*", Handler.private),
    (r"/charset/big5-undeclared\.html", Handler.big5_undeclared),
    (r"/charset/big5-declared\.html", Handler.big5_declared),
    (r"/charset/gbk-meta-says-utf8\.html", Handler.gbk_meta_says_utf8),
    (r"/charset/gbk-undeclared\.html", Handler.gbk_undeclared),
    (r"/charset/gb18030-declared\.html", Handler.gb18030_declared),
    (r"/xss/script-in-title-and-body\.html", Handler.script_in_title_and_body),
    (r"/broken/invalid-utf8\.html", Handler.invalid_utf8),
    (r"/broken/nul-bytes\.html", Handler.nul_bytes),
    (r"/huge/title\.html", Handler.huge_title),
    (r"/huge/hundred-thousand-links\.html", Handler.hundred_thousand_links),
    (r"/sitemaps/index-of-indexes\.xml", Handler.sitemap_index_of_indexes),
    (r"/sitemaps/index\.xml", Handler.sitemap_index),
    (r"/sitemaps/60000-entries\.xml", Handler.sitemap_60000_entries),
    (r"/calendar", Handler.calendar_next_page),
    (r"/deeper/.*", Handler.ever_deeper_path),
    (r"/session", Handler.session_id_in_every_link),
    (r"/redirect-chain/\d+", Handler.endless_redirect_chain),
    (r"/redirect-loop-[ab]", Handler.redirect_loop),
    (r"/binary/pdf-as-html\.html", Handler.pdf_as_html),
    (r"/binary/zip-as-html\.html", Handler.zip_as_html),
    (r"/binary/jpeg-as-html\.html", Handler.jpeg_as_html),
    (r"/huge/gzip-bomb\.html", Handler.gzip_bomb),
    (r"/huge/fifty-megabyte-page\.html", Handler.fifty_megabyte_page),
    (r"/huge/endless-chunked-response\.html", Handler.endless_chunked_response),
    (r"/slow/one-byte-per-second\.html", Handler.one_byte_per_second),
]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the crawler hangs up on the endless and the slow pages on purpose


class _OtherPort(QuietHandler):
    site: HostileSite

    def do_GET(self) -> None:
        self.site.other_port_hits.append(self.path)
        self.reply(200, b"no", "")


SLOW_HOST_CRAWL_DELAY = 2
SLOW_HOST_PAGES = 5


class _CrawlDelayHost(QuietHandler):
    """A polite site that asks for a Crawl-delay: with --delay 0 and parallel fetches per
    host allowed, its requests must still come at least that far apart."""

    site: HostileSite

    def do_GET(self) -> None:
        self.site.slow_host_hits.append(Hit(self.path, time.monotonic()))
        status = 200
        if self.path == "/robots.txt":
            body, kind = f"User-agent: *\nCrawl-delay: {SLOW_HOST_CRAWL_DELAY}\n".encode(), "text/plain"
        elif self.path == "/sitemap.xml":
            status, body, kind = 404, b"no sitemap", "text/plain"
        else:
            links = "".join(f'<a href="/page/{i}.html">第{i}页</a>' for i in range(SLOW_HOST_PAGES))
            body, kind = _page("慢一点", f"<p>请慢一点抓取。</p>{links}").encode(), "text/html; charset=utf-8"
        self.reply(status, body, kind)


ROBOTS_TIMEOUT_S = 60  # far past the test crawl's 5 s request timeout, even on a loaded machine
# The one rule a robots.txt of 1 MB states before its junk: RFC 9309 asks crawlers to
# parse at least the first 500 KiB, so it must hold.
JUNK_ROBOTS = ("User-agent: *\nDisallow: /private/\n" + "这不是规则 \x01\x7f garbage: ### \n" * 40_000).encode("utf-8")
ROBOTS_TROUBLES = ("timeout", "server-error", "junk")


class _RobotsTroubleHost(QuietHandler):
    """A site whose robots.txt is the trouble: it never answers in time, answers 500,
    or is a megabyte of junk after one Disallow line. Its pages link to an open and a
    private page."""

    site: HostileSite
    trouble: str

    def do_GET(self) -> None:
        self.site.robots_trouble_paths[self.trouble].append(self.path)
        if self.path == "/robots.txt":
            self._robots()
            return
        if self.path == "/sitemap.xml":
            self.reply(404, b"no sitemap", "text/plain")
            return
        links = '<a href="/open.html">公开页面</a> <a href="/private/secret.html">私人页面</a>'
        page = _page(f"{self.trouble} 站点 {self.path}", f"<p>{self.path} 的内容。</p>{links}")
        self.reply(200, page.encode(), "text/html; charset=utf-8")

    def _robots(self) -> None:
        if self.trouble == "timeout":
            time.sleep(ROBOTS_TIMEOUT_S)
            self.reply(200, b"User-agent: *\nDisallow:\n", "text/plain")
        elif self.trouble == "server-error":
            self.reply(500, b"internal error", "text/plain")
        else:
            self.reply(200, JUNK_ROBOTS, "text/plain")


class RunningHostileSite:
    """Context manager: the hostile site and the off-limits port, each in a thread."""

    def __init__(self) -> None:
        self.site = HostileSite()
        self._servers: list[_Server] = []

    def __enter__(self) -> HostileSite:
        other = _Server(("127.0.0.1", 0), type("Other", (_OtherPort,), {"site": self.site}))
        main = _Server(("127.0.0.1", 0), type("Hostile", (Handler,), {"site": self.site}))
        slow = _Server(("127.0.0.2", 0), type("CrawlDelay", (_CrawlDelayHost,), {"site": self.site}))
        self.site.other_port_base = f"http://127.0.0.1:{other.server_address[1]}"
        self.site.base = f"http://127.0.0.1:{main.server_address[1]}"
        self.site.slow_host_base = f"http://127.0.0.2:{slow.server_address[1]}"
        servers = [other, main, slow]
        for n, trouble in enumerate(ROBOTS_TROUBLES, start=3):
            handler = type(f"Robots-{trouble}", (_RobotsTroubleHost,), {"site": self.site, "trouble": trouble})
            server = _Server((f"127.0.0.{n}", 0), handler)
            self.site.robots_trouble_bases[trouble] = f"http://127.0.0.{n}:{server.server_address[1]}"
            self.site.robots_trouble_paths[trouble] = []
            servers.append(server)
        for server in servers:
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self._servers.append(server)
        return self.site

    def __exit__(self, *exc: object) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
