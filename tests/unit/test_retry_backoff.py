"""Retrying with capped exponential backoff: waits, logs, stops and gives up as told."""

from __future__ import annotations

import logging
import threading

import pytest

from services.common.runtime.retry_backoff import Backoff, describe, retry


class Waits:
    """Records the waits instead of sleeping; ``stop_after`` waits then reports a stop."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.delays: list[float] = []
        self.stop_after = stop_after

    def __call__(self, delay: float) -> bool:
        self.delays.append(delay)
        return self.stop_after is not None and len(self.delays) >= self.stop_after


def failing(times: int, exc: Exception | None = None):
    calls = {"n": 0}

    def call() -> str:
        calls["n"] += 1
        if calls["n"] <= times:
            raise exc if exc is not None else ConnectionError(f"refused #{calls['n']}")
        return "connected"

    return call


def test_delays_double_from_one_second_up_to_thirty() -> None:
    backoff = Backoff()
    assert [backoff.next_delay() for _ in range(8)] == [1, 2, 4, 8, 16, 30, 30, 30]


def test_reset_starts_the_delays_over() -> None:
    backoff = Backoff()
    backoff.next_delay(), backoff.next_delay()
    backoff.reset()
    assert backoff.next_delay() == 1


def test_a_very_long_outage_keeps_the_cap_without_overflowing() -> None:
    backoff = Backoff()
    assert {backoff.next_delay() for _ in range(5000)} >= {30.0}
    assert backoff.next_delay() == 30


def test_retry_returns_the_result_once_the_call_succeeds() -> None:
    waits = Waits()
    assert retry(failing(3), what="bus backend", stop=threading.Event(), wait=waits) == "connected"
    assert waits.delays == [1, 2, 4]


def test_each_failure_is_one_warning_naming_the_backend_and_the_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="services.common.runtime.retry_backoff")
    retry(failing(2), what="index backend (elasticsearch://es:9200/tansuo)", stop=threading.Event(), wait=Waits())
    assert len(caplog.records) == 2
    first = caplog.records[0]
    assert "index backend (elasticsearch://es:9200/tansuo) unavailable" in first.getMessage()
    assert "ConnectionError: refused #1" in first.getMessage() and "retrying in 1 s" in first.getMessage()
    assert first.exc_info is None  # an outage is one line, not a traceback
    assert first.backend == "index backend (elasticsearch://es:9200/tansuo)"  # type: ignore[attr-defined]


def test_retry_gives_none_when_stopped_while_waiting() -> None:
    waits = Waits(stop_after=2)
    assert retry(failing(10), what="bus", stop=threading.Event(), wait=waits) is None
    assert waits.delays == [1, 2]


def test_retry_does_not_even_try_once_stopped() -> None:
    stop = threading.Event()
    stop.set()
    call = failing(0)
    assert retry(call, what="bus", stop=stop, wait=Waits()) is None


def test_a_fatal_error_is_raised_at_once_without_waiting() -> None:
    waits = Waits()
    with pytest.raises(ValueError, match="unknown scheme"):
        retry(failing(1, ValueError("unknown scheme 'kafak'")), what="bus", stop=threading.Event(),
              fatal=(ValueError,), wait=waits)  # fmt: skip
    assert waits.delays == []


def test_on_failure_sees_every_error() -> None:
    seen: list[str] = []
    retry(failing(2), what="store", stop=threading.Event(), wait=Waits(), on_failure=lambda e: seen.append(str(e)))
    assert seen == ["refused #1", "refused #2"]


def test_describe_puts_type_and_message_on_one_line() -> None:
    assert describe(ConnectionError("no route\n  to host")) == "ConnectionError: no route to host"
    assert describe(TimeoutError()) == "TimeoutError"
