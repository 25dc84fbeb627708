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
from werkzeug.serving import BaseWSGIServer, make_server


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
    server = make_server(host, port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name=f"tansuo-http-{server.server_port}", daemon=True)
    thread.start()
    return RunningServer(server, thread)
