"""The web UI in a real browser: type a query, read highlighted results, page on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.api.app import create_app
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.common.runtime.http.inprocess_server import RunningServer, serve
from services.indexer.document_builder import build_document
from tests.e2e.chromium import headless_chromium
from tests.page_events import page_event

pytestmark = pytest.mark.browser

SUBJECTS = ["无线网络", "软件包", "防火墙", "文件系统", "内核模块", "打印服务"]
# Pages for the words of initials xz (选择, 下载): none says 配置 or a subject.
XZ_PAGES = [
    ("如何选择镜像", "选择离你最近的镜像，下载会更快。"),
    ("下载安装包", "在这里下载安装包。"),
    ("选择界面语言", "在设置中选择界面语言。"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    cfg = Settings(data_dir=tmp_path_factory.mktemp("ui"))
    index = TantivySearchIndex(cfg.data_dir / "index", cfg)
    events = [
        page_event(
            f"https://wiki.example.cn/{n:02d}",
            f"{SUBJECTS[n % len(SUBJECTS)]}配置手册 第{n}篇",
            f"这是第{n}篇文章，讲解如何配置{SUBJECTS[n % len(SUBJECTS)]}。"
            + "系统管理员常用的配置方法与排错技巧。" * (1 + n % 4),
        )
        for n in range(30)
    ] + [page_event(f"https://wiki.example.cn/xz/{n}", title, body) for n, (title, body) in enumerate(XZ_PAGES)]
    index.upsert([build_document(e) for e in events])
    index.commit()
    running = serve(create_app(cfg, index=index), "127.0.0.1", 0)
    yield running
    running.shutdown()
    index.close()


@pytest.fixture(scope="module")
def browser(server: RunningServer) -> Iterator[object]:
    with headless_chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def page(browser) -> Iterator[object]:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    yield context.new_page()
    context.close()


def test_a_query_typed_into_the_box_shows_highlighted_results_and_pages(server: RunningServer, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    box = page.locator("input[name=q]")
    box.fill("配置")
    box.press("Enter")
    page.wait_for_selector("ol.results li.result")

    assert "q=" in page.url
    assert "找到约" in page.locator(".result-stats").inner_text()
    assert page.locator("li.result").count() == 10
    assert page.locator("li.result .result-snippet em").first.inner_text() == "配置"
    assert page.locator("li.result .result-title em").count() >= 10
    first_page = page.locator("li.result .result-url").all_inner_texts()

    page.locator("nav.pager a", has_text="2").first.click()
    page.wait_for_url("**page=2**")
    page.wait_for_selector("ol.results li.result")
    second_page = page.locator("li.result .result-url").all_inner_texts()
    assert len(second_page) == 10
    assert not set(first_page) & set(second_page)
    assert page.locator(".pager-current").inner_text() == "2"
    assert page.locator("input[name=q]").input_value() == "配置"


def test_the_site_filter_and_an_empty_result_in_the_browser(server: RunningServer, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    page.locator("select[name=site]").select_option("wiki.example.cn")
    page.locator("input[name=q]").fill("不存在的词语xyzzy")
    page.locator("button[type=submit]").click()
    page.wait_for_selector(".no-results")
    assert "没有找到" in page.locator(".no-results").inner_text()
    assert "site=wiki.example.cn" in page.url
    # The page fits a phone screen: nothing wider than the viewport (measured once the
    # stylesheets have loaded, as a browser paints it).
    page.wait_for_load_state("load")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390


def test_the_search_box_suggests_titles_as_the_user_types(server: RunningServer, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    page.locator("input[name=q]").press_sequentially("防火", delay=50)
    page.wait_for_function("() => document.querySelectorAll('#q-suggestions option').length > 0")
    options = page.eval_on_selector_all("#q-suggestions option", "els => els.map(e => e.value)")
    assert options and all(o.startswith("防火墙配置手册") for o in options)


def test_the_syntax_help_opens_on_the_home_page(server: RunningServer, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    page.locator(".syntax-help summary").click()
    assert "site:" in page.locator(".syntax-help").inner_text()


def test_the_pages_run_their_own_scripts_and_styles_under_the_content_security_policy(
    server: RunningServer, browser
) -> None:  # type: ignore[no-untyped-def]
    """The policy allows only this site's files and no inline code: every page must
    still load its style sheets and run its scripts, with no violation reported."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    try:
        page = context.new_page()
        violations: list[str] = []
        page.on(
            "console",
            lambda message: violations.append(message.text) if "Content Security Policy" in message.text else None,
        )
        page.add_init_script("document.addEventListener('securitypolicyviolation', e => console.error("
                             "'Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))")  # fmt: skip
        for path in ("/", "/?q=配置", "/admin", "/api/docs"):
            response = page.goto(server.url + path)
            page.wait_for_load_state("networkidle")
            assert "script-src 'self'" in response.headers["content-security-policy"], path
            rules = page.evaluate("[...document.styleSheets].reduce((n, s) => n + s.cssRules.length, 0)")
            assert rules > 10, path  # the style sheets loaded and apply
        page.goto(server.url + "/api/docs")
        page.wait_for_selector("#api-reference section.operation")  # api_docs.js fetched the spec and laid it out
        page.goto(server.url + "/")
        page.locator("input[name=q]").press_sequentially("防火", delay=50)
        page.wait_for_function("() => document.querySelectorAll('#q-suggestions option').length > 0")  # suggest.js ran
        assert violations == []
    finally:
        context.close()


