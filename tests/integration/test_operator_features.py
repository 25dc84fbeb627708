"""Issue 38's operator features over HTTP, in both modes (tests/operator_deployment.py):
search analytics and click links, the dictionaries, a host's crawl settings, the
cached copy and sort by date. The pages themselves are tested in Chromium
(tests/e2e/test_operator_console_browser.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient

from services.api.app import create_app
from services.api.context import EXTENSION, ApiContext
from services.common.analysis import stop_words, synonyms, words
from services.common.bootstrap import build_frontier_state
from services.common.runtime.metrics import SEARCH_ANALYTICS_SEARCHES, SEARCH_RESULT_CLICKS
from tests.operator_deployment import MODES, TOKEN, Deployment, deployment

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module", params=MODES)
def dep(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with deployment(request.param, request, tmp_path_factory.mktemp(request.param)) as made:
        yield made


@pytest.fixture(scope="module")
def app(dep: Deployment) -> Iterator[Flask]:
    app = create_app(dep.cfg, index=dep.index)
    yield app
    ctx: ApiContext = app.extensions[EXTENSION]
    ctx.analytics.stop()
    ctx.dictionaries.stop()
    # The dictionaries are process-wide: leave the shipped ones for the next module.
    words.set_user_words([])
    synonyms.set_table(None)
    stop_words.set_stop_words(None)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def context(app: Flask) -> ApiContext:
    return app.extensions[EXTENSION]


def logged_in(client: FlaskClient) -> str:
    """Log the client in; the console's CSRF token."""
    client.post("/admin/login", data={"token": TOKEN})
    page = client.get("/admin").get_data(as_text=True)
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


# --- search analytics -----------------------------------------------------------------


def test_searches_and_clicks_are_counted_per_day_without_any_client_address(app: Flask, client: FlaskClient,
                                                                            dep: Deployment) -> None:  # fmt: skip
    hits_before = SEARCH_ANALYTICS_SEARCHES.labels(result="hits")._value.get()
    zero_before = SEARCH_ANALYTICS_SEARCHES.labels(result="zero")._value.get()
    clicks_before = SEARCH_RESULT_CLICKS._value.get()
    page = client.get("/?q=安装", environ_base={"REMOTE_ADDR": "198.51.100.77"}).get_data(as_text=True)
    client.get("/api/search?q=安装&size=1&page=2", environ_base={"REMOTE_ADDR": "198.51.100.77"})
    client.get("/?q=没有这样的词语", environ_base={"REMOTE_ADDR": "198.51.100.77"})
    link = re.search(r'<h2 class="result-title"><a href="(/go\?[^"]+)"', page).group(1).replace("&amp;", "&")
    target = parse_qs(urlsplit(link).query)["url"][0]
    assert target.startswith(dep.site)
    went = client.get(link)
    assert went.status_code == 302 and went.headers["Location"] == target
    assert went.headers["Referrer-Policy"] == "origin"
    context(app).analytics.flush()

    report = client.get("/api/analytics?recent=10", headers=AUTH).get_json()
    assert report["day"]["searches"] == 2 and report["day"]["result_pages"] == 3
    assert report["day"]["zero_hit"] == 1 and report["day"]["clicks"] == 1
    assert [q["query"] for q in report["zero_hit"]] == ["没有这样的词语"]
    popular = {q["query"]: q for q in report["popular"]}
    assert popular["安装"]["searches"] == 1 and popular["安装"]["clicks"] == 1 and popular["安装"]["last_total"] >= 3
    assert report["clicked"] == [{"url": target, "clicks": 1}]
    assert [(e["query"], e["page"], e["source"]) for e in report["recent"]] == [
        ("没有这样的词语", 1, "web"), ("安装", 2, "api"), ("安装", 1, "web")]  # fmt: skip
    assert "198.51.100.77" not in str(report)
    assert SEARCH_ANALYTICS_SEARCHES.labels(result="hits")._value.get() == hits_before + 1
    assert SEARCH_ANALYTICS_SEARCHES.labels(result="zero")._value.get() == zero_before + 1
    assert SEARCH_RESULT_CLICKS._value.get() == clicks_before + 1
    if dep.mode == "embedded":  # nothing that names the client is on disk either
        assert b"198.51.100.77" not in (dep.cfg.data_dir / "search_log.sqlite3").read_bytes()


