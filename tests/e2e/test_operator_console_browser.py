"""Issue 38's operator features in headless Chromium on a phone-sized screen, in both
modes (tests/operator_deployment.py): a search whose click lands on the page and shows
in the console's analytics, sort by date and the cached copy (whose scripts must not
run), the dictionaries page changing what a search finds, and a host's crawl settings
page reached from the hosts table."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.api.app import create_app
from services.api.context import EXTENSION, ApiContext
from services.common.analysis import stop_words, synonyms, words
from services.common.bootstrap import build_frontier_state
from services.common.runtime.http.inprocess_server import RunningServer, serve
from tests.e2e.chromium import headless_chromium
from tests.operator_deployment import MODES, TOKEN, Deployment, deployment

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module", params=MODES)
def dep(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with deployment(request.param, request, tmp_path_factory.mktemp(request.param)) as made:
        yield made


@pytest.fixture(scope="module")
def server(dep: Deployment) -> Iterator[RunningServer]:
    app = create_app(dep.cfg, index=dep.index)
    running = serve(app, "127.0.0.1", 0)
    yield running
    running.shutdown()
    ctx: ApiContext = app.extensions[EXTENSION]
    ctx.analytics.stop()
    ctx.dictionaries.stop()
    words.set_user_words([])
    synonyms.set_table(None)
    stop_words.set_stop_words(None)


@pytest.fixture(scope="module")
def browser(server: RunningServer) -> Iterator[object]:
    with headless_chromium() as launched:
        yield launched


@pytest.fixture
def page(browser) -> Iterator[object]:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport=PHONE, locale="zh-CN")
    yield context.new_page()
    context.close()


def log_in(page, server: RunningServer) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/admin")
    page.locator("input[name=token]").fill(TOKEN)
    page.locator("button[type=submit]", has_text="登录").click()
    page.wait_for_selector("table.hosts")


def fits_the_phone(page) -> bool:  # type: ignore[no-untyped-def]
    page.wait_for_load_state("load")  # measured before the stylesheets load, the page is the unstyled one
    return page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def search(page, server: RunningServer, query: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    page.locator("input[name=q]").fill(query)
    page.locator("input[name=q]").press("Enter")
    page.wait_for_selector(".result-stats")


def test_a_click_on_a_result_lands_on_the_page_and_the_console_counts_it(server: RunningServer, page, dep: Deployment) -> None:  # type: ignore[no-untyped-def]
    search(page, server, "没有这种说法")
    assert "没有找到" in page.locator(".no-results").inner_text()
    search(page, server, "无线网络")
    first = page.locator("ol.results li.result").first
    assert first.locator(".result-date").inner_text() == "2024-08-05"
    assert first.locator(".result-url").inner_text() == dep.url("/docs/wifi.html")  # the address shown is the page's
    first.locator("h2.result-title a").click()
    page.wait_for_url(dep.url("/docs/wifi.html"))
    assert page.locator("h1").inner_text() == "无线网络配置"

    log_in(page, server)
    page.locator("nav.admin-nav a", has_text="搜索分析").click()
    page.wait_for_selector("#popular-h")
    row = page.locator('table.queries tr[data-query="无线网络"]').first
    cells = row.locator("td").all_inner_texts()
    assert cells[:3] == ["1", "0", "1"] and cells[3] == "100%"  # searches, zero-hit, clicks, click-through
    assert page.locator('table.queries tr[data-query="没有这种说法"]').count() == 2  # popular, and zero-hit
    assert dep.url("/docs/wifi.html") in page.locator("table.clicked").inner_text()
    assert "无线网络" in page.locator("table.recent").inner_text()
    assert fits_the_phone(page)


def test_sort_by_date_and_the_cached_copy_whose_scripts_do_not_run(server: RunningServer, page, dep: Deployment) -> None:  # type: ignore[no-untyped-def]
    search(page, server, "安装")
    page.locator(".result-sort a", has_text="时间").click()
    page.wait_for_url("**sort=date**")
    dates = page.locator(".result-date").all_inner_texts()
    assert dates == sorted(dates, reverse=True) and dates[-2:] == ["2024-08-05", "2022-03-01"]
    install = page.locator("li.result", has=page.locator(f'.result-url:text-is("{dep.url("/docs/install.html")}")'))
    install.locator("a.result-cache").click()
    page.wait_for_selector(".cache-banner")
    assert "抓取于 2026-09-21" in page.locator(".cache-banner").inner_text()
    assert "2022-03-01" in page.locator(".cache-banner").inner_text()
    frame = page.frame_locator("iframe.cache-frame")
    assert "本文介绍如何安装探索引擎" in frame.locator("body").inner_text()
    page.wait_for_timeout(500)  # a meta refresh or a script would have acted by now
    assert "脚本运行了" not in frame.locator("body").inner_text() and "脚本运行了" not in page.title()
    assert page.url.startswith(server.url + "/cache")
    assert fits_the_phone(page)


def test_the_dictionaries_page_changes_what_a_search_finds(server: RunningServer, page) -> None:  # type: ignore[no-untyped-def]
    search(page, server, "组件")
    assert page.locator("ol.results li.result").count() == 0
    log_in(page, server)
    page.locator("nav.admin-nav a", has_text="词典").click()
    box = page.locator("#synonyms-text")
    assert "电子表格, 试算表" in box.input_value()  # the shipped defaults, editable
    box.fill(box.input_value() + "组件 => 软件包\n只有一个词\n")
    page.locator("#synonyms button[value=save]").click()
    page.wait_for_url("**done=saved**")
    assert "已保存同义词" in page.locator("[role=status]").first.inner_text()
    assert "至少要两个不同的词" in page.locator("#synonyms .problems").inner_text()
    page.locator("#try").fill("组件和软件包")
    page.locator("#try").press("Enter")
    assert "软件包" in page.locator("table.tried").inner_text()
    assert fits_the_phone(page)

    search(page, server, "组件")
    assert page.locator("ol.results li.result").count() == 2

    page.goto(server.url + "/admin/dictionaries")  # still logged in
    page.locator("#user_words-text").fill("探索引擎\n")
    page.locator("#user_words button[value=save]").click()
    page.wait_for_url("**done=saved**")
    page.locator("button.action-reanalysis").click()
    page.wait_for_url("**done=reanalysis**")
    assert "正在重新切分" in page.locator("#reanalysis-status").inner_text()
    for name in ("synonyms", "user_words"):
        page.locator(f"#{name} button[value=reset]").click()
        page.wait_for_url("**done=reset**")
    assert page.locator("#synonyms-text").input_value().startswith("电子表格, 试算表")


def test_a_hosts_crawl_settings_from_the_hosts_table(server: RunningServer, page, dep: Deployment) -> None:  # type: ignore[no-untyped-def]
    log_in(page, server)
    page.locator(f'table.hosts tr[data-host="{dep.host}"] a.settings-link').click()
    page.wait_for_selector("#host-settings")
    assert "使用全局设置" in page.locator("main").inner_text()
    page.locator("#exclude").fill("/private/\n(")
    page.locator("#delay_s").fill("2.5")
    page.locator("#host-settings button[value=save]").click()
    assert "不是有效的正则表达式" in page.locator("[role=alert]").inner_text()
    assert page.locator("#exclude").input_value() == "/private/\n(" and page.locator("#delay_s").input_value() == "2.5"
    page.locator("#exclude").fill("/private/")
    page.locator("#host-settings button[value=save]").click()
    page.wait_for_url("**done=saved**")
    assert "排除的网址：1 个" in page.locator("[role=status]").inner_text()
    state = build_frontier_state(dep.cfg)
    assert state.host_settings()[dep.host].exclude == ("/private/",) and state.get_host(dep.host).delay_s == 2.5
    page.locator("#check").fill(dep.url("/private/c.html"))
    page.locator("#check").press("Enter")
    assert "不会抓取：符合排除规则" in page.locator("#verdict").inner_text()
    assert fits_the_phone(page)
    page.locator("#host-settings button[value=reset]").click()
    page.wait_for_url("**done=reset**")
    assert state.host_settings() == {} and state.get_host(dep.host).delay_s == 1.0
    state.close()
