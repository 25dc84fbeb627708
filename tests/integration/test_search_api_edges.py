"""Edges of the search API and the web UI, found by a review against what docs/search.md,
docs/api.md, docs/ranking.md and services/api/openapi.json promise: paging, totals, the query
language's operators as Chinese users type them, site: filters and odd input.

One app over a small real tantivy index, built as tests/integration/test_api.py builds
its own; every page is indexed under the URL the crawler would give it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import jsonschema
import pytest
from flask.testing import FlaskClient

from services.api.app import create_app
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.common.domain.messages import PageEvent
from services.common.domain.url_canonical import canonicalize
from services.indexer.document_builder import build_document
from tests.page_events import page_event

FLAG_CN = "\U0001f1e8\U0001f1f3"  # 🇨🇳: two regional indicators, one flag
E_ACUTE_NFD = "e\u0301"  # é as e + combining acute accent
IDN_URL = "https://例子.中国/首页"
# Filler that leaves 27 characters between the "apt" of "adapt" and 交换机, so that the
# snippet's window (30 characters of lead before the best match) starts on that "apt".
ADAPT_BODY = "中" * 50 + "adapt" + "中" * 27 + "交换机 apt" + "中" * 200


def _pages() -> list[PageEvent]:
    pages = [
        # An internationalised host, as the crawler files it (canonical URL: punycode).
        page_event(canonicalize(IDN_URL), "例子网站 首页", "欢迎来到例子网站，这里介绍路由器和交换机。"),
        page_event(canonicalize("https://Docs.Example.cn:443/guide"), "文档指南", "这份文档指南介绍打印机驱动。"),
        # Decomposed accents (NFD), as macOS and some editors write them.
        page_event(
            "https://comb.example.cn/cafe",
            f"Caf{E_ACUTE_NFD} 咖啡馆",
            E_ACUTE_NFD * 100 + " 咖啡馆 " + E_ACUTE_NFD * 100,
        ),
        # Emoji made of several code points.
        page_event("https://emoji.example.cn/flag", "国旗 表情", FLAG_CN * 100 + "的国旗" + FLAG_CN * 100),
        page_event("https://emoji.example.cn/title", "旗帜" + "标" * 77 + FLAG_CN + "尾", "旗帜的说明。"),
        page_event("https://comb.example.cn/title", "重音" + "标" * 77 + E_ACUTE_NFD + "尾", "重音的说明。"),
        # A zero-width space inside a word, as pages copied from chat or PDFs hold them.
        page_event("https://zw.example.cn/router", "零宽 页面", "这是一篇关于路\u200b由器的文章。"),
        page_event("https://plain.example.cn/firewall", "防火墙配置", "防火墙规则的说明。"),
        # Latin words the query's words occur inside.
        page_event("https://latin.example.cn/fullwidth", "全角单词", "用 apt 安装 ＡＤＡＰＴ 工具和 ＡＰＴＳ 插件。"),
        page_event("https://latin.example.cn/window", "交换机 说明", ADAPT_BODY),
        page_event("https://latin.example.cn/long", "很长的页面", "adapt " + "填充" * 11_000 + " 最后用 apt 安装。"),
    ]
    # Site diversity: 40 pages of a.example.cn outrank 10 of b.example.cn for 数据库.
    for i in range(40):
        body = f"数据库 第{i}篇 " + f"独特内容{i} " * (i % 5 + 1) + f"词{i}"
        pages.append(page_event(f"https://a.example.cn/{i}", f"数据库 数据库 教程 {i}", body))
    for i in range(10):
        pages.append(page_event(f"https://b.example.cn/{i}", f"杂谈 {i}", "顺便提到数据库。" + f"其他内容{i} " * 30 + f"别{i}"))
    # The same document mirrored on 15 hosts: near-duplicates fold into one result.
    for i in range(15):
        pages.append(page_event(f"https://mirror{i}.example.cn/doc", "镜像文档", "这是一份被多处镜像的文档内容。"))
    return pages


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlaskClient]:
    """One app over all the pages, shared by the module's tests (they only read)."""
    index = TantivySearchIndex(tmp_path_factory.mktemp("edges") / "index", Settings())
    index.upsert([build_document(e) for e in _pages()])
    index.commit()
    # Many searches from one address (the test client's 127.0.0.1): these tests are about
    # answers, not rate limits (test_api_rate_limit.py).
    yield create_app(Settings(api_rate_limit_per_s=0), index=index).test_client()
    index.close()


