"""The service runtime's main loop: a failed step reconnects instead of crashing, a
clean stop drains, and readiness follows the backends throughout."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from services.common.config import Settings
from services.common.errors import ConfigError
from services.common.runtime.service_runtime import LoopBody, ServiceRuntime


class FakeBackend:
    def __init__(self, name: str, failing_pings: int = 0) -> None:
        self.name = name
        self.failing_pings = failing_pings
        self.closed = False

    def ping(self) -> None:
        if self.failing_pings > 0:
            self.failing_pings -= 1
            raise ConnectionError(f"{self.name} refused")

    def close(self) -> None:
        self.closed = True


def run_in_thread(rt: ServiceRuntime, open_body: Callable[[], LoopBody]) -> tuple[threading.Thread, list[int]]:
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(rt.supervise(open_body)), daemon=True)
    thread.start()
    return thread, result


def wait_for(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def runtime(*backends: str) -> ServiceRuntime:
    return ServiceRuntime(Settings(), "test", backends=backends, serve_health_endpoints=False)


def test_a_backend_down_at_start_is_retried_and_reported_not_ready_meanwhile() -> None:
    rt = runtime("bus")
    bus = FakeBackend("bus", failing_pings=1)
    steps: list[int] = []

    def open_body() -> LoopBody:
        rt.connect("bus", lambda: bus)
        return LoopBody(step=lambda: (steps.append(1), time.sleep(0.01)), drain=lambda: steps.append(-1))

    with rt:
        thread, result = run_in_thread(rt, open_body)
        assert "bus" in rt.readiness.failures()
        wait_for(lambda: len(steps) > 3)
        assert rt.readiness.failures() == {}
        rt.stop.set()
        thread.join(10)
    assert result == [0] and steps[-1] == -1  # drained once, after the last step
    assert bus.closed


def test_a_failed_step_closes_the_adapters_and_builds_the_service_again() -> None:
    rt = runtime("bus")
    opened: list[FakeBackend] = []
    drained: list[int] = []

    def open_body() -> LoopBody:
        bus = rt.connect("bus", lambda: FakeBackend("bus"))
        opened.append(bus)
        calls = {"n": 0}

        def step() -> None:
            calls["n"] += 1
            time.sleep(0.01)
            if len(opened) == 1 and calls["n"] == 2:
                raise RuntimeError("poison message")  # a bug, not an outage

        return LoopBody(step=step, drain=lambda: drained.append(len(opened)))

    with rt:
        thread, result = run_in_thread(rt, open_body)
        wait_for(lambda: len(opened) == 2)
        assert opened[0].closed and not opened[1].closed
        rt.stop.set()
        thread.join(10)
    assert result == [0] and drained == [2]  # no drain for the failed incarnation


def test_a_bad_setting_is_not_retried() -> None:
    rt = runtime("bus")

    def open_body() -> LoopBody:
        rt.connect("bus", lambda: (_ for _ in ()).throw(ConfigError("TANSUO_BUS: unknown scheme 'kafak'")))
        raise AssertionError("unreachable")

    with rt, pytest.raises(ConfigError, match="kafak"):
        rt.supervise(open_body)


def test_a_failing_drain_makes_the_exit_status_1() -> None:
    rt = runtime()

    def fail() -> None:
        raise ConnectionError("index went away during the final commit")

    def open_body() -> LoopBody:
        rt.stop.set()  # SIGTERM right after start-up
        return LoopBody(step=lambda: None, drain=fail)

    with rt:
        assert rt.supervise(open_body) == 1


def test_an_outage_seen_by_a_step_is_one_warning_line_even_if_the_backend_is_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The bus went down during a commit and was up again by the time readiness was
    # checked: that is an outage to log in one line, not a bug with a traceback.
    rt = runtime("bus")
    opened: list[FakeBackend] = []

    def open_body() -> LoopBody:
        opened.append(rt.connect("bus", lambda: FakeBackend("bus")))

        def step() -> None:
            if len(opened) == 1:
                raise ConnectionError("could not commit offsets: KafkaTimeoutError")
            time.sleep(0.01)

        return LoopBody(step=step, drain=lambda: None)

    with rt, caplog.at_level("WARNING"):
        thread, _ = run_in_thread(rt, open_body)
        wait_for(lambda: len(opened) == 2)
        rt.stop.set()
        thread.join(10)
    failures = [r for r in caplog.records if "step failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].levelname == "WARNING" and failures[0].exc_info is None
    assert "could not commit offsets" in failures[0].getMessage()
