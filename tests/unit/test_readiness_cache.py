"""/readyz of the API answers from the last finished check: a slow check (a search
holding the index, a busy process) does not turn a ready server unready."""

from __future__ import annotations

import threading

from services.common.runtime.health_server import Readiness
from services.common.runtime.readiness_cache import CachedReadiness


def test_a_check_that_hangs_leaves_the_last_answer_in_place() -> None:
    release = threading.Event()
    calls = 0

    def ping() -> None:
        nonlocal calls
        calls += 1
        if calls > 1:
            release.wait(60)  # every check after the first hangs (inline, the probe would too)

    cache = CachedReadiness(Readiness({"index": ping}, timeout_s=60), interval_s=0.01)
    try:
        assert cache.response() == (200, {"status": "ready"})
        while calls < 2:  # the background refresh is now stuck in the second check
            threading.Event().wait(0.01)
        assert cache.response() == (200, {"status": "ready"})
    finally:
        release.set()


def test_a_failed_check_is_reported_with_what_failed() -> None:
    def ping() -> None:
        raise ConnectionError("index gone")

    status, body = CachedReadiness(Readiness({"index": ping})).response()
    assert status == 503 and "index gone" in body["failed"]["index"]
