"""The operator console at /admin through Flask's test client: the token login and its
cookie, CSRF on every change, and what the page shows; the browser test drives the
same pages in Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from services.api.app import create_app
from services.common.adapters.sqlite.bus import SqliteBus
from services.common.bootstrap import build_frontier_state, build_search_index
from services.common.config import Settings
from services.common.domain.messages import TOPIC_SEEDS, SeedRequest
from tests.integration.test_api_host_actions import A, B, crawl_two_alike_hosts

TOKEN = "console-token-0123456789"


@pytest.fixture
def cfg(tmp_path: Path) -> Settings:
    settings = Settings(data_dir=tmp_path, api_token=TOKEN, frontier_sitemaps=False, frontier_host_delay_s=0.0)
    state = build_frontier_state(settings)
    crawl_two_alike_hosts(settings, state)
    state.close()
    return settings


@pytest.fixture
def client(cfg: Settings):  # a Flask test client
    return create_app(cfg, index=build_search_index(cfg)).test_client()


def log_in(client) -> str:
    """Logs in; returns the page's CSRF token."""
    assert client.post("/admin/login", data={"token": TOKEN}).status_code == 303
    page = client.get("/admin").get_data(as_text=True)
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def test_the_console_asks_for_the_token_and_refuses_a_wrong_one(client) -> None:
    page = client.get("/admin")
    assert page.status_code == 200 and 'name="token"' in page.get_data(as_text=True)
    wrong = client.post("/admin/login", data={"token": "wrong"})
    assert wrong.status_code == 401 and "令牌不对" in wrong.get_data(as_text=True)
    assert "set-cookie" not in {k.lower() for k in wrong.headers.keys()}
    assert A not in client.get("/admin").get_data(as_text=True)


