"""The FrontierState contract, run against every adapter.

Three kinds of checks:
- each method's documented behaviour, on every adapter;
- a long random sequence of calls answered identically by Redis and by SQLite,
  the embedded adapter being the reference;
- schedulers racing on one backend (threads, each with its own adapter and connection),
  and Redis going away and coming back under a live adapter.
"""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from services.common.adapters.redis.connection import connect
from services.common.adapters.redis.frontier import (
    FrontierLayoutError,
    RedisFrontierState,
)
from services.common.adapters.redis.link_graph import RedisLinkGraph
from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.domain.frontier_types import HostUpdate, Lease, NewUrl, UrlUpdate
from services.common.domain.host_settings import HostSettings
from services.common.ports import FrontierState
from tests.servers.redis_server import RedisCluster, RedisServer

NOW = 1_000_000.0
H1, H2, H3 = "a.example.cn", "b.example.cn", "c.example.cn"


def url(host: str, path: str) -> str:
    return f"http://{host}/{path}"


REDIS_BACKENDS = [
    pytest.param("redis_url", marks=pytest.mark.integration, id="redis"),
    pytest.param("redis_cluster_url", marks=pytest.mark.integration, id="redis-cluster"),
]


@pytest.fixture(params=REDIS_BACKENDS)
def any_redis_url(request: pytest.FixtureRequest) -> str:
    """One Redis, then a three-primary Redis Cluster: the same code must run on both."""
    return request.getfixturevalue(request.param)


@pytest.fixture(params=["sqlite", *REDIS_BACKENDS])
def open_state(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], FrontierState]]:
    """Opens a new adapter on the same backend each time it is called, as a second
    scheduler would."""
    opened: list[FrontierState] = []
    if request.param == "sqlite":
        path = tmp_path / "frontier.sqlite3"

        def open_one() -> FrontierState:
            opened.append(SqliteFrontierState(path))
            return opened[-1]
    else:
        redis_url = request.getfixturevalue(request.param)

        def open_one() -> FrontierState:
            opened.append(RedisFrontierState.from_url(redis_url))
            return opened[-1]

    yield open_one
    for s in opened:
        s.close()


@pytest.fixture
def state(open_state: Callable[[], FrontierState]) -> FrontierState:
    return open_state()


def robots_ready(now: float = NOW) -> HostUpdate:
    return HostUpdate(robots_state="ready", robots_txt="", robots_fetched_at=now)


def ready_host(state: FrontierState, host: str, delay_s: float = 0.0, now: float = NOW) -> None:
    state.ensure_host(host, "http", delay_s)
    state.update_host(host, robots_ready(now), now, release=False)


def queue(state: FrontierState, host: str, *paths: str, depth: int = 0, kind: str = "page", now: float = NOW) -> None:
    state.add_urls([NewUrl(url(host, p), host, depth, kind=kind) for p in paths], now, 1000)


def lease_all(state: FrontierState, now: float = NOW, parallelism: int = 100) -> list[Lease]:
    return state.lease_due(now, 1000, parallelism, 1000)


# --- hosts ---------------------------------------------------------------------------


def test_a_paused_host_is_neither_claimed_for_robots_txt_nor_leased(state: FrontierState) -> None:
    assert state.set_paused(H1, True, NOW) is False  # unknown host
    state.ensure_host(H1, "http", 0.0)
    ready_host(state, H2)
    queue(state, H1, "a")
    queue(state, H2, "a")
    assert state.set_paused(H1, True, NOW) and state.set_paused(H2, True, NOW)
    assert state.get_host(H1).paused and state.claim_robots(NOW, 10) == [] and lease_all(state) == []
    state.update_host(H2, HostUpdate(blocked_until=NOW + 5, block_reason="Retry-After (429)"), NOW, release=False)
    assert lease_all(state, NOW + 10) == []  # the block passing does not lift the pause
    state.set_paused(H2, False, NOW + 10)
    assert [lease.url for lease in lease_all(state, NOW + 10)] == [url(H2, "a")]
    state.set_paused(H1, False, NOW)
    assert [h.host for h in state.claim_robots(NOW, 10)] == [H1]


