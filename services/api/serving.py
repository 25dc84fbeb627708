"""The API's process entrypoints: how `tansuo serve`, `tansuo api` and `tansuo run`
serve the app. The command line reaches them through the ``tansuo.servers`` entry
points (pyproject.toml), so that it depends on the API's entrypoints, not its modules.

- ``serve_ui``: gunicorn's worker processes over one data directory's index; each
  worker opens the index read-only, so a crawl in another process goes on writing.
- ``serve_service``: the cluster's api service; each worker connects its index in the
  background and answers 503 until then, rather than crash-looping.
- ``serve_in_process``: a server in a thread of the calling process, over an index
  that process writes (`tansuo run`, `tansuo demo`).
"""

from __future__ import annotations

import logging
import os
import signal
import threading

from flask import Flask

from services.api.app import create_app
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.common.ports import SearchIndex
from services.common.runtime.http import gunicorn_server
from services.common.runtime.http.inprocess_server import RunningServer, serve
from services.common.runtime.metrics import SEARCH_REQUESTS
from services.common.runtime.readiness_cache import CachedReadiness
from services.common.runtime.service_runtime import ServiceRuntime, Stopped
from services.search.pending_index import PendingSearchIndex

log = logging.getLogger(__name__)

# How long an API worker waits for its index before it starts serving anyway.
API_CONNECT_BEFORE_SERVING_S = 5.0


def serve_ui(cfg: Settings) -> int:
    """Serve ``cfg.data_dir``'s index until Ctrl-C or SIGTERM; the exit status."""
    opts = gunicorn_server.ServerOptions.from_settings(cfg)
    return gunicorn_server.run(lambda: create_app(cfg), opts, "serve")


def ui_workers(cfg: Settings) -> int:
    """How many worker processes ``serve_ui`` starts."""
    return gunicorn_server.ServerOptions.from_settings(cfg).workers


def serve_service(cfg: Settings) -> int:
    """The api service until SIGTERM, then a drain of the requests in flight."""
    for outcome in ("ok", "bad_request", "error"):
        SEARCH_REQUESTS.labels(outcome=outcome)  # exported at 0, so rate() has a series from the start
    return gunicorn_server.run(lambda: service_worker_app(cfg), gunicorn_server.ServerOptions.from_settings(cfg), "api")


def service_worker_app(cfg: Settings) -> Flask:
    """The app of one api worker process, its index connected in the background."""
    rt = ServiceRuntime(cfg, "api", backends=("index",), serve_health_endpoints=False, handle_signals=False)
    rt.__enter__()
    index = PendingSearchIndex()
    app = create_app(cfg, index=index, readiness=CachedReadiness(rt.readiness))  # names the last connection error

    def connect() -> None:
        try:
            index.attach(rt.connect("index", lambda: build_search_index(cfg, read_only=True)))
        except Stopped:
            pass
        except Exception:  # a bad TANSUO_INDEX: no retry makes it right, so the server stops
            log.exception("api: cannot open the search index; stopping")
            os.kill(os.getppid(), signal.SIGTERM)

    def stop() -> None:
        rt.stop.set()
        rt.close_backends()

    connecting = threading.Thread(target=connect, name="index-connect", daemon=True)
    connecting.start()
    gunicorn_server.on_worker_exit(stop)
    # Wait a little for the index before serving: every worker of a healthy start is
    # ready from its first request (readiness is each worker's own); an index that
    # takes longer is connected in the background while the worker answers 503.
    connecting.join(API_CONNECT_BEFORE_SERVING_S)
    return app


def serve_in_process(cfg: Settings, index: SearchIndex) -> RunningServer:
    """The UI and API over ``index`` in a thread of this process, on ``cfg.api_port``."""
    return serve(create_app(cfg, index=index), cfg.api_host, cfg.api_port)