def test_a_click_link_that_a_results_page_did_not_make_is_refused(client: FlaskClient, dep: Deployment) -> None:
    answer = client.get("/api/search?q=安装").get_json()
    link = answer["results"][0]["click_url"]
    assert link.startswith("/go?")
    forged = link.replace("url=", "url=https%3A%2F%2Fevil.example%2F%3F", 1)
    assert client.get(forged).status_code == 403  # well formed, but not a link a results page made
    assert client.get("/go?url=https://evil.example/&q=a&pos=1&sig=00").status_code == 403
    assert client.get("/go?url=javascript:alert(1)&q=a&pos=x&sig=").status_code == 400


def test_the_analytics_export_needs_the_token_and_checks_its_parameters(client: FlaskClient) -> None:
    assert client.get("/api/analytics").status_code == 401
    assert client.get("/api/analytics?day=yesterday", headers=AUTH).status_code == 400
    assert client.get("/api/analytics?top=0", headers=AUTH).status_code == 400
    assert client.get("/api/analytics?day=2001-01-01", headers=AUTH).get_json()["day"]["searches"] == 0


# --- sort by date, dates, cached copy ---------------------------------------------------------


def test_results_carry_their_date_and_sort_by_date_puts_the_newest_first(client: FlaskClient, dep: Deployment) -> None:
    by_relevance = client.get("/api/search?q=安装").get_json()
    by_date = client.get("/api/search?q=安装&sort=date").get_json()
    assert by_date["sort"] == "date" and by_date["total"] == by_relevance["total"] == 4
    dates = {r["url"].removeprefix(dep.site): (r["date"], r["date_source"]) for r in by_date["results"]}
    assert dates["/docs/wifi.html"] == ("2024-08-05T08:30:00+00:00", "last_modified")
    assert dates["/docs/printer.html"] == ("2026-09-21T14:13:20+00:00", "fetched")
    order = [r["url"].removeprefix(dep.site) for r in by_date["results"]]
    assert order[:2] == ["/docs/printer.html", "/private/notes.html"] and order[2:] == ["/docs/wifi.html",
                                                                                           "/docs/install.html"]  # fmt: skip
    assert client.get("/api/search?q=安装&sort=newest").status_code == 400
    page = client.get("/?q=安装&sort=date").get_data(as_text=True)
    assert "2024-08-05" in page and "网页快照" in page and 'aria-current="true">时间' in page


def test_the_cached_copy_is_framed_under_its_fetch_date_and_served_sandboxed(client: FlaskClient, dep: Deployment) -> None:
    url = dep.url("/docs/install.html")
    framed = client.get("/cache", query_string={"url": url})
    html = framed.get_data(as_text=True)
    assert framed.status_code == 200 and "2026-09-21" in html and "2022-03-01" in html and 'sandbox="' in html
    raw = client.get("/cache/raw", query_string={"url": url})
    body = raw.get_data(as_text=True)
    assert raw.status_code == 200 and raw.mimetype == "text/html"
    csp = raw.headers["Content-Security-Policy"]
    assert csp.startswith("sandbox ") and "allow-scripts" not in csp and "default-src 'none'" in csp
    assert "本文介绍如何安装探索引擎" in body and "<script" not in body and "refresh" not in body
    assert f'<base href="{url}" target="_blank">' in body
    gbk = client.get("/cache/raw", query_string={"url": dep.url("/docs/printer.html")}).get_data(as_text=True)
    assert "打印机的安装与设置" in gbk  # a GB18030 page, decoded as the crawler decoded it
    assert client.get("/cache", query_string={"url": dep.url("/private/notes.html")}).status_code == 404  # noarchive
    assert client.get("/cache", query_string={"url": dep.url("/not/indexed.html")}).status_code == 404
    assert client.get("/cache", query_string={"url": "file:///etc/passwd"}).status_code == 400