def _search(client: FlaskClient, **params: object) -> dict:
    resp = client.get("/api/search", query_string=params)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


def _hit(data: dict, url: str) -> dict:
    (hit,) = [r for r in data["results"] if r["url"] == url]
    return hit


def _text(html: str) -> str:
    """What a reader sees of a snippet or title_html: tags gone, entities decoded."""
    return unescape(re.sub(r"</?em>", "", html))


def _is_regional_indicator(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


# --- paging and totals


def test_paging_neither_repeats_nor_skips_results_when_a_later_page_brings_in_a_second_site(
    client: FlaskClient,
) -> None:
    """Pages 1..6 of 数据库 at size 10 must together list each result once: the
    answer's own ``total`` is 50 and ``pages`` 5."""
    shown: list[str] = []
    for page in range(1, 7):
        shown += [r["url"] for r in _search(client, q="数据库", page=page, size=10)["results"]]
    repeated = sorted({u for u in shown if shown.count(u) > 1})
    never = sorted({f"https://b.example.cn/{i}" for i in range(10)} - set(shown))
    assert not repeated and not never, f"shown twice: {repeated}; never shown: {never}"


def test_pages_counts_only_pages_that_have_results(client: FlaskClient) -> None:
    """15 mirrors fold into one result: ``pages`` said 2 (from ``total``), page 2 was
    empty, and the web UI offered a 下一页 link to it."""
    first = _search(client, q="镜像文档", page=1, size=10)
    second = _search(client, q="镜像文档", page=2, size=10)
    assert len(first["results"]) == 1 and len(first["results"][0]["similar"]) == 14
    assert first["pages"] == 1 and not second["results"], (
        f"pages={first['pages']}, total={first['total']}, page 1 has {len(first['results'])} result(s), "
        f"page 2 has {len(second['results'])}"
    )


# --- the query language as typed with a Chinese input method


def test_site_with_a_full_width_colon_filters_by_site(client: FlaskClient) -> None:
    """A Chinese IME types ``site：host`` (U+FF1A), as it types quotes “…” and ＂: the
    filter was silently dropped."""
    data = _search(client, q="数据库 site：b.example.cn", size=50)
    sites = sorted({r["site"] for r in data["results"]})
    assert data["sites"] == ["b.example.cn"] and sites == ["b.example.cn"], (data["sites"], sites)


def test_a_full_width_minus_excludes_the_word(client: FlaskClient) -> None:
    """``数据库 －杂谈`` (full-width minus, U+FF0D) leaves out the 杂谈 pages; it asked
    for them."""
    data = _search(client, q="数据库 －杂谈", size=50)
    titles = [r["title"] for r in data["results"] if "杂谈" in r["title"]]
    assert data["results"] and not titles, f"{len(titles)} of {len(data['results'])} results are 杂谈 pages"


# --- site: filters








# --- highlighting










# --- snippets and titles cut inside a character as the reader sees it








# --- parameters


@pytest.mark.parametrize(
    ("query", "expected_url"),
    [
        ("site:例子.中国", canonicalize(IDN_URL)),  # the host as users know it; the index holds punycode
        ("路由器 site:例子.中国", canonicalize(IDN_URL)),
        ("site:docs.example.cn.", "https://docs.example.cn/guide"),  # fully qualified, trailing dot
        ("site:docs.example.cn:443", "https://docs.example.cn/guide"),  # default port spelled out
        ("site:https://docs.example.cn:443/guide", "https://docs.example.cn/guide"),  # a pasted URL
    ],
)
def test_site_filter_finds_the_host_however_it_is_spelled(client: FlaskClient, query: str, expected_url: str) -> None:
    data = _search(client, q=query)
    assert expected_url in [r["url"] for r in data["results"]], (
        f"{query!r}: total={data['total']}, sites={data['sites']}"
    )


def test_a_long_page_found_by_a_word_shows_the_word_in_its_snippet(client: FlaskClient) -> None:
    """"adapt" at the top of a 22,000-character page hid the real "apt" at its end: the
    snippet was the page's start, nothing marked."""
    snippet = _hit(_search(client, q="apt", size=50), "https://latin.example.cn/long")["snippet"]
    assert "<em>apt</em>" in snippet, snippet[:60]


def test_snippet_does_not_start_between_the_two_halves_of_a_flag(client: FlaskClient) -> None:
    """Cut after the first regional indicator, 🇨🇳🇨🇳… read 🇳🇨🇳🇨: New Caledonia's flag."""
    text = _text(_hit(_search(client, q="国旗"), "https://emoji.example.cn/flag")["snippet"]).lstrip("…")
    assert text.startswith(FLAG_CN), text[:4].encode("unicode_escape").decode()


def test_snippet_does_not_start_with_a_combining_accent(client: FlaskClient) -> None:
    text = _text(_hit(_search(client, q="咖啡馆"), "https://comb.example.cn/cafe")["snippet"]).lstrip("…")
    assert not unicodedata.combining(text[0]), text[:4].encode("unicode_escape").decode()


@pytest.mark.parametrize(
    ("query", "url", "whole"),
    [("旗帜", "https://emoji.example.cn/title", FLAG_CN), ("重音", "https://comb.example.cn/title", E_ACUTE_NFD)],
    ids=["flag", "combining-accent"],
)
def test_a_long_title_is_not_cut_inside_a_character(client: FlaskClient, query: str, url: str, whole: str) -> None:
    """A title of 80+ characters was cut at 80 code points: half a flag, or an e without
    its accent, before the ellipsis."""
    shown = _text(_hit(_search(client, q=query), url)["title_html"]).rstrip("…")
    tail = shown[-2:]
    assert whole in shown or whole[0] not in tail, tail.encode("unicode_escape").decode()


def test_page_with_a_digit_separator_is_a_400(client: FlaskClient) -> None:
    """``page=1_0`` is not an integer in the contract's sense; Python's int() reads it as
    10, and the API answered page 10."""
    resp = client.get("/api/search?q=数据库&page=1_0")
    assert resp.status_code == 400, f"{resp.status_code}: page={resp.get_json().get('page')}"


# --- behaviour that holds, not covered elsewhere


_ODD_QUERIES = [
    "\x00", "网络\x00", "\u200b", "\u202e数据库", "\ufeff数据库", "-", "- -", "--", '"', '-""', "OR", "OR OR", "|",
    "的 了 是", "the a of", "？！。", "...", "site:.", "site:-", "site:", "-site:x.cn", "(", "\\", "%", "𠀀",
    "ｓｉｔｅ:a.example.cn", "数据库 " * 80, "数" * 500, "a-" * 250, '"数据库', "数据库 OR", "OR 数据库",
]


def _schema(name: str) -> jsonschema.Draft202012Validator:
    document = json.loads(Path(__file__).parents[2].joinpath("services/api/openapi.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator({"$ref": f"#/components/schemas/{name}", "components": document["components"]})


@pytest.mark.parametrize("q", _ODD_QUERIES)
def test_odd_queries_get_a_schema_valid_200_or_a_json_400(client: FlaskClient, q: str) -> None:
    resp = client.get("/api/search", query_string={"q": q, "size": 3})
    assert resp.status_code in (200, 400)
    body = resp.get_json()
    _schema("SearchResult" if resp.status_code == 200 else "Error").validate(body)
    if resp.status_code == 200:
        assert len(body["results"]) <= body["size"] and (not body["results"] or body["pages"] >= body["page"])
    page = client.get("/", query_string={"q": q})
    assert page.status_code in (200, 400)


def test_a_query_of_initials_read_as_several_words_lists_them_in_a_schema_valid_answer(client: FlaskClient) -> None:
    body = _search(client, q="wz", size=3)  # 文章 and 网站, each held by one page
    _schema("SearchResult").validate(body)
    assert body["did_you_mean"] == {"query": "文章 OR 网站", "shown": True, "readings": ["文章", "网站"]}
    html = client.get("/", query_string={"q": "wz"}).get_data(as_text=True)
    assert "已显示“wz”可能指的词：" in html and 'class="reading" href="/?q=%E6%96%87%E7%AB%A0"' in html


def test_the_web_ui_escapes_the_query_and_the_site_it_echoes(client: FlaskClient) -> None:
    html = client.get("/", query_string={"q": '"><script>x()</script>', "site": '"><b>s'}).get_data(as_text=True)
    assert "<script>x()" not in html and '"><b>s' not in html and "&lt;script&gt;" in html
