"""Where one request ends in the bytes a connection sent (services/common/runtime/http/
request_framing.py): whole, still arriving, or refused because two parsers could read
its length differently."""

from __future__ import annotations

import pytest

from services.common.runtime.http.request_framing import (
    MAX_BODY_BYTES,
    MAX_HEAD_BYTES,
    Complete,
    Incomplete,
    Refused,
    escape_request_line,
    frame,
)

GET = b"GET /api/search?q=x HTTP/1.1\r\nHost: a\r\n\r\n"
POST = b'POST /api/seeds HTTP/1.1\r\nHost: a\r\nContent-Length: 13\r\n\r\n{"urls": []}\n'
CHUNKED = b"POST /api/seeds HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\n\r\n"


@pytest.mark.parametrize("request_bytes", [GET, POST, CHUNKED])
def test_a_request_is_whole_only_with_its_last_byte(request_bytes: bytes) -> None:
    for cut in range(len(request_bytes)):
        assert isinstance(frame(request_bytes[:cut]), Incomplete), cut
    whole = frame(request_bytes + b"GET /next HTTP/1.1\r\n")
    assert isinstance(whole, Complete) and whole.size == len(request_bytes)


def test_the_head_is_known_before_the_body_arrives() -> None:
    part = frame(POST[:-3])
    assert isinstance(part, Incomplete) and part.head is not None and part.head.content_length == 13
    assert isinstance(frame(POST, part.head), Complete)


def test_a_chunked_body_may_end_with_trailers() -> None:
    data = CHUNKED[:-2] + b"X-Sum: 1\r\n\r\n"
    assert isinstance(frame(data[:-1]), Incomplete)
    done = frame(data)
    assert isinstance(done, Complete) and done.size == len(data)


def test_expect_100_continue_is_seen() -> None:
    part = frame(b"POST /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
    assert isinstance(part, Incomplete) and part.head is not None and part.head.expect_continue


def test_expect_100_continue_in_http_1_0_is_ignored() -> None:  # RFC 9110 10.1.1: MUST ignore
    part = frame(b"POST /a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
    assert isinstance(part, Incomplete) and part.head is not None and not part.head.expect_continue


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"POST /a HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        (b"POST /a HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
        (b"POST /a HTTP/1.1\r\nContent-Length: +3\r\n\r\n", 400),
        (b"POST /a HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        (b"POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        (b"GET /a HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n", 400),
        (b"GET /a HTTP/2.0\r\n\r\n", 400),
        (b"GET  /a HTTP/1.1\r\n\r\n", 400),
        (b"\x16\x03\x01 not http at all\r\n\r\n", 400),
        (b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        (b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n", 400),
        (b"POST /a HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % (MAX_BODY_BYTES + 1), 413),
        (b"GET /a HTTP/1.1\r\nX-A: " + b"a" * MAX_HEAD_BYTES, 431),
    ],
)
def test_ambiguous_or_oversized_requests_are_refused(data: bytes, status: int) -> None:
    refused = frame(data)
    assert isinstance(refused, Refused) and refused.status == status


def test_a_large_chunked_body_is_refused_as_it_grows() -> None:
    head = b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = b"%x\r\n" % (MAX_BODY_BYTES // 2 + 1)
    data = head + chunk + b"a" * (MAX_BODY_BYTES // 2 + 1) + b"\r\n" + chunk
    refused = frame(data)
    assert isinstance(refused, Refused) and refused.status == 413


def test_raw_bytes_of_the_request_line_are_escaped_and_nothing_else() -> None:
    raw = "GET /?q=网络 HTTP/1.1\r\nX-Name: 网\r\n\r\n".encode()
    assert escape_request_line(raw) == b"GET /?q=%E7%BD%91%E7%BB%9C HTTP/1.1\r\nX-Name: " + "网".encode() + b"\r\n\r\n"
    ascii_only = b"GET /?q=%E7 HTTP/1.1\r\n\r\n"
    assert escape_request_line(ascii_only) is ascii_only
