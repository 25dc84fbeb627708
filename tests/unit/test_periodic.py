"""The periodic daemon thread the servers keep their stores' figures fresh with."""

from __future__ import annotations

import threading
import time

from services.common.runtime.periodic import Periodic


def test_at_once_runs_the_task_before_the_first_interval_and_a_second_start_adds_no_thread() -> None:
    runs: list[int] = []
    ran = threading.Event()
    periodic = Periodic("test-periodic", 3600, lambda: (runs.append(1), ran.set()))
    periodic.start(at_once=True)
    periodic.start(at_once=True)
    assert ran.wait(5)
    periodic.stop(wait_s=5)
    assert runs == [1]  # once, at once: an hour has not passed, and one thread ran it


def test_without_at_once_the_first_run_waits_an_interval() -> None:
    runs: list[int] = []
    periodic = Periodic("test-periodic", 3600, lambda: runs.append(1))
    periodic.start()
    time.sleep(0.1)
    periodic.stop(wait_s=5)
    assert runs == []


def test_the_task_repeats_every_interval_until_stopped() -> None:
    runs: list[int] = []
    three = threading.Event()

    def task() -> None:
        runs.append(1)
        if len(runs) == 3:
            three.set()

    periodic = Periodic("test-periodic", 0.01, task)
    periodic.start()
    assert three.wait(5)
    periodic.stop(wait_s=5)
    stopped = len(runs)
    time.sleep(0.1)
    assert len(runs) == stopped
