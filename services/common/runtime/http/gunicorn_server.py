"""The production HTTP server of `tansuo serve` and `tansuo api`: gunicorn, N worker
processes of M threads each, with bounded waiting.

Why gunicorn with (changed) gthread workers (docs/serving.md, 'Why processes, and why
gunicorn'): a search holds the GIL for most of its time, so one process serves one core
and only processes use more; gthread keeps idle kept-alive connections in a poller, not
in a thread; and its worker is small enough to change so that each request carries the
moment it arrived (services/common/runtime/http/bounded_worker.py), which the
503-past-the-deadline admission needs (services/common/runtime/http/admission.py). The
app is built in each worker after the fork, so every worker opens its own read-only view
of the index (tantivy allows any number of readers; each sees a new commit on its next
search).

``run`` blocks in the calling (main) thread: gunicorn's arbiter owns the process's
signals. SIGTERM drains (requests in flight finish, up to the grace period), SIGINT
stops at once.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gunicorn import glogging
from gunicorn.app.base import BaseApplication

from services.common.config import Settings
from services.common.runtime import multiprocess_metrics
from services.common.runtime.health_server import HealthServer

log = logging.getLogger(__name__)

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

# Requests in flight get this long to finish on SIGTERM, well inside Kubernetes'
# default 30 s grace period.
DRAIN_S = 10.0
# A worker silent this long (a hung search holding every thread) is killed and replaced.
WORKER_SILENT_S = 60


def available_cores(cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """Cores this process may use: the container's CPU limit (cgroup v2 ``cpu.max``,
    rounded up) when there is one, else the CPUs it may run on."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
    except (OSError, ValueError):
        return cores
    if quota == "max":
        return cores
    return max(1, min(cores, math.ceil(int(quota) / int(period))))


@dataclass(frozen=True)
class ServerOptions:
    """How the server runs; every field comes from a TANSUO_API_* setting."""

    host: str
    port: int
    workers: int
    threads: int
    deadline_s: float
    retry_after_s: int
    retry_after_max_s: int
    keepalive_s: float
    max_connections: int
    request_timeout_s: float = 5.0
    response_timeout_s: float = 30.0
    health_host: str = "127.0.0.1"
    health_port: int = 0  # /metrics of the whole server (services/common/runtime/http/metrics_port.py); 0 = any free port
    drain_s: float = DRAIN_S

    @classmethod
    def from_settings(cls, cfg: Settings) -> ServerOptions:
        return cls(
            host=cfg.api_host,
            port=cfg.api_port,
            workers=cfg.api_workers or available_cores(),
            threads=cfg.api_threads,
            deadline_s=cfg.api_queue_deadline_s,
            retry_after_s=cfg.api_retry_after_s,
            retry_after_max_s=cfg.api_retry_after_max_s,
            keepalive_s=cfg.api_keepalive_s,
            max_connections=cfg.api_max_connections,
            request_timeout_s=cfg.api_request_timeout_s,
            response_timeout_s=cfg.api_response_timeout_s,
            health_host=cfg.health_host,
            health_port=cfg.health_port,
        )


class _RootLogger(glogging.Logger):
    """gunicorn's messages go to the root logger, so they take the CLI's format (text
    or JSON lines); no access log: the app logs what a request did."""

    def setup(self, cfg: Any) -> None:
        self.cfg = cfg
        self._access_log_enabled = False
        self.loglevel = logging.INFO
        self.error_log.propagate = True
        self.error_log.setLevel(logging.INFO)


_worker_exit: list[Callable[[], None]] = []


def on_worker_exit(callback: Callable[[], None]) -> None:
    """Run ``callback`` when this worker process stops (close its index, ...)."""
    _worker_exit.append(callback)


