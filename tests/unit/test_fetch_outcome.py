from __future__ import annotations

import pytest

from services.common.domain.messages import FetchJob, url_fingerprint
from services.common.ports import Message
from services.crawler.fetch_outcome import (
    is_html,
    outcome_from_error,
    outcome_from_response,
)
from services.crawler.message_caps import DEFAULT_CAPS, OutcomeCaps

JOB = FetchJob(url="https://example.cn/a/page", host="example.cn", lease_id="L1", depth=3)
MSG = Message(topic="fetches.scheduled", key="example.cn", payload=JOB.to_bytes(), offset=7)


def respond(status: int, headers: dict[str, str], body: bytes = b"", job: FetchJob = JOB,
            caps: OutcomeCaps = DEFAULT_CAPS):
    return outcome_from_response(job, MSG, status, headers, body, max_body_chars=10_000, caps=caps)


def test_redirect_location_is_made_absolute_and_nothing_is_parsed() -> None:
    outcome = respond(302, {"Location": "../b?x=1"})
    assert outcome.event.redirect_to == "https://example.cn/b?x=1"
    assert outcome.page is None and outcome.event.store_key == ""
    # One link, for the link graph: links to this URL count for its target.
    assert outcome.links is not None and outcome.links.kind == "redirect"
    assert [link.url for link in outcome.links.links] == ["https://example.cn/b?x=1"]


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


@pytest.mark.parametrize(
    "body",
    [b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj", b"PK\x03\x04\x14\x00\x00\x00", b"\xff\xd8\xff\xe0\x00\x10JFIF",
     b"\x1f\x8b\x08\x00\x00\x00\x00\x00", b"\x89PNG\r\n\x1a\n\x00\x00"],
)
def test_binary_bodies_labelled_html_are_sniffed_and_not_parsed(body: bytes) -> None:
    outcome = respond(200, {"Content-Type": "text/html; charset=utf-8"}, body + bytes(range(256)) * 4)
    assert (outcome.event.error, outcome.event.title, outcome.event.body) == ("not_html", "", "")
    assert outcome.links is None and outcome.page is not None


def test_a_huge_title_and_headings_are_capped_and_reported() -> None:
    body = ("<title>" + "标" * 1_000_000 + "</title>" + "<h2>" + "小" * 1000 + "</h2>" * 1 + "<h3>x</h3>" * 300).encode()
    event = respond(200, {"Content-Type": "text/html; charset=utf-8"}, body).event
    assert event.title == "标" * 512
    assert len(event.headings) == 100 and event.headings[0] == "小" * 256
    assert set(event.limits) == {"title_length", "headings", "heading_length"}
    assert len(event.to_bytes()) < 100_000


def test_a_canonical_longer_than_the_url_limit_is_ignored_and_reported() -> None:
    # A same-host rel=canonical names the document; one no frontier would take (and
    # that an index cannot always keep as a key) leaves the page under its own URL.
    def canonical(path: str) -> str:
        return f"<link rel=canonical href='{path}'><title>t</title><p>正文</p>"

    long = respond(200, {"Content-Type": "text/html; charset=utf-8"}, canonical("/c" + "a" * 3000).encode())
    assert (long.event.canonical, long.event.limits) == ("", ["canonical_length"])
    assert long.links is not None and long.links.canonical == ""
    short = respond(200, {"Content-Type": "text/html; charset=utf-8"}, canonical("/c" + "a" * 100).encode())
    assert short.event.canonical == "https://example.cn/c" + "a" * 100 and short.event.limits == []


def test_a_page_with_100000_links_publishes_a_capped_batch_under_the_bus_limit() -> None:
    links = "".join(f"<a href='/p/{i}'>{'链' * (300 if i < 10 else 1)}</a>" for i in range(100_000))
    outcome = respond(200, {"Content-Type": "text/html; charset=utf-8"}, f"<title>t</title>{links}".encode())
    assert outcome.links is not None and len(outcome.links.links) == 5000
    assert [len(link.anchor) for link in outcome.links.links[9:11]] == [256, 1]
    assert outcome.event.limits == ["anchor_length", "outlinks"]
    assert len(outcome.links.to_bytes()) < 4 * 1024 * 1024


def test_links_are_cut_to_fit_one_message_even_within_the_count() -> None:
    long = "/" + "x" * 1500
    links = "".join(f"<a href='{long}{i}'>a</a>" for i in range(4000))
    outcome = respond(200, {"Content-Type": "text/html"}, f"<title>t</title>{links}".encode(),
                      caps=OutcomeCaps(message_bytes=1024 * 1024))
    assert outcome.links is not None and 0 < len(outcome.links.links) < 4000
    assert len(outcome.links.to_bytes()) < 1024 * 1024 and outcome.event.limits == ["message_size"]


def test_a_60000_entry_sitemap_is_sent_in_chunks_under_the_bus_limit() -> None:
    entries = "".join(f"<url><loc>https://example.cn/page/{i}.html</loc><lastmod>2024-01-01</lastmod></url>"
                      for i in range(60_000))
    xml = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
    sitemap = FetchJob(url="https://example.cn/sitemap.xml", host="example.cn", lease_id="S", kind="sitemap")
    outcome = respond(200, {"Content-Type": "application/xml"}, xml.encode(), sitemap)
    batches = [outcome.links, *outcome.more_links]
    assert len(batches) > 1 and all(len(b.to_bytes()) < 4 * 1024 * 1024 for b in batches)
    assert [link.url for b in batches for link in b.links] == [f"https://example.cn/page/{i}.html" for i in range(60_000)]


def test_robots_txt_past_512_kib_is_cut_at_a_line_end() -> None:
    robots = FetchJob(url="https://example.cn/robots.txt", host="example.cn", lease_id="L", kind="robots")
    body = b"User-agent: *\nDisallow: /a\n" + b"# junk line\n" * 100_000
    event = respond(200, {"Content-Type": "text/plain"}, body, robots).event
    assert event.robots_txt.startswith("User-agent: *\nDisallow: /a\n") and event.robots_txt.endswith("\n")
    assert len(event.robots_txt.encode()) <= 512 * 1024 and event.limits == ["robots_size"]


def test_a_body_larger_than_one_message_is_cut_to_fit() -> None:
    body = ("<title>t</title><p>" + "字" * 600_000 + "</p>").encode()
    outcome = outcome_from_response(JOB, MSG, 200, {"Content-Type": "text/html; charset=utf-8"}, body,
                                    max_body_chars=1_000_000, caps=OutcomeCaps(message_bytes=1024 * 1024))
    assert len(outcome.event.to_bytes()) <= 1024 * 1024 and "message_size" in outcome.event.limits
    assert outcome.event.body.startswith("字" * 1000) and outcome.event.title == "t"


def test_a_page_indexed_under_its_canonical_says_so_to_the_link_graph() -> None:
    page = b'<html><head><link rel="canonical" href="/a/main"><title>t</title></head><body><p>x</p></body></html>'
    outcome = respond(200, {"Content-Type": "text/html; charset=utf-8"}, page)
    assert outcome.links is not None and outcome.links.canonical == "https://example.cn/a/main"
    elsewhere = page.replace(b'href="/a/main"', b'href="https://other.cn/a"')
    assert respond(200, {"Content-Type": "text/html; charset=utf-8"}, elsewhere).links.canonical == ""  # not its site
