"""An operator's host actions (pause, resume, recrawl now, purge) on every FrontierState
adapter, with a hand-moved clock: SQLite in memory and a real Redis (integration)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from services.common.domain.messages import TOPIC_REMOVALS, PageRemoval
from services.common.ports import Message
from services.scheduler import host_actions
from tests.unit.test_frontier import (  # noqa: F401 - state is a fixture, used by name
    SITE,
    Clock,
    answer,
    links,
    make_frontier,
    open_host,
    state,
)

OTHER = "http://other.cn"


class RecordingBus:
    """Only what a purge uses of a Bus: publish and flush."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes, str]] = []
        self.flushed = 0

    def publish(self, topic: str, payload: bytes, key: str = "") -> None:
        self.sent.append((topic, payload, key))

    def flush(self) -> None:
        self.flushed = len(self.sent)

    def removals(self) -> list[PageRemoval]:
        return [PageRemoval.from_bytes(p) for topic, p, _ in self.sent if topic == TOPIC_REMOVALS]

    def poll(self, *a: object, **k: object) -> Sequence[Message]:  # pragma: no cover - not used
        return []


def crawl_everything(f, clock) -> list[str]:
    fetched = []
    for _ in range(20):
        for job in f.dispatch():
            if job.kind == "robots":
                f.complete(answer(job, 404))
            else:
                fetched.append(job.url)
                f.complete(answer(job, fetched_at=clock.now))
        clock.now += 10
    return fetched


def two_host_frontier(state, clock):
    f = make_frontier(state, clock, seeds=(f"{SITE}/", f"{OTHER}/"))
    f.offer_links(links(f"{SITE}/", f"{SITE}/a", f"{SITE}/b"))
    return f


def test_a_paused_host_gets_no_job_not_even_robots_txt_until_resumed(state):
    clock = Clock()
    f = two_host_frontier(state, clock)
    host_actions.pause(state, "example.cn", now=clock.now)
    assert state.get_host("example.cn").paused
    fetched = crawl_everything(f, clock)
    assert fetched == [f"{OTHER}/"]
    assert f.counts().queued == 3 and f.finished() is False
    host_actions.resume(state, "example.cn", now=clock.now)
    assert not state.get_host("example.cn").paused
    assert sorted(crawl_everything(f, clock)) == [f"{SITE}/", f"{SITE}/a", f"{SITE}/b"]


def test_a_pause_holds_while_a_fetch_in_flight_comes_back_with_retry_after(state):
    clock = Clock()
    f = make_frontier(state, clock)
    f.offer_links(links(f"{SITE}/", f"{SITE}/a"))
    open_host(f, clock)
    (job,) = f.dispatch()
    host_actions.pause(state, "example.cn", now=clock.now)
    f.complete(answer(job, 503, retry_after="5"))
    clock.now += 3600
    assert f.dispatch() == []
    assert state.get_host("example.cn").paused


def test_a_paused_host_with_robots_txt_ready_is_not_leased(state):
    clock = Clock()
    f = make_frontier(state, clock)
    f.offer_links(links(f"{SITE}/", f"{SITE}/a"))
    open_host(f, clock)
    host_actions.pause(state, "example.cn", now=clock.now)
    clock.now += 100
    assert f.dispatch() == []
    host_actions.resume(state, "example.cn", now=clock.now)
    assert len(f.dispatch()) == 1


def test_recrawl_now_makes_every_fetched_url_of_the_host_due_and_no_other(state):
    clock = Clock()
    f = two_host_frontier(state, clock)
    crawl_everything(f, clock)
    assert f.counts().queued == 0
    result = host_actions.recrawl(state, "example.cn", now=clock.now)
    assert result.urls == 3 and not result.paused
    counts = f.counts()
    assert counts.queued == 3 and counts.due == 3
    assert state.get_host("example.cn").queued == 3 and state.get_host("other.cn").queued == 0
    assert sorted(crawl_everything(f, clock)) == [f"{SITE}/", f"{SITE}/a", f"{SITE}/b"]


def test_recrawl_of_a_paused_host_waits_for_the_resume(state):
    clock = Clock()
    f = two_host_frontier(state, clock)
    crawl_everything(f, clock)
    host_actions.pause(state, "example.cn", now=clock.now)
    assert host_actions.recrawl(state, "example.cn", now=clock.now).paused
    assert crawl_everything(f, clock) == []
    host_actions.resume(state, "example.cn", now=clock.now)
    assert len(crawl_everything(f, clock)) == 3


def test_recrawl_leaves_robots_exclusions_excluded(state):
    clock = Clock()
    f = make_frontier(state, clock)
    f.offer_links(links(f"{SITE}/", f"{SITE}/private/x", f"{SITE}/a"))
    open_host(f, clock, "User-agent: *\nDisallow: /private/\n", status=200)
    crawl_everything(f, clock)
    assert host_actions.recrawl(state, "example.cn", now=clock.now).urls == 2
    assert state.url_state(f"{SITE}/private/x")[0] == "excluded"
    assert state.host_urls("example.cn") == [f"{SITE}/", f"{SITE}/a"]


def test_purge_pauses_the_host_and_sends_a_removal_for_each_of_its_urls(state):
    clock = Clock()
    f = two_host_frontier(state, clock)
    crawl_everything(f, clock)
    bus = RecordingBus()
    result = host_actions.purge(state, bus, "example.cn", now=clock.now)
    assert result.paused and result.urls == 3
    removals = bus.removals()
    assert sorted(r.url for r in removals) == [f"{SITE}/", f"{SITE}/a", f"{SITE}/b"]
    assert all(r.at == clock.now and r.kind == "purged" for r in removals)
    assert bus.flushed == len(bus.sent)  # durable before the call returns
    assert state.get_host("example.cn").paused and not state.get_host("other.cn").paused
    clock.now += 10 * 86400  # the recrawls come due: still nothing for a purged host
    f.sweep_recrawl()
    assert all(u.startswith(OTHER) for u in crawl_everything(f, clock))


def test_every_action_on_an_unknown_host_says_so(state):
    clock = Clock()
    make_frontier(state, clock)
    for action in host_actions.ACTIONS:
        with pytest.raises(host_actions.UnknownHost):
            host_actions.run_action(state, RecordingBus, "nowhere.cn", action)


def test_pages_fetched_per_minute_are_kept_for_the_chart(state):
    clock = Clock()
    clock.now = 60_000.0
    f = two_host_frontier(state, clock)
    crawl_everything(f, clock)
    history = state.fetch_history(0)
    assert sum(n for _, n in history) == 4
    assert all(minute % 60 == 0 for minute, _ in history)
    assert state.fetch_history(clock.now + 120) == []


def test_a_sqlite_frontier_from_before_pausing_gets_the_column(tmp_path):
    import sqlite3

    from services.common.adapters.sqlite.frontier import SqliteFrontierState

    path = tmp_path / "frontier.sqlite3"
    SqliteFrontierState(path).ensure_host("example.cn", "http", 1.0)
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE hosts DROP COLUMN paused")
    db.commit()
    db.close()
    state = SqliteFrontierState(path)
    assert state.get_host("example.cn").paused is False
    assert host_actions.pause(state, "example.cn").paused and state.get_host("example.cn").paused