def test_a_mistyped_query_shows_the_corrected_results_and_offers_the_query_as_typed(server: RunningServer, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/")
    page.locator("input[name=q]").fill("无限网络")  # 线 typed as 限, same pinyin: no page holds 无限
    page.locator("input[name=q]").press("Enter")
    page.wait_for_selector("ol.results li.result")
    notice = page.locator(".did-you-mean")
    assert notice.inner_text() == "已显示“无线网络”的结果；仍然搜索：无限网络"
    assert page.locator("li.result .result-title em").first.inner_text() == "无线网络"
    assert page.locator("input[name=q]").input_value() == "无限网络"

    notice.locator("a.as-typed").click()
    page.wait_for_url("**as_typed=1**")
    assert page.locator(".did-you-mean").count() == 0


def test_a_mistyped_query_that_finds_its_pages_anyway_is_offered_its_correction(server: RunningServer, page) -> None:  # type: ignore[no-untyped-def]
    # 墙 typed as 强: the pages are found through 防火 anyway. (Typed in one run, 防火强配置
    # would be a run no page holds whose correction pages hold verbatim: shown, not offered.)
    page.goto(server.url + "/?q=" + "防火强 配置")
    page.wait_for_selector("ol.results li.result")
    assert page.locator(".did-you-mean").inner_text() == "您是不是要找：防火墙 配置"
    page.locator(".did-you-mean a").click()
    page.wait_for_selector("ol.results li.result")
    assert page.locator("input[name=q]").input_value() == "防火墙 配置"
    assert page.locator(".did-you-mean").count() == 0


def test_a_query_of_initials_names_each_word_it_was_read_as_and_each_links_to_that_word_alone(server: RunningServer, page) -> None:  # type: ignore[no-untyped-def]
    page.goto(server.url + "/?q=xz")
    page.wait_for_selector("ol.results li.result")
    notice = page.locator(".did-you-mean")
    assert notice.inner_text() == "已显示“xz”可能指的词：选择、下载；仍然搜索：xz"
    shown = page.locator("li.result .result-url").all_inner_texts()
    assert len(shown) == 3
    # 下载's page on the first page (its place comes second) is on 下载's own first page.
    notice.locator("a.reading", has_text="下载").click()
    page.wait_for_url("**q=%E4%B8%8B%E8%BD%BD**")
    page.wait_for_selector("ol.results li.result")
    assert page.locator("input[name=q]").input_value() == "下载"
    assert page.locator(".did-you-mean").count() == 0
    assert shown[1] in page.locator("li.result .result-url").all_inner_texts()
