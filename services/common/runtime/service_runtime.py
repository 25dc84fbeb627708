"""What every `tansuo <service>` process shares: stop on SIGTERM, health endpoints,
backends connected with retries, and a main loop that survives their outages.

The shape is STYLE.md's: build the adapters, start the health server, loop until
SIGTERM, then drain. Two things are added for a cluster. The health server starts
before any backend is reached, so an outage at start-up shows as /readyz 503 and a
log line per attempt rather than a crash loop. And a step that fails tears the
service down to its adapters and builds it again after a backoff: the messages of
the failed batch were delivered but not committed, and only a new consumer gets them
again, exactly as after a restart, but without one.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit, urlunsplit

from services.common.config import Settings
from services.common.errors import BackendUnavailable, ConfigError
from services.common.runtime.health_server import (
    HealthServer,
    Heartbeat,
    Readiness,
    serve_health,
)
from services.common.runtime.metrics import BACKEND_UP, ERRORS
from services.common.runtime.retry_backoff import Backoff, describe, retry

log = logging.getLogger(__name__)

T = TypeVar("T")

REFRESH_INTERVAL_S = 5.0  # gauges read from backends (frontier counts, consumer lag)
# Which setting names each backend's location, for log lines.
_BACKEND_SETTING = {"bus": "bus", "store": "store", "index": "index", "state": "state", "graph": "state"}


class Pingable(Protocol):
    def ping(self) -> None: ...


A = TypeVar("A", bound=Pingable)  # an adapter


class Stopped(Exception):
    """Told to stop before every backend was connected."""


def backend_location(cfg: Settings, backend: str) -> str:
    """The backend's URL without credentials, or "embedded"."""
    url = str(getattr(cfg, _BACKEND_SETTING.get(backend, backend), "") or "")
    if not url:
        return "embedded"
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


@dataclass
class LoopBody:
    """One incarnation of a service over one set of connected adapters."""

    step: Callable[[], object]  # one bounded unit of work; returns soon when idle
    drain: Callable[[], None] = lambda: None  # on a clean stop: commit what is held
    refresh: Callable[[], None] | None = None  # gauges read from backends, every few seconds


def _not_connected(name: str, why: str) -> Callable[[], None]:
    def check() -> None:
        raise BackendUnavailable(f"{name} not connected: {why}")

    return check


