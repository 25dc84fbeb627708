"""Frontier behaviour with a hand-moved clock: no sleeping.

Each behaviour runs over every FrontierState adapter: SQLite in memory (no I/O) and a
real Redis (marked integration, so ``-m "not integration"`` keeps this file pure).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.common.adapters.redis.frontier import RedisFrontierState
from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.config import Settings
from services.common.domain.messages import FetchJob, LinkBatch, Outlink, PageEvent
from services.common.ports import FrontierState
from services.scheduler.frontier import Frontier
from services.scheduler.scope import Scope
from tests.manual_clock import ManualClock as Clock

SITE = "http://example.cn"


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.integration)])
def state(request: pytest.FixtureRequest) -> Iterator[FrontierState]:
    if request.param == "sqlite":
        adapter: FrontierState = SqliteFrontierState(Path(":memory:"))
    else:
        adapter = RedisFrontierState.from_url(request.getfixturevalue("redis_url"))
    yield adapter
    adapter.close()


def make_frontier(state: FrontierState, clock: Clock, seeds=(f"{SITE}/",), **overrides) -> Frontier:
    overrides.setdefault("frontier_sitemaps", False)  # sitemaps have tests of their own
    cfg = Settings(data_dir=Path("unused"), **overrides)
    frontier = Frontier(cfg, state, Scope.from_settings(cfg, seeds), clock=clock)
    frontier.add_seeds(seeds)
    return frontier


def answer(job: FetchJob, status: int = 200, **fields) -> PageEvent:
    return PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, kind=job.kind, depth=job.depth, status=status, **fields)


def open_host(frontier: Frontier, clock: Clock, robots: str = "", status: int = 404) -> None:
    """Serve the robots.txt job that every new host starts with."""
    (job,) = frontier.dispatch()
    assert job.kind == "robots" and job.url.endswith("/robots.txt")
    frontier.complete(answer(job, status, robots_txt=robots))
    clock.now += 10


def links(source: str, *urls: str, depth: int = 0) -> LinkBatch:
    return LinkBatch(source=source, depth=depth, links=[Outlink(u) for u in urls])


def test_a_new_host_is_asked_for_robots_txt_before_any_page(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock)
    jobs = f.dispatch()
    assert [j.kind for j in jobs] == ["robots"]
    assert f.dispatch() == []  # the host has a fetch in flight


def test_robots_disallow_is_never_leased_and_allow_overrides(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock)
    f.offer_links(links(f"{SITE}/", f"{SITE}/private/a", f"{SITE}/private/ok", f"{SITE}/b"))
    open_host(f, clock, "User-agent: *\nDisallow: /private/\nAllow: /private/ok\n", status=200)
    fetched = set()
    for _ in range(10):
        for job in f.dispatch():
            fetched.add(job.url)
            f.complete(answer(job))
        clock.now += 10
    assert fetched == {f"{SITE}/", f"{SITE}/private/ok", f"{SITE}/b"}
    assert f.state.url_state(f"{SITE}/private/a")[:2] == ("excluded", "robots")


def test_crawl_delay_wins_when_larger_than_the_delay(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=1.0)
    f.offer_links(links(f"{SITE}/", f"{SITE}/a"))
    open_host(f, clock, "User-agent: *\nCrawl-delay: 5\n", status=200)
    (job,) = f.dispatch()
    f.complete(answer(job))
    clock.now += 4.9
    assert f.dispatch() == []
    clock.now += 0.2
    assert [j.url for j in f.dispatch()] == [f"{SITE}/a"]


def test_the_delay_counts_from_the_end_of_the_last_fetch(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=2.0)
    f.offer_links(links(f"{SITE}/", f"{SITE}/a"))
    open_host(f, clock)
    (job,) = f.dispatch()
    clock.now += 30  # a slow response: the next fetch waits a full delay after it
    assert f.dispatch() == []
    f.complete(answer(job))
    clock.now += 1.9
    assert f.dispatch() == []
    clock.now += 0.2
    assert len(f.dispatch()) == 1


@pytest.mark.parametrize("after", ["page", "robots"])
@pytest.mark.parametrize(
    "ended_before, restarted_before",
    [(0.1, 0.1), (3600.0, 0.25)],
    ids=["from-the-response-end", "a-crawler-clock-an-hour-behind-gains-a-quarter-second-at-most"],
)
def test_the_delay_counts_from_when_the_crawler_saw_the_response_end(state, ended_before, restarted_before, after):
    # Not from when the outcome reached the scheduler, later by the trip through the
    # crawler's pipeline and the bus; a crawler's skewed clock cannot shorten it much.
    # The same after a host's robots.txt as after one of its pages.
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=2.0)
    f.offer_links(links(f"{SITE}/", f"{SITE}/a"))
    if after == "page":
        open_host(f, clock)
    (job,) = f.dispatch()
    assert job.kind == after
    clock.now += 0.6
    recorded = clock.now
    f.complete(answer(job, 404 if after == "robots" else 200, fetched_at=recorded - ended_before))
    restarted = recorded - restarted_before
    clock.now = restarted + 1.95
    assert f.dispatch() == []
    clock.now = restarted + 2.05
    (page,) = f.dispatch()
    assert page.kind == "page"


def test_a_lost_robots_job_does_not_strand_its_host(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_lease_timeout_s=60)
    (lost,) = f.dispatch()  # its outcome never comes back
    clock.now += 59
    assert f.dispatch() == [] and not f.finished()
    clock.now += 2
    (again,) = f.dispatch()
    assert again.kind == "robots"
    f.complete(answer(again, 404))
    clock.now += 10
    assert [j.kind for j in f.dispatch()] == ["page"]


def test_crawl_delay_holds_a_host_to_one_fetch_at_a_time_even_without_a_delay(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=0, frontier_host_parallelism=4)
    f.offer_links(links(f"{SITE}/", *(f"{SITE}/{i}" for i in range(8))))
    open_host(f, clock, "User-agent: *\nCrawl-delay: 10\n", status=200)
    (job,) = f.dispatch()
    assert f.dispatch() == []
    f.complete(answer(job))
    clock.now += 9.9
    assert f.dispatch() == []
    clock.now += 0.2
    assert len(f.dispatch()) == 1


def test_depth_is_limited_by_default_like_heritrix(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock)
    assert f.cfg.frontier_max_depth == 20
    assert f.offer_links(links(f"{SITE}/cal?page=20", f"{SITE}/cal?page=21", depth=19)) == 1
    assert f.offer_links(links(f"{SITE}/cal?page=21", f"{SITE}/cal?page=22", depth=20)) == 0
    assert f.state.counters()["limit:max_depth"] == 1


def test_redirect_hops_count_towards_the_depth(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_max_depth=2)
    open_host(f, clock)
    hops = 0
    for _ in range(10):
        jobs = f.dispatch()
        for job in jobs:
            hops += 1
            f.complete(answer(job, 302, redirect_to=f"{SITE}/r{hops}"))
        clock.now += 10
    assert hops == 3  # the seed, then two hops
    assert f.state.url_state(f"{SITE}/r3") is None


@pytest.mark.parametrize(
    ("path", "limit"),
    [
        ("/" + "a/b/" * 6, "path_repetition"),
        ("/cal/cal/cal/", "path_repetition"),
        ("/" + "/".join(f"s{i}" for i in range(21)), "path_depth"),
        ("/q?" + "&".join(f"k{i}=v" for i in range(17)), "query_params"),
        ("/" + "x" * 2100, "url_length"),
    ],
)
def test_crawler_trap_urls_are_not_admitted_and_each_hit_is_counted(state, path, limit):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock)
    assert f.offer_links(links(f"{SITE}/", f"{SITE}{path}", f"{SITE}/2024/01/01/ok")) == 1
    assert f.state.counters()[f"limit:{limit}"] == 1


def test_limits_the_crawler_reports_are_counted_once_per_outcome(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock)
    open_host(f, clock)
    (job,) = f.dispatch()
    event = answer(job, limits=["title_length", "outlinks"])
    f.complete(event)
    f.complete(event)  # redelivered: stale, not counted again
    counters = f.state.counters()
    assert (counters["limit:title_length"], counters["limit:outlinks"]) == (1, 1)
    assert counters["limit:outlinks@example.cn"] == 1
    clock.now += 10
    f.offer_links(links(f"{SITE}/", f"{SITE}/big"))
    (job,) = f.dispatch()
    f.complete(answer(job, 0, error="too_large"))
    assert f.state.counters()["limit:page_size"] == 1


def test_a_host_that_stops_answering_is_given_up_and_a_one_pass_crawl_finishes(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_max_failures=4, frontier_failure_backoff_s=5)
    f.offer_links(links(f"{SITE}/", *(f"{SITE}/{i}" for i in range(200))))
    open_host(f, clock)
    attempts = 0
    for _ in range(200):
        for job in f.dispatch():
            attempts += 1
            f.complete(answer(job, 0, error="connection"))
        if f.finished():
            break
        clock.now += 60
    assert f.finished() and attempts == 4
    assert f.counts().failed == 201
    assert f.state.url_state(f"{SITE}/7")[:2] == ("failed", "failed: host_unreachable:connection")
    assert f.given_up_hosts() == [("example.cn", "connection")]
    assert f.state.counters()["hosts_given_up"] == 1


def test_a_host_that_asks_to_wait_is_not_given_up(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_max_failures=2)
    f.offer_links(links(f"{SITE}/", *(f"{SITE}/{i}" for i in range(5))))
    open_host(f, clock)
    for _ in range(3):
        for job in f.dispatch():
            f.complete(answer(job, 503, retry_after="30"))
        clock.now += 31
    assert not f.finished() and f.given_up_hosts() == []


def test_robots_5xx_defers_the_host_and_404_allows_all(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_failure_backoff_s=60)
    (job,) = f.dispatch()
    f.complete(answer(job, 503))
    clock.now += 30
    assert f.dispatch() == []  # deferred
    clock.now += 31
    (job,) = f.dispatch()
    assert job.kind == "robots"
    f.complete(answer(job, 404))
    clock.now += 10
    assert [j.kind for j in f.dispatch()] == ["page"]


def test_a_host_whose_robots_keeps_failing_is_given_up(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_failure_backoff_s=1, frontier_max_fetch_failures=2)
    for _ in range(2):
        (job,) = f.dispatch()
        f.complete(answer(job, 500))
        clock.now += 100
    assert f.dispatch() == []
    assert f.finished()
    assert f.state.url_state(f"{SITE}/")[0] == "failed"


def test_scope_depth_length_and_dedup(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_max_depth=1, frontier_max_url_length=64)
    added = f.offer_links(
        links(
            f"{SITE}/",
            f"{SITE}/a#frag",
            f"{SITE}/a",
            "http://other.cn/x",
            f"{SITE}/" + "x" * 100,
            "mailto:someone@example.cn",
        )
    )
    assert added == 1
    assert f.offer_links(links(f"{SITE}/a", f"{SITE}/deep", depth=1)) == 0  # depth 2 > 1


def test_wildcard_domains_cover_sub_sites_but_not_look_alikes():
    scope = Scope(["*.pku.edu.cn"])
    assert not scope.rejects("http://pku.edu.cn/")
    assert not scope.rejects("http://math.pku.edu.cn/a")
    assert scope.rejects("http://badpku.edu.cn/") == "off_domain"


def test_include_and_exclude_patterns():
    scope = Scope(["example.cn"], include=[r"/docs/"], exclude=[r"\.pdf$"])
    assert not scope.rejects(f"{SITE}/docs/a.html")
    assert scope.rejects(f"{SITE}/blog/") == "not_included"
    assert scope.rejects(f"{SITE}/docs/a.pdf") == "excluded_pattern"


def test_transient_failures_retry_with_backoff_then_fail(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_failure_backoff_s=10, frontier_max_fetch_failures=3)
    open_host(f, clock)
    (job,) = f.dispatch()
    f.complete(answer(job, 0, error="timeout"))
    clock.now += 5
    assert f.dispatch() == []
    clock.now += 100
    (job,) = f.dispatch()
    f.complete(answer(job, 502))
    clock.now += 1000
    (job,) = f.dispatch()
    f.complete(answer(job, 500))
    assert f.state.url_state(job.url)[0] == "failed"
    assert f.finished()


def test_retry_after_blocks_the_host_to_the_second(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock)
    f.offer_links(links(f"{SITE}/", f"{SITE}/a"))
    open_host(f, clock)
    (job,) = f.dispatch()
    f.complete(answer(job, 429, retry_after="120"))
    clock.now += 119.5
    assert f.dispatch() == []
    clock.now += 1
    assert len(f.dispatch()) == 1


def test_a_replayed_outcome_changes_nothing(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock)
    open_host(f, clock)
    (job,) = f.dispatch()
    f.complete(answer(job))
    before = f.counts()
    f.complete(answer(job))
    assert f.counts() == before
    assert before.fetched == 1


def test_with_no_delay_a_host_gets_parallel_fetches(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=0, frontier_host_parallelism=3)
    f.offer_links(links(f"{SITE}/", *[f"{SITE}/{i}" for i in range(5)]))
    open_host(f, clock)
    jobs = []
    for _ in range(5):
        jobs += f.dispatch()
    assert len(jobs) == 3


def test_max_pages_stops_leasing_and_finishes(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_max_pages=2, frontier_host_delay_s=0)
    f.offer_links(links(f"{SITE}/", *[f"{SITE}/{i}" for i in range(5)]))
    open_host(f, clock)
    seen = 0
    for _ in range(10):
        for job in f.dispatch():
            seen += 1
            f.complete(answer(job))
    assert seen == 2 and f.finished()


def test_an_expired_lease_returns_to_the_queue(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_lease_timeout_s=60)
    open_host(f, clock)
    (job,) = f.dispatch()
    clock.now += 61
    (again,) = f.dispatch()
    assert again.url == job.url and again.lease_id != job.lease_id
    f.complete(answer(job))  # the old worker's late answer is stale
    assert f.state.url_state(job.url)[0] == "leased"


def test_lost_leases_are_looked_for_once_a_second_not_on_every_dispatch(state):
    # Expiry is a write transaction; a busy scheduler dispatches after every outcome.
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_lease_timeout_s=60, frontier_host_delay_s=0,
                      frontier_host_parallelism=1)
    open_host(f, clock)
    (job,) = f.dispatch()
    clock.now += 59.5
    assert f.dispatch() == []  # expiry ran here: the lease still had half a second
    clock.now += 0.8
    assert f.dispatch() == []  # expired now, but looked for again only a second later
    clock.now += 0.3
    (again,) = f.dispatch()
    assert again.url == job.url and again.lease_id != job.lease_id


def test_a_redirect_queues_its_target_in_scope_only(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=0)
    open_host(f, clock)
    (job,) = f.dispatch()
    f.complete(answer(job, 301, redirect_to=f"{SITE}/moved"))
    assert f.state.url_state(f"{SITE}/moved")[0] == "queued"
    assert f.state.url_state(job.url)[:2] == ("done", "redirect")


def test_a_seed_out_of_scope_is_refused(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_allow_domains=("other.cn",))
    assert f.add_seeds([f"{SITE}/x"]) == []


@pytest.mark.parametrize("value", ["120", "Wed, 21 Oct 2026 07:28:00 GMT"])
def test_retry_after_accepts_seconds_and_http_dates(value):
    from email.utils import parsedate_to_datetime

    from services.scheduler.retry_after import retry_after_until

    now = parsedate_to_datetime("Wed, 21 Oct 2026 07:26:00 GMT").timestamp()
    assert retry_after_until(value, now) == pytest.approx(now + 120)


def test_a_redirects_link_batch_admits_nothing(state):
    # The target comes in from the page event, as a hop; the batch is the link graph's.
    f = make_frontier(state, Clock(1_000_000.0))
    batch = LinkBatch(source=f"{SITE}/old", depth=0, links=[Outlink(f"{SITE}/new")], kind="redirect")
    assert f.offer_links(batch) == 0
    assert f.offer_links(links(f"{SITE}/old", f"{SITE}/new")) == 1
