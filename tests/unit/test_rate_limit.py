"""Token buckets per client address: a burst, then a steady rate, then refusals
that say how long to wait."""

from __future__ import annotations

import pytest

from services.api.rate_limit import (
    TokenBuckets,
    is_exempt,
    parse_networks,
    retry_after_header,
)
from tests.manual_clock import ManualClock as Clock


def test_a_client_gets_its_burst_then_waits_for_the_refill() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate_per_s=2.0, burst=3, clock=clock)
    assert [buckets.take("203.0.113.1") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("203.0.113.1") == pytest.approx(0.5)  # one token per 0.5 s
    clock.now += 0.5
    assert buckets.take("203.0.113.1") == 0.0
    assert buckets.take("203.0.113.1") > 0


def test_one_client_emptying_its_bucket_leaves_the_others_theirs() -> None:
    buckets = TokenBuckets(rate_per_s=1.0, burst=1, clock=Clock())
    assert buckets.take("203.0.113.1") == 0.0
    assert buckets.take("203.0.113.1") > 0
    assert buckets.take("198.51.100.7") == 0.0


def test_an_idle_bucket_refills_to_the_burst_and_no_further() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate_per_s=10.0, burst=5, clock=clock)
    for _ in range(5):
        buckets.take("a")
    clock.now += 3600
    assert [buckets.take("a") for _ in range(5)] == [0.0] * 5
    assert buckets.take("a") > 0


def test_the_least_recently_seen_client_is_forgotten_at_the_cap() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate_per_s=0.001, burst=1, max_clients=2, clock=clock)
    buckets.take("a")
    buckets.take("b")
    buckets.take("c")  # evicts a, the least recently used
    assert buckets.take("a") == 0.0  # a fresh bucket
    assert buckets.take("c") > 0  # c is still remembered


def test_retry_after_is_whole_seconds_and_never_zero() -> None:
    assert retry_after_header(0.01) == "1"
    assert retry_after_header(1.0) == "1"
    assert retry_after_header(1.2) == "2"


def test_loopback_is_exempt_in_both_address_families_and_others_are_not() -> None:
    exempt = parse_networks(["127.0.0.0/8", "::1"])
    assert is_exempt("127.0.0.1", exempt) and is_exempt("::1", exempt) and is_exempt("::ffff:127.0.0.2", exempt)
    assert not is_exempt("203.0.113.9", exempt) and not is_exempt("2001:db8::1", exempt)
    assert not is_exempt("", exempt) and not is_exempt("not-an-address", exempt)
