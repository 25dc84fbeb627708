"""Where one HTTP/1.x request ends in the bytes a connection has sent so far.

The worker's poller reads each request whole before a thread sees it
(services/common/runtime/http/bounded_worker.py), so it must know when a request is
complete: its head up to the empty line, then a body of Content-Length bytes or of
chunks up to the last one. The rules are stricter than HTTP allows on purpose: a
request whose length two parsers could read differently (Content-Length with
Transfer-Encoding, two different lengths, a folded header line, a transfer coding
other than chunked) is refused with 400, so the bytes handed to gunicorn's parser
are exactly one request and nothing can be smuggled behind it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A head larger than this is refused (431). gunicorn's line limit is off (the app answers a long query itself);
# a browser's whole head is 1-2 KiB.
MAX_HEAD_BYTES = 32 * 1024
# A body larger than this is refused (413). The API's largest body is a seed list
# (1,000 URLs, some 100 KB); the bound keeps a connection's buffer small.
MAX_BODY_BYTES = 1024 * 1024

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VERSION = re.compile(rb"HTTP/1\.[01]")
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,8}")


@dataclass(frozen=True)
class RequestHead:
    """What the poller needs to know of a request before a thread parses it."""

    method: str
    target: str
    version: str
    head_bytes: int  # up to and including the empty line
    content_length: int  # 0 when chunked
    chunked: bool
    expect_continue: bool
    keep_alive: bool

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def has_body(self) -> bool:
        return self.chunked or self.content_length > 0


@dataclass(frozen=True)
class Incomplete:
    """More bytes are needed; ``head`` once the head is whole."""

    head: RequestHead | None


@dataclass(frozen=True)
class Complete:
    """The first ``size`` bytes are one whole request."""

    head: RequestHead
    size: int


@dataclass(frozen=True)
class Refused:
    """The request cannot be served: answer ``status`` and close the connection."""

    status: int
    reason: str


Framing = Incomplete | Complete | Refused


def frame(data: bytes | bytearray, head: RequestHead | None = None) -> Framing:
    """How far the first request in ``data`` has arrived. ``head`` is the head
    parsed from these same bytes before, so a trickling body does not re-parse it."""
    if head is None:
        end = data.find(b"\r\n\r\n", 0, MAX_HEAD_BYTES)
        if end < 0:
            if len(data) >= MAX_HEAD_BYTES:
                return Refused(431, "Request Header Fields Too Large")
            return Incomplete(None)
        parsed = parse_head(bytes(data[: end + 4]))
        if isinstance(parsed, Refused):
            return parsed
        head = parsed
    if head.chunked:
        size = _chunked_end(data, head.head_bytes)
        if isinstance(size, Refused):
            return size
        return Incomplete(head) if size is None else Complete(head, size)
    size = head.head_bytes + head.content_length
    return Complete(head, size) if len(data) >= size else Incomplete(head)


def escape_request_line(data: bytes) -> bytes:
    """``data`` with every byte above ASCII of its request line percent-escaped.

    curl sends a Chinese query as raw UTF-8 bytes; gunicorn refuses a request line
    that is not ASCII with an HTML 400, while the same bytes escaped are the UTF-8
    query the client meant (a byte above ASCII has no other meaning in a URL)."""
    end = data.find(b"\r\n")
    line = data[:end]
    if line.isascii():
        return data
    return escape_non_ascii(line) + data[end:]


def escape_non_ascii(raw: bytes) -> bytes:
    """``raw`` with every byte above ASCII written as a percent-escape."""
    return b"".join(bytes([b]) if b < 0x80 else b"%%%02X" % b for b in raw)


def parse_head(raw: bytes) -> RequestHead | Refused:
    """The request line and the headers that decide framing, from a head ending in
    an empty line; Refused for anything ambiguous."""
    lines = raw[:-4].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not parts[1] or not _VERSION.fullmatch(parts[2]):
        return Refused(400, "Bad Request")
    lengths: set[bytes] = set()
    codings: list[bytes] = []
    expect = connection = b""
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):  # also a folded line, which starts with a space
            return Refused(400, "Bad Request")
        key, value = name.lower(), value.strip(b" \t")
        if key == b"content-length":
            lengths.update(v.strip() for v in value.split(b","))
        elif key == b"transfer-encoding":
            codings += [v.strip().lower() for v in value.split(b",") if v.strip()]
        elif key == b"expect":
            expect = value.lower()
        elif key == b"connection":
            connection += b"," + value.lower()
    version = parts[2].decode()
    if codings and (lengths or version == "HTTP/1.0"):
        return Refused(400, "Bad Request")
    if codings and codings != [b"chunked"]:
        return Refused(501, "Not Implemented")
    if len(lengths) > 1 or any(not v.isdigit() for v in lengths):
        return Refused(400, "Bad Request")
    content_length = int(lengths.pop()) if lengths else 0
    if content_length > MAX_BODY_BYTES:
        return Refused(413, "Content Too Large")
    tokens = {t.strip() for t in connection.split(b",")}
    keep_alive = b"keep-alive" in tokens if version == "HTTP/1.0" else b"close" not in tokens
    return RequestHead(
        method=parts[0].decode(), target=parts[1].decode("latin-1"), version=version, head_bytes=len(raw),
        content_length=content_length, chunked=bool(codings), expect_continue=expect == b"100-continue" and version != "HTTP/1.0",
        keep_alive=keep_alive,
    )  # fmt: skip


def _chunked_end(data: bytes | bytearray, pos: int) -> int | Refused | None:
    """The end of a chunked body starting at ``pos``, None while incomplete."""
    body = 0
    while True:
        line_end = data.find(b"\r\n", pos, pos + 4096)
        if line_end < 0:
            return Refused(400, "Bad Request") if len(data) - pos >= 4096 else None
        size_text = bytes(data[pos:line_end]).split(b";", 1)[0].strip(b" \t")
        if not _CHUNK_SIZE.fullmatch(size_text):
            return Refused(400, "Bad Request")
        size = int(size_text, 16)
        pos = line_end + 2
        if size == 0:
            return _trailers_end(data, pos)
        body += size
        if body > MAX_BODY_BYTES:
            return Refused(413, "Content Too Large")
        if len(data) < pos + size + 2:
            return None
        if data[pos + size : pos + size + 2] != b"\r\n":
            return Refused(400, "Bad Request")
        pos += size + 2


def _trailers_end(data: bytes | bytearray, pos: int) -> int | Refused | None:
    """After the last chunk: an empty line, or trailer fields then an empty line."""
    if data[pos : pos + 2] == b"\r\n":
        return pos + 2
    if len(data) < pos + 2:
        return None
    end = data.find(b"\r\n\r\n", pos, pos + MAX_HEAD_BYTES)
    if end < 0:
        return Refused(431, "Request Header Fields Too Large") if len(data) - pos >= MAX_HEAD_BYTES else None
    return end + 4
