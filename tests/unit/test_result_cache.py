"""The result cache: bounded, keyed on the index view, timed where no view is known."""

from __future__ import annotations

from services.search.result_cache import ResultCache
from tests.manual_clock import ManualClock as Clock


def test_an_answer_is_kept_for_the_same_view_and_dropped_for_another() -> None:
    cache = ResultCache(8, ttl_s=1.0)
    cache.put("q", 3, {"total": 1})
    assert cache.get("q", 3) == {"total": 1}
    assert cache.get("q", 4) is None
    assert cache.get("q", 3) is None  # the stale entry went with the first miss


def test_a_view_version_keeps_an_answer_past_the_ttl() -> None:
    clock = Clock(100.0)
    cache = ResultCache(8, ttl_s=1.0, clock=clock)
    cache.put("q", 3, {"total": 1})
    clock.now += 60
    assert cache.get("q", 3) == {"total": 1}


def test_without_a_view_version_answers_expire_after_the_ttl() -> None:
    clock = Clock(100.0)
    cache = ResultCache(8, ttl_s=1.0, clock=clock)
    cache.put("q", None, {"total": 1})
    clock.now += 0.5
    assert cache.get("q", None) == {"total": 1}
    clock.now += 0.6
    assert cache.get("q", None) is None


def test_the_least_recently_used_answer_goes_first() -> None:
    cache = ResultCache(2, ttl_s=1.0)
    cache.put("a", 1, {"n": "a"})
    cache.put("b", 1, {"n": "b"})
    assert cache.get("a", 1) is not None  # a is now the most recent
    cache.put("c", 1, {"n": "c"})
    assert cache.get("b", 1) is None and cache.get("a", 1) is not None and len(cache) == 2


def test_zero_entries_keeps_nothing() -> None:
    cache = ResultCache(0, ttl_s=1.0)
    cache.put("a", 1, {"n": "a"})
    assert cache.get("a", 1) is None
