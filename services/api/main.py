"""Standalone API process, and a stoppable HTTP server for the CLI and tests."""

from __future__ import annotations

import logging
import signal
import threading
from dataclasses import dataclass

from flask import Flask
from werkzeug.serving import BaseWSGIServer, make_server

from services.api.app import create_app
from services.common.settings import Settings

log = logging.getLogger(__name__)


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


def run(cfg: Settings, stop: threading.Event | None = None) -> None:
    """Serve the search UI and API on ``cfg.api_host:cfg.api_port`` until SIGTERM/SIGINT."""
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    app = create_app(cfg)
    running = serve(app, cfg.api_host, cfg.api_port)
    log.info("search UI at %s/ (API %s/api/search?q=…)", running.url, running.url)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        running.shutdown()
        app.extensions["tansuo.index"].close()
