"""The Flask app over a real tantivy index: JSON API, web UI and health checks."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from services.api.app import create_app
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.common.domain.messages import PageEvent
from services.indexer.document_builder import build_document
from tests.page_events import page_event

TOPICS = ["网络", "软件", "内核", "安全", "打印"]


def _pages() -> list[PageEvent]:
    pages = [
        page_event(
            f"https://docs.example.cn/{topic}/{i}",
            f"{topic}指南 第{i}节",
            f"本节介绍{topic}的第{i}个主题。" + "补充说明。" * i,
        )
        for topic in TOPICS
        for i in range(1, 13)
    ]
    pages.append(
        page_event(
            "https://blog.example.cn/xss",
            "<b>网络</b> 安全 & 防护",
            '讨论网络攻击 <script>alert("网络")</script> 以及防护。',
        )
    )
    pages.append(page_event("https://en.example.cn/apt", "APT 使用", "用 apt-get install 安装程序。"))
    return pages


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TantivySearchIndex]:
    idx = TantivySearchIndex(tmp_path_factory.mktemp("api") / "index", Settings())
    idx.upsert([build_document(e) for e in _pages()])
    idx.commit()
    yield idx
    idx.close()


@pytest.fixture(scope="module")
def app(index: TantivySearchIndex) -> Flask:
    # Many searches from the test client's one address: limits are test_api_rate_limit.py's.
    return create_app(Settings(search_max_page_size=20, api_rate_limit_per_s=0), index=index)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def test_search_returns_the_documented_json_shape(client: FlaskClient) -> None:
    resp = client.get("/api/search", query_string={"q": "内核"})
    assert resp.status_code == 200 and resp.mimetype == "application/json"
    assert "内核" in resp.get_data(as_text=True)  # not \\u escapes
    data = resp.get_json()
    assert {"query", "total", "took_ms", "page", "size", "results"} <= set(data)
    assert (data["query"], data["total"], data["page"], data["size"]) == ("内核", 12, 1, 10)
    assert len(data["results"]) == 10
    for r in data["results"]:
        assert {"url", "title", "snippet", "score", "pagerank", "site"} <= set(r)
        assert r["site"] == "docs.example.cn" and "/内核/" in r["url"]
        assert "<em>内核</em>" in r["snippet"]


def test_snippets_and_titles_are_highlighted_and_escaped(client: FlaskClient) -> None:
    data = client.get("/api/search?q=网络 防护").get_json()
    (hit,) = [r for r in data["results"] if r["url"].endswith("/xss")]
    assert "<script>" not in hit["snippet"]
    assert "&lt;script&gt;alert(\"<em>网络</em>\")&lt;/script&gt;" in hit["snippet"]
    assert hit["title"] == "<b>网络</b> 安全 & 防护"
    assert hit["title_html"] == "&lt;b&gt;<em>网络</em>&lt;/b&gt; 安全 &amp; <em>防护</em>"


@pytest.mark.parametrize(
    "query",
    [
        "",
        "q=",
        "q=%20",
        "q=" + "长" * 501,
        "q=x&page=0",
        "q=x&page=abc",
        "q=x&size=0",
        "q=x&size=21",
        "q=x&size=2.5",
        "q=%ED%A0%80",  # not UTF-8
        "q=x&sort=oldest",
        "q=x&as_typed=",  # the schema's enum: CI's fuzzing saw an empty value read as "no"
        "q=x&as_typed=yes",
    ],
)
def test_bad_parameters_get_a_400_with_a_json_error(client: FlaskClient, query: str) -> None:
    resp = client.get(f"/api/search?{query}")
    assert resp.status_code == 400
    assert resp.is_json and resp.get_json()["error"]


def test_a_page_past_the_result_window_is_empty_not_refused(client: FlaskClient) -> None:
    # The schema gives page no maximum; page x size past 10,000 was refused with 400,
    # which schemathesis's coverage phase reports as a valid request rejected.
    resp = client.get("/api/search?q=x&page=1001&size=10")
    assert resp.status_code == 200 and resp.get_json()["results"] == []


def test_unknown_api_paths_and_methods_get_json_errors(client: FlaskClient) -> None:
    resp = client.get("/api/nope")
    assert resp.status_code == 404 and resp.is_json and resp.get_json()["error"]
    resp = client.post("/api/search?q=x")
    assert resp.status_code == 405 and resp.is_json and resp.get_json()["error"]
    # RFC 9110 15.5.6: a 405 says which methods the resource takes.
    assert set(resp.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS"}


def test_a_failing_index_gives_a_json_500_and_readyz_503(tmp_path: Path) -> None:
    class Broken:
        def search(self, query: object) -> None:
            raise RuntimeError("disk on fire")

        def ping(self) -> None:
            raise RuntimeError("disk on fire")

        def sites(self) -> list[str]:
            raise RuntimeError("disk on fire")

    client = create_app(Settings(), index=Broken()).test_client()  # type: ignore[arg-type]
    resp = client.get("/api/search?q=网络")
    assert resp.status_code == 500 and resp.is_json and "internal error" in resp.get_json()["error"]
    assert client.get("/readyz").status_code == 503
    assert client.get("/livez").status_code == 200
    page = client.get("/?q=网络")
    assert page.status_code == 500 and "服务暂时出错" in page.get_data(as_text=True)


def test_paging_gives_disjoint_pages(client: FlaskClient) -> None:
    first = client.get("/api/search?q=网络&size=5&page=1").get_json()
    second = client.get("/api/search?q=网络&size=5&page=2").get_json()
    last = client.get("/api/search?q=网络&size=5&page=3").get_json()
    assert first["total"] == second["total"] == 13
    urls = [r["url"] for d in (first, second, last) for r in d["results"]]
    assert len(urls) == len(set(urls)) == 13
    assert first["pages"] == 3


def test_the_site_filter_narrows_results(client: FlaskClient) -> None:
    data = client.get("/api/search?q=网络&site=blog.example.cn").get_json()
    assert [r["url"] for r in data["results"]] == ["https://blog.example.cn/xss"]
    assert client.get("/api/search?q=网络&site=nowhere.cn").get_json()["total"] == 0


def test_a_query_with_no_page_having_every_word_falls_back_to_any_word(client: FlaskClient) -> None:
    data = client.get("/api/search?q=内核 打印").get_json()
    assert data["matched_all"] is False and data["total"] == 24


def test_mixed_chinese_and_english_queries_work(client: FlaskClient) -> None:
    data = client.get("/api/search?q=APT-GET 安装").get_json()
    assert data["results"][0]["url"] == "https://en.example.cn/apt"
    assert "<em>apt-get</em>" in data["results"][0]["snippet"]


def test_health_endpoints_answer(client: FlaskClient) -> None:
    assert client.get("/healthz").status_code == 200
    assert client.get("/livez").get_json() == {"status": "ok"}
    assert client.get("/readyz").get_json() == {"status": "ready"}


def test_the_home_page_has_a_search_form_and_the_site_filter(client: FlaskClient) -> None:
    resp = client.get("/")
    html = resp.get_data(as_text=True)
    assert resp.status_code == 200
    assert '<html lang="zh-CN">' in html and 'name="viewport"' in html
    assert re.search(r'<form[^>]*method="get"', html) and 'name="q"' in html
    assert '<select id="site" name="site">' in html
    assert '<option value="blog.example.cn">' in html and '<option value="docs.example.cn">' in html


def test_the_results_page_shows_highlighted_results_count_and_paging(client: FlaskClient) -> None:
    html = client.get("/?q=软件").get_data(as_text=True)
    assert "找到约 <strong>12</strong> 条结果" in html
    assert html.count('class="result"') == 10
    assert "<em>软件</em>" in html
    assert 'href="https://docs.example.cn/软件/1"' in html or "软件/1" in html
    assert "下一页" in html and "上一页" not in html
    assert 'href="/?q=%E8%BD%AF%E4%BB%B6&amp;page=2"' in html


def test_paging_links_keep_the_query_and_the_site(client: FlaskClient) -> None:
    html = client.get("/?q=网络&site=docs.example.cn&page=2").get_data(as_text=True)
    assert "上一页" in html
    assert "site=docs.example.cn" in html and "page=1" in html
    assert '<option value="docs.example.cn" selected>' in html
    assert 'aria-current="page">2<' in html


def test_page_text_is_escaped_in_the_web_ui(client: FlaskClient) -> None:
    html = client.get("/?q=防护").get_data(as_text=True)
    assert '<script>alert("' not in html
    assert "&lt;script&gt;" in html


def test_no_results_and_bad_input_get_clear_messages(client: FlaskClient) -> None:
    resp = client.get("/?q=不存在的词汇xyzzy")
    assert resp.status_code == 200 and "没有找到" in resp.get_data(as_text=True)
    resp = client.get("/?q=网络&page=zero")
    assert resp.status_code == 400 and "查询有误" in resp.get_data(as_text=True)
    assert "页码必须是整数" in resp.get_data(as_text=True) and "must be" not in resp.get_data(as_text=True)
    # The page is forgiving where the API is strict: a hand-edited link still gets results.
    for query in ("sort=oldest", "as_typed=maybe"):
        assert client.get(f"/?q=网络&{query}").status_code == 200


def test_as_typed_takes_the_documented_values(client: FlaskClient) -> None:
    for value in ("1", "true", "0", "false"):
        assert client.get(f"/api/search?q=网络&as_typed={value}").status_code == 200


def test_the_stylesheet_is_served(client: FlaskClient) -> None:
    resp = client.get("/static/style.css")
    assert resp.status_code == 200 and "@media" in resp.get_data(as_text=True)
    resp.close()


def test_pages_name_their_icon_so_a_browser_does_not_ask_for_favicon_ico(client: FlaskClient) -> None:
    for path in ("/", "/?q=网络", "/api/docs"):
        icon = re.search(r'<link rel="icon" href="([^"]+)"', client.get(path).get_data(as_text=True))
        assert icon, path
        resp = client.get(icon.group(1))
        assert resp.status_code == 200 and resp.mimetype == "image/svg+xml" and b"<svg" in resp.data
        resp.close()


def test_suggest_answers_titles_for_a_partial_query(client: FlaskClient) -> None:
    body = client.get("/api/suggest?q=网络指").get_json()
    assert body["query"] == "网络指"
    assert body["suggestions"] and all(s.startswith("网络指南") for s in body["suggestions"])
    assert client.get("/api/suggest?q=").get_json()["suggestions"] == []
    resp = client.get("/api/suggest?q=" + "长" * 101)
    assert resp.status_code == 400 and "too long" in resp.get_json()["error"]


def test_the_search_box_asks_for_suggestions_and_the_ui_explains_the_syntax(client: FlaskClient) -> None:
    html = client.get("/").get_data(as_text=True)
    assert 'list="q-suggestions"' in html and "/api/suggest" in html and "suggest.js" in html
    assert "搜索语法" in html and "site:" in html
    script = client.get("/static/suggest.js")
    assert script.status_code == 200 and "textContent" not in script.get_data(as_text=True)  # values, never HTML
    script.close()


def test_query_operators_work_through_the_api(client: FlaskClient) -> None:
    both = client.get("/api/search?q=安装 site:en.example.cn").get_json()
    assert [r["url"] for r in both["results"]] == ["https://en.example.cn/apt"]
    excluded = client.get("/api/search?q=网络 -安全&size=20").get_json()
    assert excluded["results"] and all("安全" not in r["title"] for r in excluded["results"])
    resp = client.get("/api/search?q=-网络")
    assert resp.status_code == 400 and "only exclusions" in resp.get_json()["error"]


def test_one_site_does_not_crowd_out_the_others_and_more_is_one_click_away(client: FlaskClient) -> None:
    # Twelve docs pages on 安全 outrank the blog's one, which still makes the first page.
    body = client.get("/api/search?q=安全&size=5").get_json()
    sites = [r["site"] for r in body["results"]]
    assert sites == ["docs.example.cn"] * 4 + ["blog.example.cn"]
    assert body["more_from_sites"] == ["docs.example.cn"]
    html = client.get("/?q=安全&size=5").get_data(as_text=True)
    assert "更多来自 docs.example.cn 的结果" in html


def test_a_query_sent_as_raw_utf8_bytes_is_read_as_utf8(app: Flask) -> None:
    """curl and wget send a Chinese query unescaped; werkzeug read those bytes as
    Latin-1 ("å\x86\x85æ ¸") and found nothing."""
    import socket

    from services.common.runtime.http.inprocess_server import serve

    running = serve(app, "127.0.0.1", 0)
    try:
        with socket.create_connection(("127.0.0.1", running.port), timeout=10) as conn:
            conn.sendall("GET /api/search?q=内核 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
    finally:
        running.shutdown()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    data = json.loads(body)
    assert data["query"] == "内核" and data["total"] > 0