# --- dictionaries -----------------------------------------------------------------------------


def test_synonyms_and_stop_words_saved_over_the_api_apply_to_the_next_search(app: Flask, client: FlaskClient) -> None:
    assert client.get("/api/search?q=组件").get_json()["total"] == 0
    saved = client.put("/api/dictionaries/synonyms", json={"text": "组件 => 软件包\n单独\n"}, headers=AUTH)
    assert saved.status_code == 200
    body = saved.get_json()
    assert body["entries"] == 1 and [p["line"] for p in body["problems"] if p["fatal"]] == [2]
    assert client.get("/api/search?q=组件").get_json()["total"] == 2  # no reindex
    status = client.get("/api/dictionaries", headers=AUTH).get_json()
    assert status["dictionaries"]["synonyms"]["text"].startswith("组件 =>")
    assert status["dictionaries"]["stop_words"]["text"] is None  # the shipped defaults
    assert client.delete("/api/dictionaries/synonyms", headers=AUTH).get_json() == {"name": "synonyms", "defaults": True}
    assert client.get("/api/search?q=组件").get_json()["total"] == 0
    assert client.put("/api/dictionaries/nonsense", json={"text": ""}, headers=AUTH).status_code == 404
    assert client.put("/api/dictionaries/synonyms", data="x", headers=AUTH).status_code == 400
    assert client.put("/api/dictionaries/synonyms", json={"text": "a, b"}).status_code == 401


def test_new_user_words_say_that_indexed_pages_need_a_reanalysis_and_it_can_be_asked_for(
    app: Flask, client: FlaskClient
) -> None:
    csrf = logged_in(client)
    saved = client.post("/admin/dictionaries/user_words", data={"csrf": csrf, "text": "探索引擎\nC语言\n"})
    assert saved.status_code == 303
    page = client.get(saved.headers["Location"]).get_data(as_text=True)
    assert "已保存用户词典" in page and "含有汉字以外的字符" in page and "重新切分已收录的网页" in page
    assert client.get("/api/dictionaries", headers=AUTH).get_json()["reanalysis_needed"] is True
    asked = client.post("/admin/reanalysis", data={"csrf": csrf})
    assert asked.status_code == 303
    status = client.get("/api/dictionaries", headers=AUTH).get_json()
    assert status["reanalysis"]["state"] == "pending" and status["reanalysis_needed"] is False
    assert "由索引器执行" in client.get("/admin/dictionaries").get_data(as_text=True)
    assert client.post("/admin/dictionaries/user_words", data={"csrf": "stale", "text": ""}).status_code == 403
    client.post("/admin/dictionaries/user_words", data={"csrf": csrf, "action": "reset"})
    assert context(app).dictionaries.installed.user_words == ""


# --- a host's crawl settings ------------------------------------------------------------------


def test_host_settings_saved_over_the_api_reach_the_frontier_and_its_queue(client: FlaskClient, dep: Deployment) -> None:
    url = f"/api/hosts/{dep.host}/settings"
    assert client.get(url, headers=AUTH).get_json()["settings"] is None
    saved = client.put(url, json={"exclude": ["/private/"], "delay_s": 2.5, "max_depth": 3}, headers=AUTH)
    assert saved.status_code == 200
    body = saved.get_json()
    assert body["excluded"] == 1 and body["delay_s"] == 2.5 and body["settings"]["exclude"] == ["/private/"]
    state = build_frontier_state(dep.cfg)
    assert state.host_settings()[dep.host].max_depth == 3 and state.get_host(dep.host).delay_s == 2.5
    assert state.url_state(dep.url("/private/c.html"))[:2] == ("excluded", "host_settings")
    bad = client.put(url, json={"include": ["("]}, headers=AUTH)
    assert bad.status_code == 400 and "正则" in bad.get_json()["error"]
    assert client.put(url, json={"depth": 3}, headers=AUTH).status_code == 400
    back = client.delete(url, headers=AUTH).get_json()
    assert back["settings"] is None and back["readmitted"] == 1 and back["delay_s"] == 1.0
    assert state.host_settings() == {} and state.url_state(dep.url("/private/c.html"))[0] == "queued"
    state.close()