def test_the_login_cookie_is_signed_httponly_strict_and_only_for_the_console(client) -> None:
    cookie = client.post("/admin/login", data={"token": TOKEN}).headers["Set-Cookie"]
    assert cookie.startswith("tansuo_admin=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/admin" in cookie and "Expires=" in cookie
    assert TOKEN not in cookie


def test_logged_in_it_shows_status_hosts_and_the_report(client) -> None:
    log_in(client)
    page = client.get("/admin").get_data(as_text=True)
    for text in ("抓取状态", "主机", "抓取报告", "提交种子", "<svg", "<polyline", f'data-host="{A}"', f'data-host="{B}"'):
        assert text in page, text
    assert re.search(r'id="stat-fetched">\s*8<', page)  # 4 pages on each host, 404s included


def test_a_host_action_without_the_sessions_csrf_token_is_refused(client, cfg: Settings) -> None:
    assert client.post(f"/admin/hosts/{A}", data={"action": "pause"}).status_code == 403  # not logged in
    log_in(client)
    assert client.post(f"/admin/hosts/{A}", data={"action": "pause", "csrf": "forged"}).status_code == 403
    assert build_frontier_state(cfg).get_host(A).paused is False


def test_pause_and_resume_from_the_console_change_the_frontier(client, cfg: Settings) -> None:
    csrf = log_in(client)
    done = client.post(f"/admin/hosts/{A}", data={"action": "pause", "csrf": csrf})
    assert done.status_code == 303 and done.headers["Location"].startswith("/admin?done=pause")
    state = build_frontier_state(cfg)
    assert state.get_host(A).paused and not state.get_host(B).paused
    page = client.get(done.headers["Location"]).get_data(as_text=True)
    assert f"已暂停 {A}" in page and 'data-state="paused"' in page
    assert client.post(f"/admin/hosts/{A}", data={"action": "resume", "csrf": csrf}).status_code == 303
    assert state.get_host(A).paused is False
    assert client.post(f"/admin/hosts/{A}", data={"action": "explode", "csrf": csrf}).status_code == 400
    assert client.post("/admin/hosts/nowhere.cn", data={"action": "pause", "csrf": csrf}).status_code == 404


def test_seeds_from_the_console_go_to_the_crawl(client, cfg: Settings) -> None:
    csrf = log_in(client)
    form = {"csrf": csrf, "urls": "https://www.example.edu.cn/\nhttps://lib.example.edu.cn/", "allow_domains": "*.example.edu.cn"}
    done = client.post("/admin/seeds", data=form)
    assert done.status_code == 303, done.get_data(as_text=True)
    bus = SqliteBus(cfg.data_dir / "bus.sqlite3")
    (sent,) = [SeedRequest.from_bytes(m.payload) for m in bus.poll(TOPIC_SEEDS, "test", 0.0)]
    assert sent.urls == ["https://www.example.edu.cn/", "https://lib.example.edu.cn/"]
    assert sent.allow_domains == ["*.example.edu.cn"] and sent.source == "console"
    bad = client.post("/admin/seeds", data={"csrf": csrf, "urls": "ftp://x"})
    assert bad.status_code == 400 and "ftp://x" in bad.get_data(as_text=True)


def test_logging_out_ends_the_session(client) -> None:
    csrf = log_in(client)
    assert client.post("/admin/logout").status_code == 303
    assert 'name="token"' in client.get("/admin").get_data(as_text=True)
    assert client.post(f"/admin/hosts/{A}", data={"action": "pause", "csrf": csrf}).status_code == 403


def test_a_cookie_kept_from_before_the_logout_opens_nothing_on_any_worker(cfg: Settings) -> None:
    """Two apps over one data directory stand for two worker processes (or pods on one
    Redis): the logout on one ends the session that the other would have accepted."""
    index = build_search_index(cfg)
    first, second = create_app(cfg, index=index).test_client(), create_app(cfg, index=index).test_client()
    csrf = log_in(first)
    kept = first.get_cookie("tansuo_admin", path="/admin").value
    second.set_cookie("tansuo_admin", kept, path="/admin")
    assert A in second.get("/admin").get_data(as_text=True)  # the same login, on another worker

    assert first.post("/admin/logout").status_code == 303
    first.set_cookie("tansuo_admin", kept, path="/admin")  # the copy an attacker kept
    for replay in (first, second):
        assert 'name="token"' in replay.get("/admin").get_data(as_text=True)
        assert replay.post(f"/admin/hosts/{A}", data={"action": "pause", "csrf": csrf}).status_code == 403
    assert build_frontier_state(cfg).get_host(A).paused is False
    log_in(second)  # a new login works again
    assert A in second.get("/admin").get_data(as_text=True)


def test_a_session_ends_after_the_idle_time_and_after_its_lifetime(client, cfg: Settings) -> None:
    log_in(client)
    with client.session_transaction("/admin") as session:
        session["seen"] -= cfg.api_admin_idle_s + 1
    assert 'name="token"' in client.get("/admin").get_data(as_text=True)
    log_in(client)
    with client.session_transaction("/admin") as session:
        session["since"] -= cfg.api_admin_session_s + 1
        session["seen"] = session["since"] + cfg.api_admin_session_s  # active all along
    assert 'name="token"' in client.get("/admin").get_data(as_text=True)


def test_a_purge_asks_for_confirmation_on_a_page_of_its_own(client, cfg: Settings) -> None:
    csrf = log_in(client)
    asked = client.post(f"/admin/hosts/{A}", data={"action": "purge", "csrf": csrf})
    page = asked.get_data(as_text=True)
    assert asked.status_code == 200 and f"确认删除 {A}" in page and f'name="confirm" value="{A}"' in page
    state = build_frontier_state(cfg)
    assert state.get_host(A).paused is False  # nothing done yet
    wrong = client.post(f"/admin/hosts/{A}", data={"action": "purge", "csrf": csrf, "confirm": B})
    assert wrong.status_code == 200 and state.get_host(A).paused is False
    done = client.post(f"/admin/hosts/{A}", data={"action": "purge", "csrf": csrf, "confirm": A})
    assert done.status_code == 303 and done.headers["Location"].startswith("/admin?done=purge")
    assert state.get_host(A).paused is True


def test_a_session_from_another_token_is_worth_nothing(cfg: Settings) -> None:
    index = build_search_index(cfg)
    old = create_app(cfg, index=index).test_client()
    log_in(old)
    cookie = old.get_cookie("tansuo_admin", path="/admin")
    rotated = create_app(cfg.model_copy(update={"api_token": "a-new-token-987654321"}), index=index)
    client = rotated.test_client()
    client.set_cookie("tansuo_admin", cookie.value, path="/admin")
    assert 'name="token"' in client.get("/admin").get_data(as_text=True)


def test_without_a_token_the_console_is_off(tmp_path: Path) -> None:
    cfg = Settings(data_dir=tmp_path)
    client = create_app(cfg, index=build_search_index(cfg)).test_client()
    page = client.get("/admin")
    assert page.status_code == 403 and "TANSUO_API_TOKEN" in page.get_data(as_text=True)
    assert client.post("/admin/login", data={"token": ""}).status_code == 403


def _notice(page: str) -> str:
    return re.sub(r"<[^>]+>", "", page.split('role="alert"', 1)[-1].split("</div>", 1)[0])


def test_seeds_on_the_operators_network_are_refused_in_chinese_unless_allowed(client, cfg: Settings) -> None:
    # An intranet is the main use: the console refused a seed on the network the
    # operator had just crawled, in English inside the Chinese page ("种子未提交：seed …").
    csrf = log_in(client)
    refused = client.post("/admin/seeds", data={"csrf": csrf, "urls": "http://127.0.0.1:8000/"})
    notice = _notice(refused.get_data(as_text=True))
    assert refused.status_code == 403 and "--allow-private-networks" in notice and "内网" in notice
    assert not re.search(r"\b(seed|is on|private network|allow)\b", notice.replace("--allow-private-networks", "")), notice
    bad = client.post("/admin/seeds", data={"csrf": csrf, "urls": "ftp://x"})
    assert "不是 http" in _notice(bad.get_data(as_text=True))
    opened = create_app(cfg.model_copy(update={"crawler_allow_private_networks": True}),
                        index=build_search_index(cfg, read_only=True)).test_client()  # fmt: skip
    csrf = log_in(opened)
    assert opened.post("/admin/seeds", data={"csrf": csrf, "urls": "http://127.0.0.1:8000/"}).status_code == 303