class _Server(BaseApplication):  # gunicorn is untyped
    def __init__(self, build_app: Callable[[], WsgiApp], opts: ServerOptions, name: str) -> None:
        self._build_app = build_app
        self._opts = opts
        self._name = name
        # Read by the worker (services/common/runtime/http/bounded_worker.py), which gunicorn hands this object.
        self.tansuo_deadline_s = opts.deadline_s
        self.tansuo_request_timeout_s = opts.request_timeout_s
        self.tansuo_response_timeout_s = opts.response_timeout_s
        self._metrics: HealthServer | None = None
        super().__init__()

    def load_config(self) -> None:
        o = self._opts
        settings: dict[str, Any] = {
            "bind": [f"[{o.host}]:{o.port}" if ":" in o.host else f"{o.host}:{o.port}"],
            "workers": o.workers,
            "threads": o.threads,
            "worker_class": "services.common.runtime.http.bounded_worker.BoundedThreadWorker",
            "keepalive": math.ceil(o.keepalive_s),  # gunicorn takes whole seconds
            "worker_connections": o.max_connections,
            "graceful_timeout": math.ceil(o.drain_s),
            "timeout": WORKER_SILENT_S,
            "backlog": 2048,
            # No line limit of gunicorn's own (0: it stops at 1 MiB): the app answers a
            # query too long with its JSON error (or the UI's page), where gunicorn's
            # 414 was an HTML page. 500 Han characters, the longest q, are 4,500 bytes
            # percent-encoded; 910 of them passed gunicorn's maximum of 8190.
            "limit_request_line": 0,
            # The worker's poller sends every response from memory (bounded_worker.py).
            "sendfile": False,
            # No control socket: gunicorn's default path ($XDG_RUNTIME_DIR/gunicorn.ctl) is
            # one per user, so every server a user ran shared it and the first to stop
            # removed it. Tansuo never uses it (SIGTERM stops, the chart scales pods).
            "control_socket_disable": True,
            # Files gunicorn writes (its worker heartbeat files) are the user's alone.
            "umask": 0o077,
            "logger_class": _RootLogger,
            "proc_name": f"tansuo-{self._name}",
            "when_ready": self._when_ready,
            "post_fork": lambda server, worker: self._close_metrics(inherited=True),
            "post_worker_init": lambda worker: _worker_started(),
            "on_exit": lambda server: self._close_metrics(inherited=False),
            "worker_exit": lambda server, worker: _run_worker_exit(),
            "child_exit": lambda server, worker: multiprocess_metrics.worker_exited(worker.pid),
        }
        for key, value in settings.items():
            self.cfg.set(key, value)

    def load(self) -> WsgiApp:
        from services.common.runtime.http.admission import Admission
        from services.common.runtime.http.retry_after import RetryAfter

        o = self._opts
        return Admission(self._build_app(), o.deadline_s, RetryAfter(o.retry_after_s, o.retry_after_max_s))

    def _close_metrics(self, inherited: bool) -> None:
        """A forked worker closes the metrics socket it inherited; the arbiter, on exit, its own."""
        if self._metrics is None:
            return
        if inherited:
            self._metrics.close_inherited_socket()
        else:
            self._metrics.close()

    def _when_ready(self, arbiter: Any) -> None:
        from services.common.runtime.http.metrics_port import serve_metrics_port

        host, port = arbiter.LISTENERS[0].sock.getsockname()[:2]
        o = self._opts
        # In the arbiter, before the first fork: one /metrics for the whole server.
        self._metrics = serve_metrics_port(o.health_host, o.health_port, required=self._name == "api")
        log.info(
            "%s: search UI and API on http://%s:%d/ (livez, readyz); %d worker process(es) x %d threads, "
            "requests waiting over %g s refused with 503",
            self._name, host, port, o.workers, o.threads, o.deadline_s,
        )  # fmt: skip


def _worker_started() -> None:
    from services.common.runtime.metrics import API_WORKERS

    API_WORKERS.set(1)


def _run_worker_exit() -> None:
    while _worker_exit:
        callback = _worker_exit.pop()
        try:
            callback()
        except Exception:  # a failing cleanup must not keep the others from running
            log.exception("worker clean-up failed")


def run(build_app: Callable[[], WsgiApp], opts: ServerOptions, name: str) -> int:
    """Serve the app ``build_app`` makes (called once in each worker) until SIGTERM or
    SIGINT; the exit status."""
    try:
        _Server(build_app, opts, name).run()
    except SystemExit as exc:  # the arbiter ends with sys.exit
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    else:
        code = 0
    log.info("%s stopped", name)
    sys.stdout.flush()
    return code
