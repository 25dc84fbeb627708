"""The cached copy's own rules: what is taken out of a page, and which pages say
noarchive (the sandbox itself is tested in Chromium, test_operator_console_browser)."""

from __future__ import annotations

from services.api.cached_copy import CSP, parse, refuses_archiving, safe_copy

URL = "http://a.example.cn/docs/p.html"


def copy_of(html: str, headers: dict[str, str] | None = None) -> str:
    headers = headers or {"Content-Type": "text/html; charset=utf-8"}
    root = parse(html.encode("utf-8"), headers)
    assert root is not None
    return safe_copy(root, URL)


def test_scripts_frames_handlers_and_refreshes_are_taken_out_and_the_page_keeps_its_text() -> None:
    out = copy_of(
        '<html><head><meta http-equiv="refresh" content="0;url=http://x/"><base href="http://evil/">'
        '<script>alert(1)</script></head><body onload="alert(2)"><p onclick="alert(3)">正文</p>'
        '<svg><script>alert(4)</script></svg><iframe src="http://x/"></iframe><object data="x"></object>'
        '<img src="/logo.png" onerror="alert(5)"></body></html>'
    )
    assert "alert" not in out and "refresh" not in out and "iframe" not in out and "object" not in out
    assert "evil" not in out and "正文" in out and '<img src="/logo.png">' in out
    assert out.count("<base ") == 1 and f'<base href="{URL}" target="_blank">' in out
    assert '<meta charset="utf-8">' in out


def test_a_page_without_a_head_gets_one_for_its_base() -> None:
    assert f'<head><meta charset="utf-8"><base href="{URL}"' in copy_of("<p>只有正文</p>")


def test_noarchive_from_the_page_or_its_header_for_every_crawler_or_for_us() -> None:
    page = parse(b'<meta name="robots" content="noindex, NOARCHIVE"><p>x</p>', {})
    assert refuses_archiving({}, page)
    plain = parse(b"<p>x</p>", {})
    assert not refuses_archiving({}, plain)
    assert refuses_archiving({"X-Robots-Tag": "noarchive"}, plain)
    assert refuses_archiving({"x-robots-tag": "tansuobot: noarchive"}, plain)
    assert not refuses_archiving({"X-Robots-Tag": "googlebot: noarchive"}, plain)
    assert refuses_archiving({}, parse(b'<meta name="TansuoBot" content="noarchive">', {}))


def test_the_copys_policy_runs_no_script_and_submits_no_form() -> None:
    directives = dict(part.strip().split(" ", 1) for part in CSP.split(";"))
    assert "allow-scripts" not in directives["sandbox"] and "allow-forms" not in directives["sandbox"]
    assert directives["default-src"] == "'none'" and directives["form-action"] == "'none'"
