from __future__ import annotations

from services.common.model import FetchJob, url_fingerprint
from services.common.ports import Message
from services.crawler.fetch_outcome import is_html, outcome_from_error, outcome_from_response

JOB = FetchJob(url="https://example.cn/a/page", host="example.cn", lease_id="L1", depth=3)
MSG = Message(topic="fetches.scheduled", key="example.cn", payload=JOB.to_bytes(), offset=7)


def respond(status: int, headers: dict[str, str], body: bytes = b"", job: FetchJob = JOB):
    return outcome_from_response(job, MSG, status, headers, body, max_body_chars=10_000)


def test_redirect_location_is_made_absolute_and_nothing_is_parsed() -> None:
    outcome = respond(302, {"Location": "../b?x=1"})
    assert outcome.event.redirect_to == "https://example.cn/b?x=1"
    assert outcome.links is None and outcome.page is None and outcome.event.store_key == ""


def test_retry_after_is_copied_only_for_429_and_503() -> None:
    assert respond(429, {"Retry-After": "30"}).event.retry_after == "30"
    assert respond(503, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}).event.retry_after
    assert respond(500, {"Retry-After": "30"}).event.retry_after == ""


def test_job_fields_are_copied_into_the_event() -> None:
    event = outcome_from_error(JOB, MSG, "dns").event
    assert (event.url, event.host, event.lease_id, event.depth, event.kind) == (
        JOB.url, "example.cn", "L1", 3, "page")
    assert (event.status, event.error) == (0, "dns")


def test_html_page_gets_content_links_and_a_stored_copy() -> None:
    body = "<title>标题</title><p>正文</p><a href='/x'>链接</a>".encode()
    outcome = respond(200, {"Content-Type": "text/html; charset=utf-8", "ETag": '"e"'}, body)
    assert (outcome.event.title, outcome.event.body, outcome.event.etag) == ("标题", "正文\n链接", '"e"')
    assert outcome.links is not None and outcome.links.depth == 3
    assert [link.url for link in outcome.links.links] == ["https://example.cn/x"]
    assert outcome.page is not None and outcome.page.body == body
    assert outcome.event.store_key == url_fingerprint(JOB.url)
    assert outcome.page.content_hash == outcome.event.content_hash != ""


def test_non_html_is_reported_with_its_status_and_stored() -> None:
    outcome = respond(200, {"Content-Type": "image/png"}, b"\x89PNG")
    event = outcome.event
    assert (event.status, event.error, event.content_type) == (200, "not_html", "image/png")
    assert outcome.links is None and outcome.page is not None


def test_missing_content_type_counts_as_html_only_if_it_looks_like_html() -> None:
    assert is_html("", b"\xef\xbb\xbf  <!DOCTYPE html><p>x")
    assert not is_html("", b"%PDF-1.4")
    assert is_html("application/xhtml+xml", b"")
    assert respond(200, {}, b"<html><title>t</title></html>").event.title == "t"


def test_robots_job_gets_the_text_and_no_links() -> None:
    robots = FetchJob(url="https://example.cn/robots.txt", host="example.cn", lease_id="L", kind="robots")
    body = "\ufeffUser-agent: *\nDisallow: /私有/".encode()
    outcome = respond(200, {"Content-Type": "text/plain"}, body, robots)
    assert outcome.event.robots_txt == "User-agent: *\nDisallow: /私有/"
    assert outcome.links is None and outcome.event.kind == "robots"
    assert respond(404, {}, b"nope", robots).event.robots_txt == ""
