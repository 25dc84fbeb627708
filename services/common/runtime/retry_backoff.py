"""Retrying a backend call with capped exponential backoff instead of crashing.

A service whose Kafka, Redis, S3 or Elasticsearch is down must stay up: a crash
loop restarts the pod again and again, floods the log with tracebacks and hides the
one line that says what is wrong. So a failing call is logged once per attempt (which
backend, what error, when the next try comes), waited out (1 s, 2 s, 4 s, ... 30 s),
and tried again until it works or the service is told to stop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass
class Backoff:
    """Delays that double from ``initial_s`` up to ``max_s``; ``reset`` after a success.

    No jitter: the services of one deployment reach different backends at different
    moments anyway, and a predictable schedule is easier to read in a log.
    """

    initial_s: float = 1.0
    max_s: float = 30.0
    factor: float = 2.0
    failures: int = 0

    def next_delay(self) -> float:
        """The wait after one more failure."""
        delay = min(self.initial_s * self.factor**self.failures, self.max_s)
        # Capped so that a long outage does not overflow the float after ~1000 failures.
        self.failures = min(self.failures + 1, 64)
        return delay

    def reset(self) -> None:
        self.failures = 0


def describe(exc: BaseException) -> str:
    """``Type: message`` on one line, for logs and readiness bodies."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def retry(
    call: Callable[[], T],
    *,
    what: str,
    stop: threading.Event,
    backoff: Backoff | None = None,
    fatal: tuple[type[BaseException], ...] = (),
    on_failure: Callable[[BaseException], None] | None = None,
    wait: Callable[[float], bool] | None = None,
) -> T | None:
    """``call()`` until it returns; None if ``stop`` is set first.

    Each failure is logged as one WARNING line naming ``what`` (e.g. "index backend")
    and the error, then waited out with ``backoff``. Exceptions in ``fatal`` (a bad
    setting, say) are not retried: no wait makes them right. ``on_failure`` sees each
    error (metrics, readiness). ``wait`` defaults to ``stop.wait`` and returns True
    when stopped; tests pass their own so that nothing sleeps.
    """
    backoff = backoff if backoff is not None else Backoff()
    wait = wait if wait is not None else stop.wait
    while not stop.is_set():
        try:
            result = call()
        except fatal:
            raise
        except Exception as exc:  # any failure of a backend is worth another try
            if on_failure is not None:
                on_failure(exc)
            delay = backoff.next_delay()
            log.warning(
                "%s unavailable (%s); retrying in %.0f s",
                what,
                describe(exc),
                delay,
                extra={"backend": what, "error": describe(exc), "retry_in_s": delay},
            )
            if wait(delay):
                return None
            continue
        backoff.reset()
        return result
    return None