def test_a_host_in_the_path_is_case_insensitive_and_nothing_else_is_trimmed(client: FlaskClient, dep: Deployment) -> None:
    # The contract's pattern allows upper case and no spaces; the server read " h" as "h".
    assert client.get("/api/hosts/WWW.Example.CN/settings", headers=AUTH).get_json()["host"] == "www.example.cn"
    assert client.get(f"/api/hosts/%20{dep.host}/settings", headers=AUTH).status_code == 400


def test_the_console_form_keeps_what_was_typed_when_a_setting_is_wrong(client: FlaskClient, dep: Deployment) -> None:
    csrf = logged_in(client)
    assert f'/admin/hosts/{dep.host}/settings' in client.get("/admin").get_data(as_text=True)
    url = f"/admin/hosts/{dep.host}/settings"
    wrong = client.post(url, data={"csrf": csrf, "include": "/docs/\n[", "max_depth": "2"})
    page = wrong.get_data(as_text=True)
    assert wrong.status_code == 400 and "不是有效的正则表达式" in page and "/docs/\n[" in page
    ok = client.post(url, data={"csrf": csrf, "include": "/docs/", "allow_domains": "*.Example.org"})
    assert ok.status_code == 303
    page = client.get(ok.headers["Location"]).get_data(as_text=True)
    assert "已保存" in page and "*.example.org" in page
    checked = client.get(url, query_string={"check": dep.url("/private/x.html")}).get_data(as_text=True)
    assert "不会抓取：不符合包含规则" in checked
    client.post(url, data={"csrf": csrf, "action": "reset"})
    assert "本主机使用全局设置" in client.get(url).get_data(as_text=True)


def test_console_pages_send_a_stranger_to_the_login(client: FlaskClient, dep: Deployment) -> None:
    for path in ("/admin/analytics", "/admin/dictionaries", f"/admin/hosts/{dep.host}/settings"):
        answer = client.get(path)
        assert answer.status_code == 303 and answer.headers["Location"].endswith("/admin"), path
    assert client.post("/admin/reanalysis", data={}).status_code == 403


def test_the_console_shows_the_days_searches(app: Flask, client: FlaskClient) -> None:
    client.get("/?q=打印机")
    logged_in(client)
    page = client.get("/admin/analytics").get_data(as_text=True)
    assert "热门查询" in page and 'data-query="打印机"' in page and "无结果的查询" in page
    assert client.get("/admin/analytics?day=31-12-2020").status_code == 400


def test_with_analytics_off_nothing_is_recorded_and_results_link_straight_to_their_pages(dep: Deployment) -> None:
    cfg = dep.cfg.model_copy(update={"analytics_enabled": False})
    app = create_app(cfg, index=dep.index)
    client = app.test_client()
    before = client.get("/api/analytics", headers=AUTH).get_json()["day"]["result_pages"]
    answer = client.get("/api/search?q=安装").get_json()
    assert answer["results"] and all(r["click_url"] is None for r in answer["results"])
    page = client.get("/?q=安装").get_data(as_text=True)
    assert "/go?" not in page and f'href="{dep.url("/docs/install.html")}"' in page
    context(app).analytics.flush()
    report = client.get("/api/analytics", headers=AUTH).get_json()
    assert report["enabled"] is False and report["day"]["result_pages"] == before
    context(app).analytics.stop()
    context(app).dictionaries.stop()
