"""The static site server that the demo and the crawl tests serve pages from."""

from __future__ import annotations

import http.client
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.static_site_server import RequestRecord, SiteServer

PAGE = "<!DOCTYPE html><html><head><title>首页</title></head><body>你好，探索</body></html>"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.html").write_text("<p>文档</p>", encoding="utf-8")
    (tmp_path / "docs" / "第一章.html").write_text("<p>第一章</p>", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / "style.css").write_text("body{}", encoding="utf-8")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n")
    return tmp_path


@pytest.fixture
def server(site: Path) -> Iterator[SiteServer]:
    with SiteServer(site) as s:
        yield s


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers.items()), err.read()


def test_it_serves_files_with_a_utf8_content_type(server: SiteServer) -> None:
    status, headers, body = get(server.url + "index.html")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert body.decode("utf-8") == PAGE
    assert get(server.url + "style.css")[1]["Content-Type"] == "text/css; charset=utf-8"
    assert get(server.url + "logo.png")[1]["Content-Type"] == "image/png"


def test_the_url_is_loopback_with_the_chosen_port(server: SiteServer) -> None:
    assert server.url == f"http://127.0.0.1:{server.port}/"
    assert server.port > 0


def test_a_directory_serves_its_index_page(server: SiteServer) -> None:
    assert get(server.url)[2].decode("utf-8") == PAGE
    assert get(server.url + "docs/")[2].decode("utf-8") == "<p>文档</p>"


def test_a_directory_without_its_slash_redirects_to_it(server: SiteServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("GET", "/docs")
    response = conn.getresponse()
    assert (response.status, response.getheader("Location")) == (301, "/docs/")
    conn.close()


def test_percent_encoded_chinese_file_names_are_served(server: SiteServer) -> None:
    assert get(server.url + "docs/%E7%AC%AC%E4%B8%80%E7%AB%A0.html")[0] == 200


def test_missing_files_and_directories_without_an_index_are_404(server: SiteServer) -> None:
    assert get(server.url + "nope.html")[0] == 404
    assert get(server.url + "empty/")[0] == 404  # never a directory listing


def test_paths_cannot_escape_the_root(server: SiteServer, site: Path) -> None:
    (site.parent / "secret.txt").write_text("secret", encoding="utf-8")
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    for path in ("/../secret.txt", "/docs/../../secret.txt", "/%2e%2e/secret.txt"):
        conn.request("GET", path)
        response = conn.getresponse()
        assert b"secret" not in response.read()
        assert response.status == 404
    conn.close()


def test_robots_txt_is_404_unless_given(site: Path) -> None:
    with SiteServer(site) as plain:
        assert get(plain.url + "robots.txt")[0] == 404
    with SiteServer(site, robots_txt="User-agent: *\nDisallow: /docs/\n") as strict:
        status, headers, body = get(strict.url + "robots.txt")
        assert (status, body) == (200, b"User-agent: *\nDisallow: /docs/\n")
        assert headers["Content-Type"].startswith("text/plain")


def test_requests_are_logged_with_arrival_times_and_headers(server: SiteServer) -> None:
    before_mono, before_wall = time.monotonic(), time.time()
    get(server.url + "index.html?x=1", headers={"User-Agent": "TansuoBot/0.1"})
    get(server.url + "nope.html")
    log = server.requests
    assert [(r.method, r.path) for r in log] == [("GET", "/index.html?x=1"), ("GET", "/nope.html")]
    assert log[0].headers["User-Agent"] == "TansuoBot/0.1"
    assert before_mono <= log[0].time <= log[1].time <= time.monotonic()
    assert before_wall - 1 <= log[0].wall_time <= time.time() + 1
    server.clear_requests()
    assert server.requests == []


def test_the_arrival_time_is_taken_before_the_response_is_made(site: Path) -> None:
    def slow(request: RequestRecord) -> tuple[int, dict[str, str], bytes]:
        time.sleep(0.3)
        return 200, {"Content-Type": "text/plain"}, b"slow"

    with SiteServer(site, extra_routes={"/slow": slow}) as server:
        sent = time.monotonic()
        get(server.url + "slow")
        assert server.requests[0].time - sent < 0.2


def test_extra_routes_serve_fixed_or_computed_responses(site: Path) -> None:
    gbk_page = "<html><head><title>中文编码</title></head><body>国标码页面</body></html>".encode("gbk")
    routes = {
        "/gbk.html": (200, {"Content-Type": "text/html; charset=gbk"}, gbk_page),
        "/moved": (301, {"Location": "/docs/"}, b""),
        "/echo": lambda r: (200, {"Content-Type": "text/plain"}, r.headers.get("User-Agent", "").encode()),
        "/index.html": (500, {}, b"routes win over files"),
    }
    with SiteServer(site, extra_routes=routes) as server:
        status, headers, body = get(server.url + "gbk.html")
        assert headers["Content-Type"] == "text/html; charset=gbk"
        assert body.decode("gbk") == "<html><head><title>中文编码</title></head><body>国标码页面</body></html>"
        assert get(server.url + "moved")[2].decode("utf-8") == "<p>文档</p>"  # urllib follows the 301
        status, _, body = get(server.url + "index.html")
        assert (status, body) == (500, b"routes win over files")
        assert get(server.url + "echo?q=1", headers={"User-Agent": "bot"})[2] == b"bot"
        assert [r.path for r in server.requests][:2] == ["/gbk.html", "/moved"]


def test_a_route_that_raises_answers_500(site: Path) -> None:
    def broken(request: RequestRecord) -> tuple[int, dict[str, str], bytes]:
        raise RuntimeError("bug in a test route")

    with SiteServer(site, extra_routes={"/broken": broken}) as server:
        assert get(server.url + "broken")[0] == 500


def test_html_charset_can_be_left_to_the_page(site: Path) -> None:
    with SiteServer(site, html_charset=None) as server:
        assert get(server.url)[1]["Content-Type"] == "text/html"


def test_head_sends_headers_without_a_body(server: SiteServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("HEAD", "/index.html")
    response = conn.getresponse()
    assert response.status == 200
    assert int(response.getheader("Content-Length")) == len(PAGE.encode("utf-8"))
    assert response.read() == b""
    conn.close()


def test_conditional_requests_get_304(server: SiteServer) -> None:
    _, headers, _ = get(server.url)
    assert get(server.url, headers={"If-None-Match": headers["ETag"]})[0] == 304
    assert get(server.url, headers={"If-Modified-Since": headers["Last-Modified"]})[0] == 304
    assert get(server.url, headers={"If-None-Match": '"other"'})[0] == 200


def test_keep_alive_connections_serve_several_requests(server: SiteServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    for _ in range(3):
        conn.request("GET", "/index.html")
        assert conn.getresponse().read().decode("utf-8") == PAGE
    conn.close()


def test_concurrent_requests_are_all_logged(server: SiteServer) -> None:
    threads = [threading.Thread(target=get, args=(server.url + f"docs/?n={i}",)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(server.requests) == 20


def test_a_stopped_server_refuses_connections(site: Path) -> None:
    server = SiteServer(site).start()
    url = server.url
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("GET", "/")
    conn.getresponse().read()  # leaves a keep-alive connection open
    server.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)
    with pytest.raises((OSError, http.client.HTTPException)):
        conn.request("GET", "/")
        conn.getresponse()
    server.stop()  # stopping twice is harmless