class ServiceRuntime:
    """Signals, health server, backends and main loop of one service process.

    Use as a context manager: entering installs the signal handlers and starts the
    health server, leaving closes every adapter and the server.
    """

    def __init__(
        self,
        cfg: Settings,
        service: str,
        backends: Sequence[str],
        serve_health_endpoints: bool = True,
        handle_signals: bool = True,
    ) -> None:
        self.cfg = cfg
        self.service = service
        self.stop = threading.Event()
        self.heartbeat = Heartbeat(stale_after_s=cfg.health_liveness_timeout_s)
        self.readiness = Readiness({b: _not_connected(b, "starting") for b in backends})
        self.health: HealthServer | None = None
        self._refresh: Callable[[], None] | None = None
        self._refresh_now = threading.Event()
        self._serve_health = serve_health_endpoints
        self._handle_signals = handle_signals  # False in a server's worker, whose signals the server owns
        self._opened: list[tuple[str, Any]] = []
        self._refresher: threading.Thread | None = None
        self._refresh_failing = False
        for b in backends:
            BACKEND_UP.labels(backend=b).set(0)
        for kind in ("backend_unavailable", "step_failed"):
            ERRORS.labels(service=service, kind=kind)  # exported at 0 from the start, for rate()

    @property
    def refresh(self) -> Callable[[], None] | None:
        """Gauges read from backends every few seconds (and at once when set)."""
        return self._refresh

    @refresh.setter
    def refresh(self, refresh: Callable[[], None] | None) -> None:
        self._refresh = refresh
        if refresh is not None:
            self._refresh_now.set()

    # --- lifetime

    def __enter__(self) -> ServiceRuntime:
        if self._handle_signals and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._on_signal)
            signal.signal(signal.SIGINT, self._on_signal)
        if self._serve_health:
            host = self.cfg.health_host
            self.health = serve_health(self.cfg.health_port, host, self.readiness, self.heartbeat)
            log.info("%s: health and metrics on http://%s:%d/ (livez, readyz, metrics)", self.service, host, self.health.port)
        self._refresher = threading.Thread(target=self._refresh_loop, name="metrics-refresh", daemon=True)
        self._refresher.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop.set()
        self._refresh_now.set()
        self.close_backends()
        if self._refresher is not None:
            self._refresher.join(REFRESH_INTERVAL_S + 1)
        if self.health is not None:
            self.health.close()
        log.info("%s stopped", self.service)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.stop.is_set():
            # A second signal: the drain is taking too long for whoever sent it.
            raise KeyboardInterrupt
        log.info("%s: %s received; finishing the current step, then draining", self.service, signal.Signals(signum).name)
        self.stop.set()

    # --- backends

    def connect(self, name: str, build: Callable[[], A]) -> A:
        """Build one adapter and ping it, retrying with backoff until it answers.

        Raises Stopped when told to stop first, and ConfigError at once for a bad
        setting (no retry makes it right). /readyz names the backend meanwhile.
        """
        where = backend_location(self.cfg, name)

        def attempt() -> A:
            adapter = build()
            try:
                adapter.ping()
            except BaseException:
                _close_quietly(adapter)
                raise
            return adapter

        def failed(exc: BaseException) -> None:
            self.readiness.set(name, _not_connected(name, describe(exc)))
            BACKEND_UP.labels(backend=name).set(0)
            ERRORS.labels(service=self.service, kind="backend_unavailable").inc()

        # A blackholed host can hold one attempt for minutes (client timeouts times
        # retries): that is waiting, not hanging, so it must not fail liveness.
        with self.heartbeat.busy():
            adapter = retry(
                attempt, what=f"{name} backend ({where})", stop=self.stop, fatal=(ConfigError,), on_failure=failed
            )
        if adapter is None:
            raise Stopped
        self.readiness.set(name, adapter.ping)
        self._opened.append((name, adapter))
        log.info("%s: %s backend connected (%s)", self.service, name, where)
        return adapter

    def close_backends(self) -> None:
        """Close every connected adapter, newest first; readiness reports them down."""
        self.refresh = None
        while self._opened:
            name, adapter = self._opened.pop()
            _close_quietly(adapter)
            self.readiness.set(name, _not_connected(name, "closed"))

    # --- the main loop

    def supervise(self, open_body: Callable[[], LoopBody]) -> int:
        """Run the service until stopped; returns the exit status.

        ``open_body`` connects the adapters (through ``connect``) and builds the
        service on them. After a failed step everything is closed and opened again,
        with a backoff that only a successful step resets, so a step that always
        fails (a bug, a poison message) waits 30 s between tries, not 1 s.
        """
        backoff = Backoff()
        while not self.stop.is_set():
            try:
                body = open_body()
            except Stopped:
                break
            except ConfigError:
                raise
            except Exception as exc:  # e.g. a backend that answered its ping, then failed
                self._step_failed(exc, backoff.next_delay())
                self.close_backends()
                continue
            self.refresh = body.refresh
            if self._loop(body, backoff):
                return self._drain(body)
            self.close_backends()
        return 0

    def _loop(self, body: LoopBody, backoff: Backoff) -> bool:
        """True when stopped cleanly, False after a failed step."""
        while not self.stop.is_set():
            try:
                body.step()
            except Exception as exc:
                self._step_failed(exc, backoff.next_delay())
                return False
            backoff.reset()
            self.heartbeat.beat()
        return True

    def _step_failed(self, exc: Exception, delay: float) -> None:
        down = self.readiness.failures()
        if down:
            # An outage, not a bug: one line naming the backend, no traceback.
            for name, error in down.items():
                log.warning(
                    "%s step failed: %s backend (%s) unavailable (%s); reconnecting in %.0f s",
                    self.service, name, backend_location(self.cfg, name), error, delay,
                    extra={"backend": name, "error": error, "retry_in_s": delay},
                )  # fmt: skip
            ERRORS.labels(service=self.service, kind="backend_unavailable").inc()
        elif isinstance(exc, ConnectionError):
            # The backend failed the step and answered the ping after it (it came
            # back in between): still an outage, still one line.
            log.warning(
                "%s step failed: a backend was unreachable (%s); reconnecting in %.0f s",
                self.service, exc, delay, extra={"error": str(exc), "retry_in_s": delay},
            )  # fmt: skip
            ERRORS.labels(service=self.service, kind="backend_unavailable").inc()
        else:
            log.error("%s step failed; restarting it in %.0f s", self.service, delay, exc_info=exc)
            ERRORS.labels(service=self.service, kind="step_failed").inc()
        self.stop.wait(delay)  # at most 30 s: well inside the liveness limit

    def _drain(self, body: LoopBody) -> int:
        try:
            body.drain()
        except Exception:
            # Not committed, so it comes back to the next instance: nothing is lost.
            log.exception("%s: drain failed; uncommitted work will be delivered again", self.service)
            ERRORS.labels(service=self.service, kind="drain_failed").inc()
            return 1
        return 0

    def _refresh_loop(self) -> None:
        """Gauges read from backends, off the main loop so a slow read never delays a step.

        The pings run here too, so ``tansuo_backend_up`` stays current where nothing
        probes /readyz (a plain `docker run`, a scrape-only setup).
        """
        while True:
            self._refresh_now.wait(REFRESH_INTERVAL_S)
            self._refresh_now.clear()
            if self.stop.is_set():
                return
            self.readiness.failures()
            refresh = self._refresh
            if refresh is None:
                continue
            try:
                refresh()
            except Exception as exc:  # the main loop reports outages; say it once here
                if not self._refresh_failing:
                    log.warning("%s: metrics refresh failed (%s)", self.service, describe(exc))
                self._refresh_failing = True
            else:
                self._refresh_failing = False


def _close_quietly(adapter: object) -> None:
    close = getattr(adapter, "close", None)
    if close is None:
        return
    try:
        close()
    except Exception as exc:  # closing a broken connection may fail; nothing to do about it
        log.debug("closing %s failed: %s", type(adapter).__name__, describe(exc))
