"""Frontier metrics counted at the FrontierState port, whatever the backend."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import REGISTRY

from services.common.domain.frontier_types import FrontierCounts, Lease, NewUrl, UrlInfo
from services.scheduler.frontier_metrics import (
    MeteredFrontierState,
    set_frontier_gauges,
)


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


class FakeState:
    """Just enough of a FrontierState: leases the URLs given, due at ``due_at``."""

    def __init__(self, leases: Sequence[Lease] = (), due_at: float = 0.0) -> None:
        self.leases = list(leases)
        self.due_at = due_at
        self.info_calls = 0

    def add_urls(self, urls: Sequence[NewUrl], now: float, host_budget: int) -> list[NewUrl]:
        return [u for u in urls if u.state == "queued"]

    def drop_queued(self, urls: Sequence[str], state: str, note: str, due_at: float | None = None) -> int:
        return len(urls)

    def unlease(self, url: str, now: float, state: str, note: str) -> None:
        pass

    def lease_due(self, now: float, limit: int, parallelism: int, max_in_flight: int, shards: object = None) -> list[Lease]:
        return self.leases

    def url_info(self, url: str) -> UrlInfo:
        self.info_calls += 1
        return UrlInfo(url, "a.cn", 0, "page", "leased", self.due_at, None, None, None, None, None, None, 0, "")

    def ping(self) -> None:
        pass


def robots(url: str) -> NewUrl:
    return NewUrl(url, "a.cn", 1, state="excluded", note="robots")


def test_a_url_disallowed_by_robots_counts_once_however_often_it_is_offered() -> None:
    state = MeteredFrontierState(FakeState())  # type: ignore[arg-type]
    before = sample("tansuo_robots_blocked_total")
    state.add_urls([robots("https://a.cn/login"), NewUrl("https://a.cn/", "a.cn", 1)], 0.0, 10)
    state.add_urls([robots("https://a.cn/login"), robots("https://a.cn/admin")], 0.0, 10)
    assert sample("tansuo_robots_blocked_total") - before == 2


def test_queued_urls_dropped_or_unleased_for_robots_count_and_other_drops_do_not() -> None:
    state = MeteredFrontierState(FakeState())  # type: ignore[arg-type]
    before = sample("tansuo_robots_blocked_total")
    state.drop_queued(["https://a.cn/x", "https://a.cn/y"], "excluded", "robots")
    state.drop_queued(["https://a.cn/z"], "failed", "host_unavailable:dns", due_at=5.0)
    state.unlease("https://a.cn/w", 0.0, "excluded", "robots")
    assert sample("tansuo_robots_blocked_total") - before == 3


def test_politeness_wait_is_lease_time_minus_due_time_for_a_bounded_sample() -> None:
    leases = [Lease(f"https://a.cn/{i}", "a.cn", f"l{i}", 0) for i in range(64)]
    inner = FakeState(leases, due_at=100.0)
    state = MeteredFrontierState(inner)  # type: ignore[arg-type]
    count = sample("tansuo_politeness_wait_seconds_count")
    total = sample("tansuo_politeness_wait_seconds_sum")
    assert state.lease_due(102.5, 64, 1, 256) == leases
    assert inner.info_calls == 8
    assert sample("tansuo_politeness_wait_seconds_count") - count == 8
    assert sample("tansuo_politeness_wait_seconds_sum") - total == 8 * 2.5


def test_calls_it_does_not_meter_go_straight_to_the_backend() -> None:
    inner = FakeState()
    assert MeteredFrontierState(inner).ping is not None  # type: ignore[arg-type]
    assert MeteredFrontierState(inner).leases is inner.leases  # type: ignore[arg-type]


def test_frontier_gauges_copy_the_counts() -> None:
    set_frontier_gauges(FrontierCounts(queued=5, due=2, leased=1, done=7, failed=1, excluded=3, hosts=4,
                                       blocked_hosts=1, fetched=8))  # fmt: skip
    assert sample("tansuo_frontier_urls", state="queued") == 5
    assert sample("tansuo_frontier_urls", state="excluded") == 3
    assert sample("tansuo_frontier_due_urls") == 2
    assert sample("tansuo_frontier_hosts") == 4
    assert sample("tansuo_frontier_blocked_hosts") == 1
