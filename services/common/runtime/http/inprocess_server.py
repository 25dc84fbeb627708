"""A stoppable in-process HTTP server for `tansuo run`, `tansuo demo` and tests.

`tansuo serve` and `tansuo api` run the production server instead
(services/common/runtime/http/gunicorn_server.py): worker processes, bounded waiting. `tansuo run`
keeps this one because its crawl writes the index in the same process, which a
forked worker could not share; it is meant for one person trying Tansuo out.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from flask import Flask
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from services.common.runtime.http.request_framing import escape_non_ascii


class _RawBytesHandler(WSGIRequestHandler):
    """Percent-escapes the request line's bytes above ASCII before it is parsed.

    curl sends a Chinese query as raw UTF-8; the standard library splits the request
    line on whitespace after reading it as Latin-1, where byte 0x85 (in 内, 装 and
    many more) is a line break, and answered 400 "Bad request syntax".
    """

    def parse_request(self) -> bool:
        line: bytes = self.raw_requestline  # type: ignore[has-type]  # set by the base class before this call
        if not line.isascii():
            self.raw_requestline = escape_non_ascii(line)
        return super().parse_request()


@dataclass
class RunningServer:
    """An HTTP server answering in a background thread until ``shutdown()``."""

    server: BaseWSGIServer
    thread: threading.Thread

    @property
    def host(self) -> str:
        return str(self.server.host)

    @property
    def port(self) -> int:
        """The bound port: the real one when 0 was asked for."""
        return int(self.server.server_port)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def shutdown(self) -> None:
        """Stop accepting requests, wait for the serving loop to end, close the socket."""
        self.server.shutdown()
        self.thread.join(10)
        self.server.server_close()


def serve(app: Flask, host: str, port: int) -> RunningServer:
    """Serve ``app`` with werkzeug's threaded server in a daemon thread.

    werkzeug rather than ``app.run`` because the server must be stoppable from
    another thread (``tansuo crawl --serve``, tests). Port 0 picks a free port.
    """
    server = make_server(host, port, app, threaded=True, request_handler=_RawBytesHandler)
    thread = threading.Thread(target=server.serve_forever, name=f"tansuo-http-{server.server_port}", daemon=True)
    thread.start()
    return RunningServer(server, thread)