def test_recrawl_host_makes_its_urls_due_and_host_urls_lists_them(state: FrontierState) -> None:
    ready_host(state, H1)
    ready_host(state, H2)
    queue(state, H1, "a", "b", "c")
    queue(state, H2, "a")
    state.add_urls([NewUrl(url(H1, "x"), H1, 0, "excluded", "robots")], NOW, 1000)
    leases = {lease.url: lease for lease in lease_all(state)}
    state.finish(url(H1, "a"), leases[url(H1, "a")].lease_id, UrlUpdate(state="done", due_at=NOW + 3600, fetched_at=NOW))
    state.finish(url(H1, "b"), leases[url(H1, "b")].lease_id, UrlUpdate(state="failed", due_at=NOW + 3600, fail_count=3))
    state.finish(url(H2, "a"), leases[url(H2, "a")].lease_id, UrlUpdate(state="done", due_at=NOW + 3600, fetched_at=NOW))
    assert state.host_urls(H1) == [url(H1, p) for p in "abc"]  # c still in flight; x excluded
    assert state.recrawl_host(H1, NOW + 1) == 2
    assert state.url_state(url(H1, "b")) == ("queued", "", 0)
    assert state.url_state(url(H1, "c"))[0] == "leased" and state.url_state(url(H2, "a"))[0] == "done"
    assert state.get_host(H1).queued == 2 and state.counts(NOW + 1).due == 2
    assert state.fetch_history(NOW - 60) == [(NOW // 60 * 60, 2)]


def test_host_settings_are_kept_per_host_replaced_whole_and_removed(
    open_state: Callable[[], FrontierState],
) -> None:
    state = open_state()
    assert state.host_settings() == {}
    first = HostSettings(include=(r"/docs/",), max_depth=3, delay_s=0.5, updated_at=NOW)
    state.set_host_settings(H1, first)  # a host the frontier does not know yet
    state.set_host_settings(H2, HostSettings(exclude=(r"\?print=",), allow_domains=("*.example.org",)))
    assert state.host_settings()[H1] == first
    replaced = HostSettings(exclude=(r"/old/",), updated_at=NOW + 1)
    state.set_host_settings(H1, replaced)
    # Another scheduler (a second adapter on the same backend) reads the same.
    other = open_state()
    assert other.host_settings() == {H1: replaced, H2: HostSettings(exclude=(r"\?print=",), allow_domains=("*.example.org",))}
    state.set_host_settings(H2, None)
    state.set_host_settings(H3, None)  # removing settings never given is fine
    assert list(other.host_settings()) == [H1]
    assert other.get_host(H1) is None  # settings do not make a host


def test_readmit_queues_again_only_the_urls_excluded_with_that_note(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "a", "b", "c", "d")
    state.add_urls([NewUrl(url(H1, "r"), H1, 0, "excluded", "robots")], NOW, 1000)
    assert state.drop_queued([url(H1, "a"), url(H1, "b")], "excluded", "host_settings") == 2
    state.drop_queued([url(H1, "c")], "failed", "host_settings")
    assert state.excluded_urls(H1, "host_settings") == [url(H1, "a"), url(H1, "b")]
    assert state.excluded_urls(H1, "robots") == [url(H1, "r")] and state.excluded_urls(H2, "robots") == []
    assert state.get_host(H1).queued == 1
    wanted = [url(H1, "a"), url(H1, "c"), url(H1, "d"), url(H1, "r"), url(H2, "x")]
    assert state.readmit(wanted, "host_settings", NOW + 5) == 1  # only a: c failed, d queued, r robots
    assert state.readmit(wanted, "host_settings", NOW + 5) == 0
    assert state.url_state(url(H1, "a")) == ("queued", "", 0)
    assert state.url_info(url(H1, "a")).due_at == NOW + 5
    assert state.get_host(H1).queued == 2 and state.counts(NOW + 5).excluded == 2
    assert sorted(lease.url for lease in lease_all(state, NOW + 5)) == [url(H1, "a"), url(H1, "d")]


def test_unknown_hosts_and_urls_read_as_none(state: FrontierState) -> None:
    assert state.get_host(H1) is None
    assert state.url_state(url(H1, "")) is None
    assert state.url_info(url(H1, "")) is None
    assert state.hosts() == []
    state.ping()


def test_ensure_host_creates_a_host_once(state: FrontierState) -> None:
    state.ensure_host(H1, "https", 2.5)
    state.ensure_host(H1, "http", 9.0)  # already there: nothing changes
    info = state.get_host(H1)
    assert (info.host, info.scheme, info.delay_s, info.robots_state) == (H1, "https", 2.5, "unknown")
    assert (info.robots_txt, info.robots_fetched_at, info.next_allowed_at, info.inflight) == (None, None, 0.0, 0)
    assert (info.blocked_until, info.block_reason, info.admitted, info.queued) == (0.0, "", 0, 0)
    assert state.counts(NOW).hosts == 1


def test_hosts_lists_the_busiest_first_then_by_name(state: FrontierState) -> None:
    for h in (H3, H2, H1):
        state.ensure_host(h, "http", 1.0)
    queue(state, H3, "1", "2")
    queue(state, H1, "1")
    assert [h.host for h in state.hosts()] == [H3, H1, H2]
    assert [h.queued for h in state.hosts(limit=2)] == [2, 1]


def test_claim_robots_takes_hosts_with_queued_urls_once_and_starts_their_clock(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 3.0)
    state.ensure_host(H2, "http", 3.0)  # nothing queued: no robots.txt needed yet
    queue(state, H1, "")
    (claimed,) = state.claim_robots(NOW, 10)
    assert (claimed.host, claimed.robots_state, claimed.inflight) == (H1, "unknown", 0)  # as it was
    info = state.get_host(H1)
    assert (info.robots_state, info.inflight, info.next_allowed_at) == ("fetching", 1, NOW + 3.0)
    assert state.claim_robots(NOW + 100, 10) == []
    assert state.counts(NOW).leased == 1  # a robots.txt fetch is in flight


def test_a_robots_claim_that_never_reports_back_expires_like_a_lease(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 0.0)
    state.ensure_host(H2, "http", 0.0)
    queue(state, H1, "")
    queue(state, H2, "")
    state.claim_robots(NOW, 1)
    state.claim_robots(NOW + 50, 1)
    assert state.expire_robots_claims(NOW + 99, 100) == []
    assert state.expire_robots_claims(NOW + 100, 100) == [H1]
    info = state.get_host(H1)
    assert (info.robots_state, info.inflight) == ("unknown", 0)
    assert state.get_host(H2).robots_state == "fetching"
    assert state.counts(NOW + 100).leased == 1
    assert [h.host for h in state.claim_robots(NOW + 100, 10)] == [H1]  # asked again


def test_a_robots_claim_answered_in_time_does_not_expire(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 0.0)
    queue(state, H1, "")
    state.claim_robots(NOW, 1)
    state.update_host(H1, robots_ready(NOW + 1), NOW + 1, release=True)
    assert state.expire_robots_claims(NOW + 1000, 100) == []
    info = state.get_host(H1)
    assert (info.robots_state, info.inflight) == ("ready", 0)


def test_url_breakdown_counts_urls_by_host_kind_state_note_and_status(state: FrontierState) -> None:
    ready_host(state, H1)
    ready_host(state, H2)
    queue(state, H1, "a", "b", "c")
    queue(state, H1, "sitemap.xml", kind="sitemap")
    queue(state, H2, "x")
    state.add_urls([NewUrl(url(H1, "private"), H1, 0, state="excluded", note="robots")], NOW, 1000)
    leases = {lease.url: lease for lease in lease_all(state)}
    state.finish(url(H1, "a"), leases[url(H1, "a")].lease_id, UrlUpdate(state="done", status=200))
    state.finish(url(H1, "b"), leases[url(H1, "b")].lease_id, UrlUpdate(state="done", status=404))
    state.finish(url(H1, "c"), leases[url(H1, "c")].lease_id, UrlUpdate(state="done", status=200))
    state.finish(url(H1, "sitemap.xml"), leases[url(H1, "sitemap.xml")].lease_id, UrlUpdate(state="done", status=404))
    assert sorted(state.url_breakdown(), key=str) == sorted([
        (H1, "page", "done", "", 200, 2), (H1, "page", "done", "", 404, 1), (H1, "sitemap", "done", "", 404, 1),
        (H1, "page", "excluded", "robots", None, 1), (H2, "page", "leased", "", None, 1),
    ], key=str)  # fmt: skip


def test_attention_urls_lists_what_went_wrong_by_host_then_url(state: FrontierState) -> None:
    ready_host(state, H1)
    ready_host(state, H2)
    queue(state, H1, "ok", "gone", "file.pdf", "moved", "down", "queued-yet")
    queue(state, H2, "refused")
    leases = {lease.url: lease for lease in lease_all(state)}
    outcomes = {
        url(H1, "ok"): UrlUpdate(state="done", status=200),
        url(H1, "gone"): UrlUpdate(state="done", status=404),
        url(H1, "file.pdf"): UrlUpdate(state="done", status=200, note="not_html:application/pdf"),
        url(H1, "moved"): UrlUpdate(state="done", status=301, note="redirect"),
        url(H1, "down"): UrlUpdate(state="failed", status=0, note="failed: connection"),
        url(H2, "refused"): UrlUpdate(state="done", status=0, note="private_address"),
    }
    for u, update in outcomes.items():
        state.finish(u, leases[u].lease_id, update)
    found = state.attention_urls(-1)
    assert [(u.url, u.status, u.note) for u in found] == [
        (url(H1, "down"), 0, "failed: connection"), (url(H1, "file.pdf"), 200, "not_html:application/pdf"),
        (url(H1, "gone"), 404, ""), (url(H2, "refused"), 0, "private_address"),
    ]  # fmt: skip
    assert [u.url for u in state.attention_urls(2)] == [url(H1, "down"), url(H1, "file.pdf")]


def test_a_url_excluded_for_robots_txt_can_be_readmitted(state: FrontierState) -> None:
    ready_host(state, H1)
    state.add_urls([NewUrl(url(H1, p), H1, 1, state="excluded", note="robots") for p in ("a", "b")], NOW, 1000)
    state.add_urls([NewUrl(url(H1, "c"), H1, 1, state="excluded", note="host_budget")], NOW, 1000)
    assert state.excluded_urls(H1, "robots") == [url(H1, "a"), url(H1, "b")]
    assert state.readmit([url(H1, "a")], "robots", NOW + 5) == 1
    assert state.readmit([url(H1, "a")], "robots", NOW + 5) == 0  # queued now, not excluded
    assert state.readmit([url(H1, "c")], "robots", NOW + 5) == 0  # excluded for another reason
    assert state.url_info(url(H1, "a")).state == "queued" and state.url_info(url(H1, "a")).note == ""
    assert state.excluded_urls(H1, "robots") == [url(H1, "b")]
    assert state.get_host(H1).queued == 1
    assert [lease.url for lease in lease_all(state, NOW + 5)] == [url(H1, "a")]
    counts = state.counts(NOW + 5)
    assert (counts.leased, counts.excluded) == (1, 2)


def test_a_host_whose_robots_txt_failed_is_claimed_again_only_at_its_retry_time(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 0.0)
    queue(state, H1, "a")
    (claimed,) = state.claim_robots(NOW, 10)
    state.update_host(H1, HostUpdate(robots_state="failed", robots_failures=3, robots_retry_at=NOW + 3600,
                                     block_reason="given up: robots.txt robots_http_503"), NOW, release=True)  # fmt: skip
    info = state.get_host(H1)
    assert (info.robots_state, info.robots_retry_at, info.inflight) == ("failed", NOW + 3600, 0)
    queue(state, H1, "b", now=NOW + 10)
    assert state.claim_robots(NOW + 10, 10) == []
    assert state.claim_robots(NOW + 3599, 10) == []
    assert [h.host for h in state.claim_robots(NOW + 3600, 10)] == [H1]
    assert state.get_host(H1).robots_state == "fetching"


def test_counts_carry_the_errors_counter(state: FrontierState) -> None:
    assert state.counts(NOW).errors == 0
    state.bump("errors", 3)
    assert state.counts(NOW).errors == 3


def test_counters_returns_every_bumped_name(state: FrontierState) -> None:
    state.bump("limit:max_depth", 3)
    state.bump("limit:max_depth@a.cn")
    assert {k: v for k, v in state.counters().items() if k.startswith("limit:")} == {
        "limit:max_depth": 3, "limit:max_depth@a.cn": 1}


def test_claim_robots_serves_the_longest_waiting_hosts_first(state: FrontierState) -> None:
    for h, waited_since in ((H1, 30.0), (H2, 10.0), (H3, 20.0)):
        state.ensure_host(h, "http", 1.0)
        state.update_host(h, HostUpdate(next_allowed_at=NOW - waited_since), NOW, release=False)
        queue(state, h, "")
    assert [h.host for h in state.claim_robots(NOW, 2)] == [H1, H3]
    assert state.claim_robots(NOW, 0) == []


def test_a_blocked_host_waits_for_its_block_to_pass(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 0.0)
    queue(state, H1, "")
    state.update_host(H1, HostUpdate(blocked_until=NOW + 60, block_reason="Retry-After"), NOW, release=False)
    assert state.counts(NOW).blocked_hosts == 1
    assert state.claim_robots(NOW + 59, 10) == []
    assert [h.host for h in state.claim_robots(NOW + 60, 10)] == [H1]
    state.update_host(H1, robots_ready(NOW + 60), NOW + 60, release=True)
    state.update_host(H1, HostUpdate(blocked_until=NOW + 120), NOW + 60, release=False)
    assert lease_all(state, NOW + 119) == []
    assert state.counts(NOW + 119).blocked_hosts == 1
    assert state.counts(NOW + 120).blocked_hosts == 0
    assert [lease.url for lease in lease_all(state, NOW + 120)] == [url(H1, "")]


def test_expire_robots_sends_hosts_back_for_a_fresh_robots_txt(state: FrontierState) -> None:
    ready_host(state, H1)
    ready_host(state, H2, now=NOW + 50)
    queue(state, H1, "")
    assert state.expire_robots(NOW - 1) == []
    assert state.expire_robots(NOW) == [H1]
    assert state.get_host(H1).robots_state == "unknown"
    assert state.get_host(H2).robots_state == "ready"
    assert lease_all(state) == []
    assert [h.host for h in state.claim_robots(NOW, 10)] == [H1]


def test_update_host_changes_only_the_fields_given(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 1.0)
    state.update_host(H1, HostUpdate(fail_streak=2, block_reason="slow"), NOW, release=False)
    info = state.get_host(H1)
    assert (info.fail_streak, info.block_reason, info.delay_s, info.robots_state) == (2, "slow", 1.0, "unknown")
    state.update_host("nowhere.cn", HostUpdate(fail_streak=1), NOW, release=True)
    assert state.get_host("nowhere.cn") is None


def test_a_release_frees_a_slot_and_restarts_the_clock_from_now(state: FrontierState) -> None:
    ready_host(state, H1, delay_s=2.0)
    queue(state, H1, "1", "2")
    (lease,) = state.lease_due(NOW, 10, 1, 10)
    assert state.get_host(H1).next_allowed_at == NOW + 2.0
    state.update_host(H1, HostUpdate(), NOW + 30, release=True)
    info = state.get_host(H1)
    assert (info.inflight, info.next_allowed_at) == (0, NOW + 32.0)
    state.update_host(H1, HostUpdate(), NOW + 1, release=True)  # never earlier, never below 0
    info = state.get_host(H1)
    assert (info.inflight, info.next_allowed_at) == (0, NOW + 32.0)


# --- admitting URLs ------------------------------------------------------------------


def test_add_urls_admits_each_url_once_ever(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 1.0)
    a, b = NewUrl(url(H1, "a"), H1, 1), NewUrl(url(H1, "b"), H1, 2)
    assert state.add_urls([a, b, a], NOW, 100) == [a, b]
    assert state.add_urls([a, NewUrl(url(H1, "a"), H1, 0, kind="sitemap")], NOW + 1, 100) == []
    info = state.url_info(url(H1, "a"))
    assert (info.host, info.depth, info.kind, info.state, info.due_at, info.fail_count, info.note) == (
        H1, 1, "page", "queued", NOW, 0, "")  # fmt: skip
    host = state.get_host(H1)
    assert (host.admitted, host.queued) == (2, 2)
    assert sorted(state.queued_urls(H1)) == [url(H1, "a"), url(H1, "b")]


def test_a_url_past_its_hosts_budget_is_recorded_as_excluded(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 1.0)
    urls = [NewUrl(url(H1, str(i)), H1, 0) for i in range(5)]
    assert state.add_urls(urls, NOW, 3) == urls[:3]
    assert state.url_state(url(H1, "4")) == ("excluded", "host_budget", 0)
    assert state.add_urls([NewUrl(url(H1, "4"), H1, 0)], NOW, 10) == []  # seen, once and for all


def test_an_excluded_url_is_remembered_but_not_queued(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 1.0)
    assert state.add_urls([NewUrl(url(H1, "x"), H1, 0, state="excluded", note="robots")], NOW, 10) == []
    assert state.url_state(url(H1, "x")) == ("excluded", "robots", 0)
    counts = state.counts(NOW)
    assert (counts.queued, counts.excluded, state.get_host(H1).admitted) == (0, 1, 0)


# --- leasing -------------------------------------------------------------------------


def test_lease_due_serves_sitemaps_then_shallow_pages_then_the_earliest_due(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "deep", depth=2, now=NOW - 10)
    queue(state, H1, "late", depth=1, now=NOW - 1)
    queue(state, H1, "early", depth=1, now=NOW - 5)
    queue(state, H1, "sitemap.xml", depth=3, kind="sitemap", now=NOW)
    queue(state, H1, "future", depth=0, now=NOW + 1)  # not due yet
    leases = state.lease_due(NOW, 10, 10, 100)
    assert [lease.url.rsplit("/", 1)[1] for lease in leases] == ["sitemap.xml", "early", "late", "deep"]
    assert [(lease.depth, lease.kind) for lease in leases] == [(3, "sitemap"), (1, "page"), (1, "page"), (2, "page")]
    assert len({lease.lease_id for lease in leases}) == 4


def test_lease_due_fills_free_slots_up_to_the_hosts_parallelism(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, *map(str, range(5)))
    assert len(state.lease_due(NOW, 10, 3, 100)) == 3
    assert state.lease_due(NOW, 10, 3, 100) == []
    assert len(state.lease_due(NOW, 10, 4, 100)) == 1  # one more slot
    info = state.get_host(H1)
    assert (info.inflight, info.queued) == (4, 1)


def test_lease_due_stops_at_the_limit_and_at_max_in_flight(state: FrontierState) -> None:
    for h in (H1, H2, H3):
        ready_host(state, h)
        queue(state, h, "1", "2")
    assert len(state.lease_due(NOW, 3, 2, 100)) == 3
    assert len(state.lease_due(NOW, 10, 2, 4)) == 1  # 3 in flight, 4 at most
    assert state.lease_due(NOW, 10, 2, 4) == []
    assert state.counts(NOW).leased == 4


def test_lease_due_serves_the_longest_waiting_hosts_first_and_starts_their_clock(state: FrontierState) -> None:
    for h, waited_since in ((H1, 5.0), (H2, 30.0), (H3, 10.0)):
        ready_host(state, h, delay_s=1.5)
        state.update_host(h, HostUpdate(next_allowed_at=NOW - waited_since), NOW, release=False)
        queue(state, h, "")
    assert [lease.host for lease in state.lease_due(NOW, 2, 1, 100)] == [H2, H3]
    assert state.get_host(H2).next_allowed_at == NOW + 1.5
    assert [lease.host for lease in state.lease_due(NOW, 10, 1, 100)] == [H1]  # the others are busy


def test_a_host_without_robots_txt_is_never_leased(state: FrontierState) -> None:
    state.ensure_host(H1, "http", 0.0)
    queue(state, H1, "")
    assert lease_all(state) == []


# --- outcomes ------------------------------------------------------------------------


def test_finish_accepts_only_the_lease_it_names_and_only_once(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "page")
    queue(state, H1, "sitemap.xml", kind="sitemap")
    leases = lease_all(state)
    done = UrlUpdate(state="done", due_at=NOW + 3600, fetched_at=NOW, status=200, content_hash="h", interval_s=3600.0)
    for lease in leases:
        assert not state.finish(lease.url, lease.lease_id + "x", done)
        assert state.finish(lease.url, lease.lease_id, done)
        assert not state.finish(lease.url, lease.lease_id, done)  # a replay
    assert not state.finish(url(H1, "never-seen"), "id", done)
    counts = state.counts(NOW)
    assert (counts.done, counts.leased, counts.fetched) == (2, 0, 1)  # sitemaps are not pages
    info = state.url_info(url(H1, "page"))
    assert (info.state, info.due_at, info.fetched_at, info.status, info.content_hash) == ("done", NOW + 3600, NOW, 200, "h")
    assert (info.etag, info.last_modified, info.interval_s) == (None, None, 3600.0)


def test_finish_with_a_host_update_releases_the_slot_in_the_same_step_and_only_once(state: FrontierState) -> None:
    ready_host(state, H1, delay_s=2.0)
    queue(state, H1, "a", "b")
    (lease,) = state.lease_due(NOW, 10, 1, 10)
    assert state.url_info(lease.url).lease_id == lease.lease_id
    done = UrlUpdate(state="done", due_at=NOW + 3600, fetched_at=NOW + 5)
    assert state.finish(lease.url, lease.lease_id, done, HostUpdate(fail_streak=0, block_reason=""), NOW + 5)
    host = state.get_host(H1)
    assert (host.inflight, host.next_allowed_at) == (0, NOW + 7)  # the delay counts from the outcome
    assert state.url_info(lease.url).lease_id is None
    # A replay changes neither the URL nor the host: no second release.
    assert not state.finish(lease.url, lease.lease_id, done, HostUpdate(fail_streak=3), NOW + 9)
    assert (state.get_host(H1).fail_streak, state.get_host(H1).next_allowed_at) == (0, NOW + 7)
    assert state.get_hosts([H1, "unknown.example.cn"]) == {H1: state.get_host(H1)}


def test_a_retry_goes_back_to_the_queue_at_its_due_time(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "")
    (lease,) = lease_all(state)
    assert state.finish(lease.url, lease.lease_id, UrlUpdate(state="queued", due_at=NOW + 10, fail_count=1))
    state.update_host(H1, HostUpdate(), NOW, release=True)
    assert state.url_state(lease.url) == ("queued", "", 1)
    assert state.counts(NOW).due == 0 and state.counts(NOW + 10).due == 1
    assert lease_all(state, NOW + 9) == []
    assert [again.url for again in lease_all(state, NOW + 10)] == [lease.url]


def test_conditional_get_validators_come_back_with_the_next_lease(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "")
    (lease,) = lease_all(state)
    assert (lease.etag, lease.last_modified) == ("", "")
    update = UrlUpdate(state="done", due_at=NOW + 60, etag='"v1"', last_modified="Wed, 21 Oct 2026 07:28:00 GMT")
    state.finish(lease.url, lease.lease_id, update)
    state.update_host(H1, HostUpdate(), NOW, release=True)
    assert state.sweep_recrawl(NOW + 60, 100) == 1
    (again,) = lease_all(state, NOW + 60)
    assert (again.etag, again.last_modified) == ('"v1"', "Wed, 21 Oct 2026 07:28:00 GMT")


def test_unlease_takes_a_lease_back_and_frees_its_slot(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "a", "b")
    first, second = lease_all(state)
    state.unlease(first.url, NOW, "excluded", "robots")
    state.unlease(second.url, NOW, "queued", "")
    state.unlease(second.url, NOW, "excluded", "again")  # no longer leased: nothing happens
    assert state.url_state(first.url) == ("excluded", "robots", 0)
    assert state.url_state(second.url) == ("queued", "", 0)
    assert not state.finish(first.url, first.lease_id, UrlUpdate(state="done"))
    info = state.get_host(H1)
    assert (info.inflight, info.queued) == (0, 1)


def test_an_expired_lease_returns_to_the_queue_and_its_late_outcome_is_stale(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "")
    (lease,) = lease_all(state)
    assert state.expire_leases(NOW + 59, 60) == 0
    assert state.expire_leases(NOW + 60, 60) == 1
    assert state.url_state(lease.url)[0] == "queued"
    (again,) = lease_all(state, NOW + 60)
    assert again.lease_id != lease.lease_id
    assert not state.finish(lease.url, lease.lease_id, UrlUpdate(state="done"))
    assert state.finish(again.url, again.lease_id, UrlUpdate(state="done"))


def test_drop_queued_moves_only_queued_urls(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "a", "b", "c")
    (leased,) = state.lease_due(NOW, 1, 1, 10)
    queued = sorted(state.queued_urls(H1))
    assert leased.url not in queued and len(queued) == 2
    assert state.drop_queued([*queued, leased.url, queued[0], url(H1, "unknown")], "failed", "host_unavailable") == 2
    assert state.url_state(queued[0]) == ("failed", "host_unavailable", 0)
    assert state.queued_urls(H1) == []
    assert state.get_host(H1).queued == 0


def test_a_failed_seed_given_again_is_queued_afresh(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "")
    (lease,) = lease_all(state)
    assert not state.requeue_seed(lease.url, NOW)  # leased, not failed
    state.finish(lease.url, lease.lease_id, UrlUpdate(state="failed", due_at=NOW + 3600, fail_count=3, note="failed: x"))
    assert not state.requeue_seed(url(H1, "unknown"), NOW)
    assert state.requeue_seed(lease.url, NOW + 5)
    info = state.url_info(lease.url)
    assert (info.state, info.due_at, info.fail_count, info.note) == ("queued", NOW + 5, 0, "")
    assert state.get_host(H1).queued == 1


# --- recrawl -------------------------------------------------------------------------


def finish_all(state: FrontierState, now: float, update: UrlUpdate) -> None:
    for lease in lease_all(state, now):
        state.finish(lease.url, lease.lease_id, update)
        state.update_host(lease.host, HostUpdate(), now, release=True)


def test_sweep_recrawl_queues_finished_urls_whose_time_has_come(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "a", "b", "c")
    finish_all(state, NOW, UrlUpdate(state="done", due_at=NOW + 100, fail_count=0, note="kept"))
    state.requeue(url(H1, "c"), NOW)
    lease_all(state, NOW)  # c is leased: not finished, so never swept
    assert state.sweep_recrawl(NOW + 99, 100) == 0
    assert state.sweep_recrawl(NOW + 100, 1) == 1  # the limit holds
    assert state.sweep_recrawl(NOW + 100, 100) == 1
    assert state.sweep_recrawl(NOW + 100, 100) == 0
    info = state.url_info(url(H1, "a"))
    assert (info.state, info.due_at, info.note) == ("queued", NOW + 100, "kept")
    assert state.get_host(H1).queued == 2


def test_a_failed_url_comes_back_for_recrawl_with_its_failures_forgotten(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "")
    finish_all(state, NOW, UrlUpdate(state="failed", due_at=NOW + 3600, fail_count=3, note="failed: timeout"))
    assert state.counts(NOW).failed == 1
    assert state.sweep_recrawl(NOW + 3600, 10) == 1
    assert state.url_state(url(H1, "")) == ("queued", "failed: timeout", 0)


def test_a_fetched_url_takes_a_note_and_keeps_its_schedule(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "a.pdf", "b")
    assert not state.note_fetched(url(H1, "a.pdf"), "document:malformed")  # queued, not fetched
    finish_all(state, NOW, UrlUpdate(state="done", due_at=NOW + 3600, fail_count=0, status=200))
    assert state.note_fetched(url(H1, "a.pdf"), "document:malformed")
    info = state.url_info(url(H1, "a.pdf"))
    assert (info.state, info.note, info.due_at, info.status) == ("done", "document:malformed", NOW + 3600, 200)
    assert [u.url for u in state.attention_urls(-1)] == [url(H1, "a.pdf")]
    assert state.sweep_recrawl(NOW + 3600, 10) == 2  # its recrawl is as it was


def test_requeue_brings_a_finished_url_back_now(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "a")
    assert not state.requeue(url(H1, "a"), NOW)  # still queued
    finish_all(state, NOW, UrlUpdate(state="done", due_at=NOW + 86400, fail_count=0))
    assert state.requeue(url(H1, "a"), NOW + 5)
    info = state.url_info(url(H1, "a"))
    assert (info.state, info.due_at) == ("queued", NOW + 5)
    assert [lease.url for lease in lease_all(state, NOW + 5)] == [url(H1, "a")]


def test_upcoming_lists_queued_and_finished_urls_soonest_first(state: FrontierState) -> None:
    ready_host(state, H1)
    queue(state, H1, "a", "b", now=NOW)
    (lease,) = state.lease_due(NOW, 1, 1, 10)
    state.finish(lease.url, lease.lease_id, UrlUpdate(state="done", due_at=NOW + 50))
    queue(state, H1, "c", now=NOW + 10)
    queue(state, H1, "d", now=NOW + 60)
    state.add_urls([NewUrl(url(H1, "x"), H1, 0, state="excluded")], NOW, 10)
    assert state.upcoming(10) == [
        (url(H1, "b"), "queued", NOW),
        (url(H1, "c"), "queued", NOW + 10),
        (url(H1, "a"), "done", NOW + 50),
        (url(H1, "d"), "queued", NOW + 60),
    ]
    assert [u for u, _, _ in state.upcoming(3)] == [url(H1, "b"), url(H1, "c"), url(H1, "a")]
    assert state.upcoming(0) == []


# --- counters ------------------------------------------------------------------------


def test_counts_add_up_every_state(state: FrontierState) -> None:
    ready_host(state, H1)
    state.ensure_host(H2, "http", 1.0)
    queue(state, H1, "a", "b", "c", "d")
    queue(state, H2, "e")
    queue(state, H1, "later", now=NOW + 100)
    state.add_urls([NewUrl(url(H1, "x"), H1, 0, state="excluded")], NOW, 100)
    a, b, c = state.lease_due(NOW, 3, 3, 10)
    state.finish(a.url, a.lease_id, UrlUpdate(state="done", due_at=NOW + 10))
    state.finish(b.url, b.lease_id, UrlUpdate(state="failed", due_at=NOW + 10))
    state.claim_robots(NOW, 10)  # H2's robots.txt is in flight
    state.bump("errors", 2)
    state.bump("fetched")
    counts = state.counts(NOW)
    assert (counts.queued, counts.due, counts.leased) == (3, 2, 2)
    assert (counts.done, counts.failed, counts.excluded) == (1, 1, 1)
    assert (counts.hosts, counts.blocked_hosts, counts.fetched) == (2, 0, 2)
    assert not counts.idle


# --- same answers as the embedded adapter --------------------------------------------


def _lease_key(leases: list[Lease]) -> list[tuple]:
    """A lease without its id, which is each adapter's own."""
    return [dataclasses.astuple(dataclasses.replace(lease, lease_id="")) for lease in leases]


class _Twins:
    """Makes every call on both adapters and insists on the same answer."""

    def __init__(self, reference: FrontierState, other: FrontierState) -> None:
        self.pair = (reference, other)
        self.lease_ids: tuple[dict[str, str], dict[str, str]] = ({}, {})

    def same(self, method: str, *args: object, key: Callable[[object], object] = lambda x: x) -> object:
        ref, got = (key(getattr(s, method)(*args)) for s in self.pair)
        assert got == ref, f"{method}{args}"
        return ref

    def lease_due(self, *args: object) -> list[tuple]:
        results = [s.lease_due(*args) for s in self.pair]
        for ids, leases in zip(self.lease_ids, results, strict=True):
            ids.update((lease.url, lease.lease_id) for lease in leases)
        assert _lease_key(results[1]) == _lease_key(results[0]), f"lease_due{args}"
        return _lease_key(results[0])

    def leased(self) -> list[str]:
        return sorted(u for u in self.lease_ids[0] if self.pair[0].url_state(u)[0] == "leased")

    def finish(self, u: str, update: UrlUpdate, stale: bool) -> None:
        answers = [
            s.finish(u, ids.get(u, "none") + ("-old" if stale else ""), update) for s, ids in zip(self.pair, self.lease_ids, strict=True)
        ]
        assert answers[0] == answers[1], f"finish({u})"


def _check_state_counts(sqlite_state: SqliteFrontierState) -> None:
    """The trigger-kept counts SQLite's counts() reads agree with a count of the table."""
    db = sqlite_state._db
    counted = {k: v for k, v in db.execute("SELECT state, n FROM state_counts") if v}
    assert counted == dict(db.execute("SELECT state, COUNT(*) FROM urls GROUP BY state"))


@pytest.mark.parametrize("seed", range(6))
def test_redis_answers_a_random_run_of_calls_exactly_as_sqlite_does(seed: int, any_redis_url: str) -> None:
    # Host names and URLs sort in the order they are created, because SQLite breaks
    # ties (equal next_allowed_at, equal depth and due_at) by insertion order and Redis
    # by name; neither order is part of the contract.
    rng = random.Random(seed)
    twins = _Twins(SqliteFrontierState(Path(":memory:")), RedisFrontierState.from_url(any_redis_url))
    hosts = [f"h{i}.example.cn" for i in range(4)]
    for h in hosts:
        twins.same("ensure_host", h, "http", rng.choice([0.0, 0.0, 1.0, 2.5]))
    urls: list[tuple[str, str]] = []
    now = NOW

    for step in range(400):
        now += rng.choice([0.0, 0.0, 0.5, 1.0, 3.0, 30.0, -0.5])  # clocks of two schedulers may disagree a little
        op = rng.random()
        if op < 0.20:
            batch = []
            for _ in range(rng.randint(1, 4)):
                if urls and rng.random() < 0.2:
                    u, h = rng.choice(urls)  # seen before
                else:
                    h = rng.choice(hosts)
                    u = url(h, f"p{len(urls):04d}")
                    urls.append((u, h))
                kind = "sitemap" if rng.random() < 0.1 else "page"
                excluded = rng.random() < 0.1
                batch.append(NewUrl(u, h, rng.randint(0, 3), "excluded" if excluded else "queued", "robots" * excluded, kind))
            twins.same("add_urls", batch, now, 40)
        elif op < 0.28:
            twins.same("claim_robots", now, rng.randint(0, 3))
        elif op < 0.48:
            twins.lease_due(now, rng.randint(0, 6), rng.randint(1, 3), rng.randint(1, 10))
        elif op < 0.68 and twins.lease_ids[0]:
            leased = twins.leased()
            u = rng.choice(leased if leased and rng.random() < 0.9 else sorted(twins.lease_ids[0]))
            update = rng.choice([
                UrlUpdate(state="done", due_at=now + rng.choice([10.0, 100.0]), fetched_at=now, status=200,
                          content_hash=f"c{step}", etag=rng.choice([None, f'"e{step}"']), interval_s=100.0, fail_count=0),
                UrlUpdate(state="queued", due_at=now + rng.choice([0.0, 5.0]), fail_count=rng.randint(1, 2)),
                UrlUpdate(state="failed", due_at=now + 50, fail_count=3, status=500, note="failed: http_500"),
            ])  # fmt: skip
            twins.finish(u, update, stale=rng.random() < 0.15)
            twins.same("update_host", u.split("/")[2], HostUpdate(fail_streak=rng.randint(0, 2)), now, True)
        elif op < 0.76:
            h = rng.choice(hosts)
            ready = HostUpdate(robots_state="ready", robots_txt="", robots_fetched_at=now, delay_s=rng.choice([0.0, 1.0]))
            update = rng.choice([
                ready,
                ready,
                HostUpdate(robots_state="unknown", robots_failures=1, blocked_until=now + rng.choice([5.0, 40.0]),
                           block_reason="robots.txt 503"),
                HostUpdate(blocked_until=now + rng.choice([-1.0, 20.0]), block_reason="Retry-After (429)"),
                HostUpdate(next_allowed_at=now + rng.choice([0.0, 10.0])),
            ])  # fmt: skip
            twins.same("update_host", h, update, now, rng.random() < 0.5)
        elif op < 0.79 and twins.lease_ids[0]:
            u = rng.choice(twins.leased() or sorted(twins.lease_ids[0]))
            twins.same("unlease", u, now, rng.choice(["queued", "excluded"]), "robots")
        elif op < 0.82:
            twins.same("expire_leases", now, rng.choice([20.0, 60.0]))
        elif op < 0.85:
            twins.same("expire_robots", now - rng.choice([30.0, 100.0]), key=sorted)
        elif op < 0.88:
            h = rng.choice(hosts)
            queued = twins.same("queued_urls", h, key=sorted)
            doomed = rng.sample(queued, k=min(len(queued), rng.randint(0, 2)))
            twins.same("drop_queued", doomed, rng.choice(["excluded", "failed"]), "robots")
        elif op < 0.91 and urls:
            u, _ = rng.choice(urls)
            twins.same(rng.choice(["requeue_seed", "requeue"]), u, now)
        elif op < 0.95:
            twins.same("sweep_recrawl", now, 10_000)
        elif op < 0.975:
            h = rng.choice(hosts + ["unknown.example.cn"])
            if rng.random() < 0.5:
                twins.same("set_paused", h, rng.random() < 0.6, now)
            else:
                twins.same("recrawl_host", h, now)
        elif op < 0.99:
            twins.same("bump", "errors", rng.randint(1, 3))
        else:
            h = rng.choice(hosts)
            excluded = twins.same("excluded_urls", h, "robots")
            twins.same("readmit", rng.sample(excluded, k=min(len(excluded), 2)), "robots", now)

        if step % 10 == 0:
            twins.same("counts", now)
            _check_state_counts(twins.pair[0])
            twins.same("hosts")
            twins.same("upcoming", -1, key=lambda rows: sorted(rows, key=lambda r: (r[2], r[0])))
            twins.same("fetch_history", 0.0)
            for h in hosts:
                twins.same("get_host", h)
                twins.same("queued_urls", h, key=sorted)
                twins.same("host_urls", h)
            for u, _ in urls:
                twins.same("url_info", u)
                twins.same("url_state", u)
    twins.same("counts", now)
    assert twins.lease_ids[0], "the run never leased anything"
    for s in twins.pair:
        s.close()


@pytest.mark.integration
def test_redis_lease_due_reads_only_the_hosts_it_may_serve(redis_url: str) -> None:
    state = RedisFrontierState.from_url(redis_url)
    hosts = [f"h{i:05d}.example.cn" for i in range(3000)]
    for h in hosts:
        ready_host(state, h)
    state.add_urls([NewUrl(url(h, ""), h, 0) for h in hosts], NOW, 10)
    for i, h in enumerate(hosts[10:]):  # all but ten wait: half for politeness, half blocked
        wait = HostUpdate(next_allowed_at=NOW + 60) if i % 2 else HostUpdate(blocked_until=NOW + 60)
        state.update_host(h, wait, NOW, release=False)
    admin = connect(redis_url).client
    admin.config_resetstat()
    leases = state.lease_due(NOW, 100, 1, 1000)
    stats = admin.info("commandstats")
    assert sorted(lease.host for lease in leases) == hosts[:10]
    host_reads = sum(stats.get(f"cmdstat_{c}", {}).get("calls", 0) for c in ("hmget", "hget", "hgetall"))
    assert host_reads < 100  # about four per lease, not one per host
    admin.close()
    state.close()


# --- racing schedulers ---------------------------------------------------------------


def _run_together(workers: int, target: Callable[[int], None]) -> None:
    errors: list[BaseException] = []

    def run(w: int) -> None:
        try:
            target(w)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]


def _race_to_lease(schedulers: list[FrontierState], now: float, parallelism: int, max_in_flight: int) -> list[Lease]:
    """Every scheduler leases, four at a time, until nothing more is given; all start together."""
    barrier = threading.Barrier(len(schedulers))
    got: list[list[Lease]] = [[] for _ in schedulers]

    def lease(w: int) -> None:
        barrier.wait()
        while leases := schedulers[w].lease_due(now, 4, parallelism, max_in_flight):
            got[w] += leases

    _run_together(len(schedulers), lease)
    return [lease for leases in got for lease in leases]


def test_racing_schedulers_never_lease_a_url_twice_nor_exceed_a_hosts_parallelism(
    open_state: Callable[[], FrontierState],
) -> None:
    parallelism, max_in_flight, workers = 3, 50, 3
    setup = open_state()
    hosts = [f"h{i:02d}.example.cn" for i in range(20)]
    for h in hosts:
        ready_host(setup, h)
    all_urls = {url(h, str(i)) for h in hosts for i in range(25)}
    setup.add_urls([NewUrl(u, u.split("/")[2], 0) for u in sorted(all_urls)], NOW, 1000)
    schedulers = [open_state() for _ in range(workers)]
    ever_leased: Counter[str] = Counter()
    rounds = 0
    while setup.counts(NOW).queued:
        # In a round the schedulers race to lease and nothing is released, so the
        # leases of all of them together must respect every limit.
        round_leases = _race_to_lease(schedulers, NOW + rounds, parallelism, max_in_flight)
        assert round_leases, "no progress"
        per_url = Counter(lease.url for lease in round_leases)
        assert max(per_url.values()) == 1, "a URL was leased twice"
        assert max(Counter(lease.host for lease in round_leases).values()) <= parallelism
        # SQLite checks max_in_flight inside its transaction; Redis against a reading of
        # its shards' counts, so each racing scheduler may fill the room it saw (4 here).
        slack = 0 if isinstance(setup, SqliteFrontierState) else 4 * (workers - 1)
        assert len(round_leases) <= max_in_flight + slack
        ever_leased.update(per_url)
        for lease in round_leases:
            assert setup.finish(lease.url, lease.lease_id, UrlUpdate(state="done"))
            setup.update_host(lease.host, HostUpdate(), NOW + rounds, release=True)
        rounds += 1
    assert set(ever_leased) == all_urls and max(ever_leased.values()) == 1
    assert all(setup.get_host(h).inflight == 0 for h in hosts)
    counts = setup.counts(NOW)
    assert (counts.done, counts.leased, counts.queued, counts.fetched) == (len(all_urls), 0, 0, len(all_urls))


def test_racing_schedulers_admit_each_url_once_and_keep_the_host_budget(
    open_state: Callable[[], FrontierState],
) -> None:
    setup = open_state()
    setup.ensure_host(H1, "http", 1.0)
    urls = [NewUrl(url(H1, str(i)), H1, 0) for i in range(600)]
    schedulers = [open_state() for _ in range(3)]
    added: list[list[NewUrl]] = [[] for _ in schedulers]

    def admit(w: int) -> None:
        mine = urls[:]
        random.Random(w).shuffle(mine)
        for start in range(0, len(mine), 25):
            added[w] += schedulers[w].add_urls(mine[start : start + 25], NOW, 400)

    _run_together(len(schedulers), admit)
    admitted = [u.url for batch in added for u in batch]
    assert len(admitted) == len(set(admitted)) == 400
    counts = setup.counts(NOW)
    assert (counts.queued, counts.excluded) == (400, 200)
    assert (setup.get_host(H1).admitted, setup.get_host(H1).queued) == (400, 400)


def test_racing_schedulers_claim_each_hosts_robots_txt_once(open_state: Callable[[], FrontierState]) -> None:
    setup = open_state()
    hosts = [f"h{i:02d}.example.cn" for i in range(40)]
    for h in hosts:
        setup.ensure_host(h, "http", 0.0)
        queue(setup, h, "")
    schedulers = [open_state() for _ in range(3)]
    claimed: list[list[str]] = [[] for _ in schedulers]

    def claim(w: int) -> None:
        while infos := schedulers[w].claim_robots(NOW, 2):
            claimed[w] += [info.host for info in infos]

    _run_together(len(schedulers), claim)
    every = [h for hs in claimed for h in hs]
    assert sorted(every) == sorted(hosts)
    assert setup.counts(NOW).leased == len(hosts)


@pytest.mark.integration
def test_a_redis_frontier_of_the_older_layout_is_refused_with_a_way_forward(redis_url: str) -> None:
    old = connect(redis_url)
    old.client.zadd(f"{old.prefix}hosts", {"a.example.cn": 0})  # as the version before shards left it
    with pytest.raises(FrontierLayoutError, match=r"older Tansuo.*prefix=tansuo2"):
        RedisFrontierState.from_url(redis_url)
    old.client.close()


@pytest.mark.integration
def test_a_redis_frontier_keeps_the_shard_count_it_was_created_with(redis_url: str) -> None:
    first = RedisFrontierState.from_url(redis_url, shards=4)
    ready_host(first, H1)
    queue(first, H1, "a")
    second = RedisFrontierState.from_url(redis_url, shards=12)  # a scheduler started with other settings
    assert second.shards() == 4
    assert [lease.url for lease in lease_all(second)] == [url(H1, "a")]
    first.close()
    second.close()


# --- Redis going away ----------------------------------------------------------------


@pytest.mark.integration
def test_redis_cluster_adapters_fail_clearly_while_a_primary_is_down_and_recover(tmp_path: Path) -> None:
    cluster = RedisCluster(tmp_path / "cluster")
    try:
        cluster.start()
        state = RedisFrontierState.from_url(f"{cluster.url}?prefix=outage")
        graph = RedisLinkGraph.from_url(f"{cluster.url}?prefix=outage")
        hosts = [f"h{i}.example.cn" for i in range(24)]  # every shard, so every primary
        for h in hosts:
            ready_host(state, h)
            queue(state, h, "a")
        cluster.nodes[1].stop()
        started = time.monotonic()
        for call in (state.ping, graph.ping, lambda: state.lease_due(NOW, 100, 1, 100), lambda: state.counts(NOW)):
            with pytest.raises(ConnectionError, match=r"Redis at cluster 127\.0\.0\.1:.* is unreachable"):
                call()
        assert time.monotonic() - started < 5
        cluster.nodes[1].start()  # back in the cluster (its nodes.conf), its data gone (no persistence)
        _eventually(lambda: state.counts(NOW))  # the cluster says "down" until every node agrees again
        assert 0 < len(lease_all(state)) < len(hosts)
        state.close()
        graph.close()
    finally:
        cluster.stop()


def _eventually(call: Callable[[], object], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            call()
            return
        except ConnectionError:
            assert time.monotonic() < deadline
            time.sleep(0.2)


def test_a_state_url_names_the_server_the_database_and_the_key_prefix() -> None:
    target = connect("rediss://:s3cret@redis.internal:6380/2?prefix=tansuo-prod&socket_timeout=1.5")
    kw = target.client.connection_pool.connection_kwargs
    assert (kw["host"], kw["port"], kw["db"], kw["password"], kw["socket_timeout"]) == (
        "redis.internal", 6380, 2, "s3cret", 1.5)  # fmt: skip
    assert "SSL" in target.client.connection_pool.connection_class.__name__
    assert (target.prefix, target.where) == ("tansuo-prod:", "redis.internal:6380/2")  # no password in messages
    assert connect("redis://localhost").prefix == "tansuo:"
    with pytest.raises(ValueError, match="not a Redis URL"):
        connect("sqlite:///var/frontier.sqlite3")
    with pytest.raises(ValueError, match="only database 0"):
        connect("redis+cluster://r1:6379,r2:6379/3")


@pytest.mark.integration
def test_redis_adapters_fail_clearly_while_redis_is_down_and_recover_by_themselves(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        state = RedisFrontierState.from_url(server.url)
        graph = RedisLinkGraph.from_url(server.url)
        ready_host(state, H1)
        queue(state, H1, "a")
        graph.set_outlinks(url(H1, "a"), [(url(H1, "b"), "下一页")])

        server.stop()
        started = time.monotonic()
        for call in (state.ping, lambda: state.lease_due(NOW, 10, 1, 10), lambda: state.get_host(H1), graph.nodes):
            with pytest.raises(ConnectionError, match=f"Redis at 127.0.0.1:{server.port}/0 is unreachable"):
                call()
        assert time.monotonic() - started < 5  # fails fast, no retry loop

        # --save "" means the data went with the server; the same adapters carry on.
        server.start()
        state.ping()
        assert state.get_host(H1) is None
        ready_host(state, H1)
        queue(state, H1, "a")
        assert [lease.url for lease in lease_all(state)] == [url(H1, "a")]
        graph.set_outlinks(url(H1, "a"), [])
        assert graph.nodes() == [url(H1, "a")]
        state.close()
        graph.close()
    finally:
        server.stop()
