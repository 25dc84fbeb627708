"""The operator console in headless Chromium on a phone-sized screen: log in with the
token, read the hosts table, pause a host and see it paused (in the page and in the
frontier), and check from screenshots that Chinese text is drawn as glyphs, not boxes.

The glyph check needs a CJK font (Debian's fonts-noto-cjk, installed by
scripts/install.sh test). Without one, Chromium draws every Chinese character as the
same empty box, so two different Chinese strings look alike, and alike to characters
no font has (the Private Use Area); with one, they differ.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.api.app import create_app
from services.common.bootstrap import build_frontier_state, build_search_index
from services.common.config import Settings
from services.common.runtime.http.inprocess_server import RunningServer, serve
from tests.e2e.chromium import headless_chromium
from tests.integration.test_api_host_actions import A, B, crawl_two_alike_hosts

pytestmark = pytest.mark.browser

TOKEN = "browser-console-token-0123456789"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def cfg(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = Settings(data_dir=tmp_path_factory.mktemp("console"), api_token=TOKEN, frontier_sitemaps=False,
                        frontier_host_delay_s=0.0)  # fmt: skip
    state = build_frontier_state(settings)
    crawl_two_alike_hosts(settings, state)
    state.close()
    return settings


@pytest.fixture(scope="module")
def server(cfg: Settings) -> Iterator[RunningServer]:
    index = build_search_index(cfg)
    running = serve(create_app(cfg, index=index), "127.0.0.1", 0)
    yield running
    running.shutdown()
    index.close()


@pytest.fixture(scope="module")
def browser(server: RunningServer) -> Iterator[object]:
    with headless_chromium() as launched:
        yield launched


@pytest.fixture
def page(browser) -> Iterator[object]:
    """A fresh context per test: no session cookie left from the one before."""
    context = browser.new_context(viewport=PHONE, locale="zh-CN")
    yield context.new_page()
    context.close()


def log_in(page, server: RunningServer) -> None:
    page.goto(server.url + "/admin")
    page.locator("input[name=token]").fill(TOKEN)
    page.locator("button[type=submit]", has_text="登录").click()
    page.wait_for_selector("table.hosts")
    # The table is in the DOM before the stylesheets have loaded; a browser paints
    # nothing until they have, but a layout measured before then is the unstyled
    # page's (a loaded CI machine measured it 5 and 27 px wider than the screen).
    page.wait_for_load_state("load")


def test_log_in_see_the_hosts_and_pause_one(server: RunningServer, page, cfg: Settings) -> None:
    page.goto(server.url + "/admin")
    page.locator("input[name=token]").fill("wrong")
    page.locator("button[type=submit]").click()
    assert "令牌不对" in page.locator("[role=alert]").inner_text()
    log_in(page, server)
    rows = page.locator("table.hosts tbody tr")
    assert sorted(rows.evaluate_all("rows => rows.map(r => r.dataset.host)")) == [A, B]
    row = page.locator(f'table.hosts tr[data-host="{A}"]')
    assert row.get_attribute("data-state") == "idle"

    row.locator("button", has_text="暂停").click()
    page.wait_for_url("**/admin?done=pause**")
    row = page.locator(f'table.hosts tr[data-host="{A}"]')
    assert row.get_attribute("data-state") == "paused"
    assert "已暂停" in row.locator("td.state").inner_text()
    assert row.locator("button", has_text="恢复").count() == 1 and row.locator("button", has_text="暂停").count() == 0
    assert f"已暂停 {A}" in page.locator("[role=status]").inner_text()
    state = build_frontier_state(cfg)
    assert state.get_host(A).paused and not state.get_host(B).paused

    row.locator("button", has_text="恢复").click()
    page.wait_for_url("**/admin?done=resume**")
    assert page.locator(f'table.hosts tr[data-host="{A}"]').get_attribute("data-state") == "idle"
    assert state.get_host(A).paused is False
    state.close()


def test_the_console_fits_a_phone_and_draws_chinese_glyphs(server: RunningServer, page, tmp_path: Path) -> None:
    log_in(page, server)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], _too_wide(page, PHONE["width"])
    page.screenshot(path=str(tmp_path / "console.png"), full_page=True)
    # Three lines in one style: two different Chinese strings, and as many characters
    # that no font draws (Private Use Area), which show what a missing glyph looks like.
    page.evaluate(
        """() => {
          for (const [id, text] of [["zh-a", "抓取状态主机"], ["zh-b", "暂停恢复删除"], ["tofu", "\\ue000\\ue001\\ue002\\ue003\\ue004\\ue005"]]) {
            const el = document.createElement("div");
            el.id = id; el.textContent = text; el.lang = "zh-CN";
            el.style.cssText = "font-size:32px;line-height:40px;width:220px;background:#fff;color:#000;padding:4px";
            document.querySelector("main").prepend(el);
          }
        }"""
    )
    shots = {name: page.locator(f"#{name}").screenshot() for name in ("zh-a", "zh-b", "tofu")}
    assert shots["zh-a"] != shots["zh-b"], "two different Chinese strings render alike: no CJK font (fonts-noto-cjk)?"
    assert shots["zh-a"] != shots["tofu"] and shots["zh-b"] != shots["tofu"], "Chinese renders as missing-glyph boxes"
    fonts = page.evaluate("document.fonts.check('32px \"Noto Sans CJK SC\"', '抓取')")
    assert fonts


def test_a_page_on_another_port_cannot_frame_the_logged_in_console(server: RunningServer, page, cfg: Settings,
                                                                    tmp_path: Path) -> None:  # fmt: skip
    """The issue's clickjacking: a page on another local port is the same site, so
    SameSite=Strict sends the console's cookie to a frame of it. The console forbids
    being framed (frame-ancestors 'none', X-Frame-Options: DENY): Chromium shows no
    console in the frame, and a click where its button would be pauses nothing."""
    from services.cli.static_site_server import SiteServer

    (tmp_path / "index.html").write_text(
        "<!doctype html><title>prize</title><button id=bait style='position:absolute;top:0;left:0'>领奖</button>"
        f"<iframe id=console src='{server.url}/admin' style='opacity:0.01;position:absolute;top:0;left:0;"
        "width:380px;height:800px;border:0'></iframe>",
        encoding="utf-8",
    )
    attacker = SiteServer(tmp_path).start()
    try:
        log_in(page, server)
        page.goto(attacker.url + "/index.html")
        page.wait_for_load_state("networkidle")
        framed = next(frame for frame in page.frames if frame != page.main_frame)
        shown = framed.evaluate("document.querySelectorAll('table.hosts, form').length")
        assert shown == 0, "the console rendered inside another site's frame"
        box = page.locator("#console").bounding_box()
        page.mouse.click(box["x"] + 300, box["y"] + 300)  # wherever a button of the console would be
        state = build_frontier_state(cfg)
        assert not state.get_host(A).paused and not state.get_host(B).paused
        state.close()
    finally:
        attacker.stop()


SMALL_PHONE = {"width": 375, "height": 812}


def _too_wide(page, width: int = SMALL_PHONE["width"]) -> list[str]:  # type: ignore[no-untyped-def]
    """The elements whose right edge is past the screen, innermost last: what to fix."""
    return page.evaluate(
        "(w) => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w)"
        ".map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)} "
        "${(e.textContent || '').trim().slice(0, 60)}`)",
        width,
    )


def test_every_action_button_is_on_screen_at_phone_width(server: RunningServer, browser) -> None:
    # Issue 38: at phone width the host table scrolled sideways and its action buttons
    # were past the right edge of the screen.
    context = browser.new_context(viewport=SMALL_PHONE, locale="zh-CN")
    page = context.new_page()
    try:
        log_in(page, server)
        assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"], _too_wide(page, SMALL_PHONE["width"])
        buttons = page.locator("table.hosts .actions button")
        assert buttons.count() >= 6  # three actions on each of two hosts
        for i in range(buttons.count()):
            button = buttons.nth(i)
            # Scrolled to vertically only, as a reader scrolls down the page: nothing
            # sideways (a table wider than the screen had to be scrolled to reach them).
            page.evaluate("(el) => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 100)",
                          button.element_handle())  # fmt: skip
            box = button.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= SMALL_PHONE["width"], (i, box)
            # Drawn there and not clipped by a scrolling box: the button is what a tap hits.
            hit = page.evaluate(
                "([x, y]) => { const e = document.elementFromPoint(x, y); return e && e.closest('button') ? "
                "e.closest('button').textContent : null; }",
                [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
            )
            assert hit == button.text_content(), (i, hit)
    finally:
        context.close()


def test_the_rate_chart_has_labelled_axes(server: RunningServer, page) -> None:
    log_in(page, server)
    y_labels = page.locator(".chart text.y-tick").all_text_contents()
    x_labels = page.locator(".chart text.x-tick").all_text_contents()
    assert y_labels[0] == "0" and len(y_labels) == 3 and float(y_labels[-1]) > 0
    assert x_labels == ["60 分钟前", "30 分钟前", "现在"]
    assert page.locator(".chart text.axis-title").text_content() == "页/秒"
    for box in (page.locator(".chart text.x-tick").nth(i).bounding_box() for i in range(3)):
        assert box is not None and box["height"] >= 6  # legible, not squashed by the scaling
