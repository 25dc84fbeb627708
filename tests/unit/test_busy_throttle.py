"""A long extraction is held back while the process that runs the pool is busy, and only then."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from services.extractor.busy_throttle import LONG_CPU_S, BusyThrottle
from services.extractor.extraction_pool import cpu_seconds


def _spinner() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _watch(worker: subprocess.Popen[bytes], share: float, cpu_s: float) -> BusyThrottle:
    """The throttle's slices, as the pool's wait runs them, until the spinning worker
    has used ``cpu_s`` of CPU (by CPU, not wall time: a loaded machine runs it slower)."""
    throttle = BusyThrottle(worker.pid, share, cpu_seconds)
    start = cpu_seconds(worker.pid) or 0.0
    deadline = time.monotonic() + 60
    while (cpu_seconds(worker.pid) or 0.0) - start < cpu_s and time.monotonic() < deadline:
        time.sleep(0.25)
        throttle.after_slice()
    return throttle


def _busy_until(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(range(10_000))


def test_a_long_document_is_held_while_this_process_is_busy() -> None:
    worker, stop = _spinner(), threading.Event()
    busy = threading.Thread(target=_busy_until, args=(stop,), daemon=True)
    busy.start()
    try:
        throttle = _watch(worker, 0.5, LONG_CPU_S + 1.5)
        assert worker.poll() is None  # held and let go, never left stopped
        status = open(f"/proc/{worker.pid}/stat").read().rsplit(")", 1)[1].split()[0]
        assert status in ("R", "S")
    finally:
        stop.set()
        worker.kill()
        worker.wait()
    assert throttle.held_s > 0.3


def test_nothing_is_held_while_this_process_is_quiet_or_the_share_is_whole() -> None:
    worker = _spinner()
    try:
        quiet = _watch(worker, 0.5, LONG_CPU_S + 1.5)
    finally:
        worker.kill()
        worker.wait()
    assert quiet.held_s == 0.0
    worker, stop = _spinner(), threading.Event()
    threading.Thread(target=_busy_until, args=(stop,), daemon=True).start()
    try:
        whole = _watch(worker, 1.0, LONG_CPU_S + 1.5)
    finally:
        stop.set()
        worker.kill()
        worker.wait()
    assert whole.held_s == 0.0
