"""Recrawl timing, removals and sitemaps in the frontier, with a hand-moved clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.config import Settings
from services.common.domain.messages import FetchJob, LinkBatch, Outlink, PageEvent
from services.scheduler.frontier import Frontier
from services.scheduler.recrawl_policy import next_interval, parse_lastmod
from services.scheduler.scope import Scope
from tests.manual_clock import ManualClock as Clock

SITE = "http://example.cn"
HOUR = 3600.0


def make(clock: Clock, **overrides) -> Frontier:
    overrides.setdefault("frontier_host_delay_s", 0)
    overrides.setdefault("frontier_sitemaps", False)
    cfg = Settings(data_dir=Path("unused"), **overrides)
    f = Frontier(cfg, SqliteFrontierState(Path(":memory:")), Scope.from_settings(cfg, [f"{SITE}/"]), clock=clock)
    f.add_seeds([f"{SITE}/"])
    (robots,) = f.dispatch()
    f.complete(_answer(robots, 404))
    return f


def _answer(job: FetchJob, status: int = 200, **fields) -> PageEvent:
    return PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, kind=job.kind, depth=job.depth,
                     status=status, fetched_at=0.0, **fields)  # fmt: skip


def fetch(f: Frontier, clock: Clock, status: int = 200, **fields) -> tuple[FetchJob, list]:
    """Sweep, lease the one due URL, answer it; returns the job and the removals."""
    f.sweep_recrawl()
    (job,) = f.dispatch()
    return job, f.complete(_answer(job, status, **fields))


def due_in(f: Frontier, clock: Clock, url: str = f"{SITE}/") -> float:
    return f.state.url_info(url).due_at - clock.now


def test_intervals_double_when_unchanged_and_halve_when_changed():
    clock = Clock(1_700_000_000.0)
    f = make(clock)
    fetch(f, clock, content_hash="a")
    assert due_in(f, clock) == pytest.approx(HOUR)
    for expected in (2 * HOUR, 4 * HOUR, 8 * HOUR):
        clock.now += due_in(f, clock)
        fetch(f, clock, content_hash="a")
        assert due_in(f, clock) == pytest.approx(expected)
    clock.now += due_in(f, clock)
    fetch(f, clock, content_hash="b")
    assert due_in(f, clock) == pytest.approx(4 * HOUR)


def test_a_304_counts_as_unchanged_and_keeps_the_validators():
    clock = Clock(1_700_000_000.0)
    f = make(clock)
    fetch(f, clock, content_hash="a", etag='"v1"', last_modified="Wed, 21 Oct 2026 07:28:00 GMT")
    clock.now += HOUR
    job, _ = fetch(f, clock, 304)
    assert job.etag == '"v1"' and job.last_modified == "Wed, 21 Oct 2026 07:28:00 GMT"
    info = f.state.url_info(f"{SITE}/")
    assert info.content_hash == "a" and info.status == 200
    assert due_in(f, clock) == pytest.approx(2 * HOUR)


def test_intervals_stay_within_their_bounds():
    cfg = Settings(data_dir=Path("unused"), frontier_recrawl_min_s=300, frontier_recrawl_max_s=30 * 86400)
    assert next_interval(cfg, 400, changed=True) == 300
    assert next_interval(cfg, 20 * 86400, changed=False) == 30 * 86400
    assert next_interval(cfg, None, changed=None) == HOUR


def test_all_four_numbers_are_configurable():
    cfg = Settings(
        data_dir=Path("unused"),
        frontier_recrawl_initial_s=60,
        frontier_recrawl_factor=3,
        frontier_recrawl_min_s=10,
        frontier_recrawl_max_s=500,
    )
    assert next_interval(cfg, None, None) == 60
    assert next_interval(cfg, 60, changed=False) == 180
    assert next_interval(cfg, 60, changed=True) == 20
    assert next_interval(cfg, 400, changed=False) == 500


def test_failed_fetches_back_off_from_an_hour():
    clock = Clock(1_700_000_000.0)
    f = make(clock, frontier_max_fetch_failures=1)
    fetch(f, clock, 500)
    assert f.state.url_info(f"{SITE}/").state == "failed"
    assert due_in(f, clock) == pytest.approx(HOUR)
    clock.now += HOUR
    fetch(f, clock, 502)
    assert due_in(f, clock) == pytest.approx(2 * HOUR)
    clock.now += 2 * HOUR
    fetch(f, clock, 200, content_hash="a")
    assert due_in(f, clock) == pytest.approx(HOUR)  # healthy again: back to the first interval


def test_a_page_gone_twice_in_a_row_is_removed():
    clock = Clock(1_700_000_000.0)
    f = make(clock)
    fetch(f, clock, content_hash="a")
    clock.now += HOUR
    _, removals = fetch(f, clock, 404)
    assert removals == []
    clock.now += 2 * HOUR
    _, removals = fetch(f, clock, 410)
    assert [r.url for r in removals] == [f"{SITE}/"]


@pytest.mark.parametrize(("first", "second"), [(401, 401), (403, 403), (451, 451), (403, 404)])
def test_a_page_refused_twice_in_a_row_is_removed(first: int, second: int):
    clock = Clock(1_700_000_000.0)
    f = make(clock)
    fetch(f, clock, content_hash="a")
    clock.now += HOUR
    _, removals = fetch(f, clock, first)
    assert removals == []
    clock.now += 2 * HOUR
    _, removals = fetch(f, clock, second)
    assert [(r.url, r.reason) for r in removals] == [(f"{SITE}/", f"gone ({first}, then {second})")]


def test_a_page_back_after_one_404_is_not_removed():
    clock = Clock(1_700_000_000.0)
    f = make(clock)
    fetch(f, clock, 404)
    clock.now += 2 * HOUR
    _, removals = fetch(f, clock, 200, content_hash="a")
    assert removals == []


def test_a_redirect_removes_the_old_url_and_queues_the_new_one():
    clock = Clock(1_700_000_000.0)
    f = make(clock)
    _, removals = fetch(f, clock, 301, redirect_to=f"{SITE}/new")
    assert [(r.url, r.reason) for r in removals] == [(f"{SITE}/", "redirected")]
    assert f.state.url_info(f"{SITE}/new").state == "queued"


def test_robots_sitemaps_are_fetched_and_their_entries_queued():
    clock = Clock(1_700_000_000.0)
    cfg = Settings(data_dir=Path("unused"), frontier_host_delay_s=0)
    f = Frontier(cfg, SqliteFrontierState(Path(":memory:")), Scope.from_settings(cfg, [f"{SITE}/"]), clock=clock)
    f.add_seeds([f"{SITE}/"])
    (robots,) = f.dispatch()
    f.complete(_answer(robots, 200, robots_txt=f"User-agent: *\nSitemap: {SITE}/index.xml.gz\n"))
    jobs = f.dispatch()
    assert [j.kind for j in jobs][:1] == ["sitemap"] and jobs[0].url == f"{SITE}/index.xml.gz"
    batch = LinkBatch(source=jobs[0].url, depth=0, kind="sitemap", sitemaps=[f"{SITE}/pages.xml"])
    f.offer_links(batch)
    assert f.state.url_info(f"{SITE}/pages.xml").kind == "sitemap"
    entries = LinkBatch(
        source=f"{SITE}/pages.xml",
        depth=0,
        kind="sitemap",
        links=[Outlink(f"{SITE}/orphan"), Outlink("http://elsewhere.cn/x")],
    )
    assert f.offer_links(entries) == 1
    assert f.state.url_info(f"{SITE}/orphan").state == "queued"
    assert f.state.url_info("http://elsewhere.cn/x") is None


def test_without_a_sitemap_line_the_default_sitemap_is_tried():
    clock = Clock(1_700_000_000.0)
    cfg = Settings(data_dir=Path("unused"), frontier_host_delay_s=0)
    f = Frontier(cfg, SqliteFrontierState(Path(":memory:")), Scope.from_settings(cfg, [f"{SITE}/"]), clock=clock)
    f.add_seeds([f"{SITE}/"])
    (robots,) = f.dispatch()
    f.complete(_answer(robots, 404))
    assert f.state.url_info(f"{SITE}/sitemap.xml").kind == "sitemap"


def test_a_newer_lastmod_brings_a_fetched_page_back_at_once():
    clock = Clock(1_700_000_000.0)
    f = make(clock)
    fetch(f, clock, content_hash="a")
    fetched_at = f.state.url_info(f"{SITE}/").fetched_at
    older = LinkBatch(source="s", depth=0, kind="sitemap", links=[Outlink(f"{SITE}/", lastmod="2001-01-01")])
    f.offer_links(older)
    assert f.state.url_info(f"{SITE}/").state == "done"
    newer = LinkBatch(source="s", depth=0, kind="sitemap", links=[Outlink(f"{SITE}/", lastmod="2099-01-01T00:00:00Z")])
    f.offer_links(newer)
    info = f.state.url_info(f"{SITE}/")
    assert info.state == "queued" and info.due_at == clock.now and fetched_at


def test_lastmod_accepts_w3c_dates():
    assert parse_lastmod("2024-03-01") == parse_lastmod("2024-03-01T00:00:00Z")
    assert parse_lastmod("2024-03-01T08:00:00+08:00") == parse_lastmod("2024-03-01T00:00:00Z")
    assert parse_lastmod("yesterday") is None


def test_repeated_server_errors_slow_the_host_down_exponentially():
    clock = Clock(1_700_000_000.0)
    f = make(clock, frontier_host_delay_s=1, frontier_failure_backoff_s=10, frontier_max_fetch_failures=10,
             frontier_host_max_failures=10)
    f.offer_links(LinkBatch(source=f"{SITE}/", depth=0, links=[Outlink(f"{SITE}/{n}") for n in range(6)]))
    clock.now += 1  # the delay after robots.txt
    waits = []
    for _ in range(4):
        (job,) = f.dispatch()
        f.complete(_answer(job, 503))
        host = f.state.get_host("example.cn")
        waits.append(host.next_allowed_at - clock.now)
        clock.now = host.next_allowed_at
    assert waits == [10, 20, 40, 80]
    (job,) = f.dispatch()
    f.complete(_answer(job, 200, content_hash="ok"))
    assert f.state.get_host("example.cn").next_allowed_at - clock.now == 1  # healthy: back to the delay


def test_robots_txt_is_fetched_again_after_its_ttl():
    clock = Clock(1_700_000_000.0)
    f = make(clock, frontier_robots_ttl_s=3600)  # robots.txt answered 404 at the start
    f.offer_links(LinkBatch(source=f"{SITE}/", depth=0, links=[Outlink(f"{SITE}/a"), Outlink(f"{SITE}/b")]))
    clock.now += 3601
    (again,) = f.dispatch()
    assert again.kind == "robots"
    f.complete(_answer(again, 200, robots_txt="User-agent: *\nDisallow: /b\n"))
    urls = set()
    for _ in range(3):
        for j in f.dispatch():
            urls.add(j.url)
            f.complete(_answer(j, 200, content_hash="y"))
    assert urls == {f"{SITE}/", f"{SITE}/a"}
    assert f.state.url_info(f"{SITE}/b").state == "excluded"
