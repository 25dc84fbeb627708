"""A small threaded static HTTP server for one directory, bound to loopback.

The demo serves Debian's manuals with it, and tests serve sites with it. Its request
log is how tests measure crawl politeness, so each request is stamped when its
request line arrives, before headers are parsed or a file is read.
"""

from __future__ import annotations

import email.utils
import logging
import mimetypes
import posixpath
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RequestRecord:
    """One request as it arrived. ``time`` is ``time.monotonic()`` (for gaps between
    requests); ``wall_time`` is ``time.time()`` (for matching other logs)."""

    time: float
    wall_time: float
    method: str
    path: str  # as sent, query included
    headers: dict[str, str] = field(default_factory=dict)


Response = tuple[int, Mapping[str, str], bytes]  # status, headers, body
Route = Response | Callable[[RequestRecord], Response]

# Text types get an explicit charset: a crawler should not have to sniff our own pages.
_TEXT_TYPES = {"text/html", "text/plain", "text/css", "text/xml", "application/xml", "text/javascript"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a client holding a keep-alive connection must not block stop()
    allow_reuse_address = True
    # socketserver's default backlog of 5 makes the 6th concurrent connect wait for a
    # SYN retry (a second), which would look like a slow site to a politeness test.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], site: SiteServer) -> None:
        self.site = site
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        """Clients hanging up (a stopped crawler, a timeout) are normal, not tracebacks."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        log.exception("site server: error while serving %s", client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, as real sites offer it
    server_version = "TansuoSiteServer/1"
    sys_version = ""
    timeout = 30  # an idle keep-alive connection is dropped after this
    # Headers and body go out in two writes: with Nagle's algorithm on, the body waits
    # for the client's delayed ACK of the headers, 40 ms a response on a kept-alive
    # connection. Real servers (nginx's tcp_nodelay, on by default) send it at once.
    disable_nagle_algorithm = True

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.connections_lock:
                self.server.connections.discard(self.connection)

    def parse_request(self) -> bool:
        # Called right after the request line is read: this is the arrival time.
        self._arrived = (time.monotonic(), time.time())
        return super().parse_request()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the request log replaces per-request stderr lines."""

    def _record(self) -> RequestRecord:
        monotonic, wall = self._arrived
        record = RequestRecord(monotonic, wall, self.command, self.path, dict(self.headers.items()))
        self.server.site._log(record)
        return record

    def do_GET(self) -> None:
        self._respond(*self._answer())

    def do_HEAD(self) -> None:
        self._respond(*self._answer(), head=True)

    def _answer(self) -> Response:
        record = self._record()
        try:
            return self.server.site._route(record)
        except Exception:  # a broken test route should fail its test with a 500, not hang it
            log.exception("site server: route for %s failed", record.path)
            return HTTPStatus.INTERNAL_SERVER_ERROR, {"Content-Type": "text/plain"}, b"route failed"

    def _not_allowed(self) -> None:
        self._record()
        self._respond(HTTPStatus.METHOD_NOT_ALLOWED, {"Allow": "GET, HEAD"}, b"")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed

    def _respond(self, status: int, headers: Mapping[str, str], body: bytes, head: bool = False) -> None:
        self.send_response(status)
        names = {name.lower() for name in headers}
        for name, value in headers.items():
            self.send_header(name, value)
        if "content-length" not in names:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and status not in (HTTPStatus.NO_CONTENT, HTTPStatus.NOT_MODIFIED):
            self.wfile.write(body)


class SiteServer:
    """Serves ``root`` over HTTP: directories by their index.html, 404 otherwise.

    - ``port=0`` picks a free port; ``url`` says which.
    - ``robots_txt`` is served at /robots.txt when given (otherwise a robots.txt file
      in ``root`` is, and without one the answer is 404, which allows everything).
    - ``extra_routes`` maps a path (with or without its query) to a fixed
      (status, headers, body) or to a function of the request returning one; routes
      win over files, so tests can add pages such as a GBK page whose charset is only
      in the header, a slow page or a redirect.
    - ``html_charset`` is the charset declared for .html files; None declares none,
      leaving the page's own <meta charset> to speak.
    """

    def __init__(
        self,
        root: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        robots_txt: str | None = None,
        extra_routes: Mapping[str, Route] | None = None,
        html_charset: str | None = "utf-8",
    ) -> None:
        self.root = Path(root).resolve()
        self.robots_txt = robots_txt
        self.extra_routes: dict[str, Route] = dict(extra_routes or {})
        self.html_charset = html_charset
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._requests: list[RequestRecord] = []
        self._requests_lock = threading.Lock()

    # --- lifecycle

    def start(self) -> SiteServer:
        """Bind and serve in a background thread; returns self so tests can chain."""
        if self._server is not None:
            return self
        self._server = _Server(self._address, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="site-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close open connections, so a stopped site really is gone."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with server.connections_lock:
            for conn in list(server.connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the site server is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """Base URL with a trailing slash, e.g. http://127.0.0.1:41234/."""
        host = self._address[0]
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    # --- request log

    @property
    def requests(self) -> list[RequestRecord]:
        """A copy of the log, in arrival order."""
        with self._requests_lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        with self._requests_lock:
            self._requests.clear()

    def _log(self, record: RequestRecord) -> None:
        with self._requests_lock:
            self._requests.append(record)

    # --- responses

    def _route(self, request: RequestRecord) -> Response:
        path = urlsplit(request.path).path
        route = self.extra_routes.get(request.path, self.extra_routes.get(path))
        if route is not None:
            return route(request) if callable(route) else route
        if path == "/robots.txt" and self.robots_txt is not None:
            return 200, {"Content-Type": "text/plain; charset=utf-8"}, self.robots_txt.encode("utf-8")
        return self._file(path, request.headers)

    def _file(self, url_path: str, headers: Mapping[str, str]) -> Response:
        relative = posixpath.normpath(unquote(url_path)).lstrip("/")
        target = (self.root / relative).resolve()
        if target != self.root and self.root not in target.parents:
            return _not_found()  # ../ escapes, and symlinks out of the site
        if target.is_dir():
            if not url_path.endswith("/"):
                # Relative links inside index.html resolve against the directory only
                # with the slash, so redirect as every static server does.
                return 301, {"Location": url_path + "/", "Content-Type": "text/plain"}, b""
            target = target / "index.html"
        if not target.is_file():
            return _not_found()
        stat = target.stat()
        etag = f'"{stat.st_mtime_ns:x}-{stat.st_size:x}"'
        last_modified = email.utils.formatdate(stat.st_mtime, usegmt=True)
        base = {"ETag": etag, "Last-Modified": last_modified}
        lowered = {k.lower(): v for k, v in headers.items()}
        if _not_modified(lowered, etag, stat.st_mtime):
            return 304, base, b""
        return 200, {**base, "Content-Type": self._content_type(target)}, target.read_bytes()

    def _content_type(self, path: Path) -> str:
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if kind == "text/html":
            return f"text/html; charset={self.html_charset}" if self.html_charset else kind
        if kind in _TEXT_TYPES:
            return f"{kind}; charset=utf-8"
        return kind


def _not_found() -> Response:
    return 404, {"Content-Type": "text/html; charset=utf-8"}, b"<!DOCTYPE html><title>404</title><h1>404 Not Found</h1>"


def _not_modified(headers: Mapping[str, str], etag: str, mtime: float) -> bool:
    """Conditional GET, so re-crawl tests can see 304s."""
    if "if-none-match" in headers:
        return etag in [tag.strip() for tag in headers["if-none-match"].split(",")]
    since = headers.get("if-modified-since")
    if since:
        try:
            return int(mtime) <= email.utils.parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError):
            return False
    return False
