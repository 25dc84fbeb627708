"""The SearchLog contract, run against every adapter: SQLite, one Redis and a Redis
Cluster (marked integration)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from services.common.adapters.redis.search_log import RedisSearchLog
from services.common.adapters.sqlite.search_log import SqliteSearchLog
from services.common.domain.search_analytics import ClickEvent, DayTotals, QueryStats, SearchEvent
from services.common.ports import SearchLog
from tests.contract.test_frontier_state import REDIS_BACKENDS

T = 1_800_000_000.0
DAY, NEXT = "2027-01-15", "2027-01-16"

OpenLog = Callable[..., SearchLog]


@pytest.fixture(params=["sqlite", *REDIS_BACKENDS])
def open_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenLog]:
    """Opens logs on one backend, as each API worker process does."""
    opened: list[SearchLog] = []
    url = None if request.param == "sqlite" else request.getfixturevalue(request.param)

    def open_(**limits: int) -> SearchLog:
        log: SearchLog
        if url is None:
            log = SqliteSearchLog(tmp_path / "search_log.sqlite3", **limits)
        else:
            log = RedisSearchLog.from_url(url, **limits)
        opened.append(log)
        return log

    yield open_
    for log in opened:
        log.close()


def search(query: str, total: int, page: int = 1, day: str = DAY, at: float = T, took_ms: float = 10.0) -> SearchEvent:
    return SearchEvent(at, day, query, total, page, took_ms)


def click(query: str, url: str, position: int = 1, day: str = DAY) -> ClickEvent:
    return ClickEvent(T, day, query, url, position)


def test_a_day_counts_searches_zero_hits_clicks_and_the_popular_queries(open_log: OpenLog) -> None:
    log = open_log()
    log.record(
        [search("软件包", 12), search("软件包", 12, page=2), search("软件包", 11), search("打印机", 3),
         search("不存在的词", 0), search("不存在的词", 0), search("cs101", 0)],
        [click("软件包", "https://a.cn/1"), click("软件包", "https://a.cn/2", 2), click("打印机", "https://a.cn/1")],
    )  # fmt: skip
    report = log.day(DAY)
    assert report.totals == DayTotals(DAY, searches=6, result_pages=7, zero=3, clicks=3, took_ms_sum=70.0)
    assert report.totals.click_through == 1.0 and report.totals.zero_share == 0.5
    assert report.popular == [
        QueryStats("不存在的词", 2, 2, 0, 0), QueryStats("软件包", 2, 0, 2, 11),
        QueryStats("cs101", 1, 1, 0, 0), QueryStats("打印机", 1, 0, 1, 3),
    ]  # fmt: skip
    assert [q.query for q in report.zero_hit] == ["不存在的词", "cs101"]
    assert report.clicked == [("https://a.cn/1", 2), ("https://a.cn/2", 1)]
    (first,) = log.day(DAY, top=1).popular  # a tie at the cut: either one
    assert first in report.popular[:2]


def test_each_process_adds_to_the_same_days(open_log: OpenLog) -> None:
    one, two = open_log(), open_log()
    one.record([search("安装", 5)], [])
    two.record([search("安装", 5), search("升级", 2, day=NEXT)], [click("升级", "https://a.cn/", day=NEXT)])
    assert [(d.day, d.searches, d.clicks) for d in one.days()] == [(NEXT, 1, 1), (DAY, 2, 0)]
    assert one.day("2000-01-01").totals == DayTotals("2000-01-01", 0, 0, 0, 0, 0.0)


def test_the_recent_log_keeps_the_newest_searches_with_their_time_and_page(open_log: OpenLog) -> None:
    log = open_log(recent_limit=3)
    log.record([search(f"词{i}", i, page=1 + i % 2, at=T + i) for i in range(5)], [])
    recent = log.recent(10)
    assert [(e.query, e.total, e.page, e.at) for e in recent] == [("词4", 4, 1, T + 4), ("词3", 3, 2, T + 3),
                                                                   ("词2", 2, 1, T + 2)]  # fmt: skip
    assert log.recent(1) == recent[:1]


def test_days_past_the_retention_are_dropped(open_log: OpenLog) -> None:
    log = open_log(retention_days=2)
    log.record([search("a", 1, day="2027-01-01"), search("b", 1, day="2027-01-02")], [])
    assert [d.day for d in log.days()] == ["2027-01-02", "2027-01-01"]
    log.record([search("c", 1, day="2027-01-03")], [click("a", "https://a.cn/", day="2027-01-03")])
    assert [d.day for d in log.days()] == ["2027-01-03", "2027-01-02"]
    assert log.day("2027-01-01").popular == [] and log.day("2027-01-01").totals.searches == 0


def test_a_day_keeps_the_most_searched_queries_up_to_its_cap(open_log: OpenLog) -> None:
    log = open_log(max_queries_per_day=10)
    log.record([search("常见", 5)] * 3 + [search(f"罕见{i:02d}", 1) for i in range(20)], [])
    kept = log.day(DAY, top=100).popular
    assert len(kept) <= 10 and kept[0] == QueryStats("常见", 3, 0, 0, 5)
    assert log.day(DAY).totals.searches == 23  # the totals count every search still


def test_the_click_key_is_made_once_and_shared(open_log: OpenLog) -> None:
    one, two = open_log(), open_log()
    key = one.click_key()
    assert len(key) == 32 and two.click_key() == key and one.click_key() == key


def test_searched_sums_the_queries_that_found_something_over_the_newest_days(open_log: OpenLog) -> None:
    log = open_log()
    assert log.searched(30, 10) == {}
    old, new = "2027-01-10", NEXT
    log.record(
        [search("软件包", 5, day=old), *[search("软件包", 12, day=d) for d in (DAY, NEXT, NEXT)],
         search("软件包", 12, page=2), search("打印机", 3), search("打印机", 0, day=new),
         search("不存在的词", 0), search("cs101", 0, day=new)],
        [],
    )  # fmt: skip
    # A later page is the same search read further; a zero-hit search found nothing.
    assert log.searched(30, 10) == {"软件包": 4, "打印机": 1}
    assert log.searched(2, 10) == {"软件包": 3, "打印机": 1}  # the newest two days: not 2027-01-10
    assert log.searched(30, 1) == {"软件包": 4}
