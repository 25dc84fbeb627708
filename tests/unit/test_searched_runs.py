"""What users search, read from a real SQLite search log for the did-you-mean."""

from __future__ import annotations

from pathlib import Path

from services.common.adapters.sqlite.search_log import SqliteSearchLog
from services.common.domain.search_analytics import SearchEvent
from services.search.searched_runs import SearchedRuns, searched_words

DAY = "2027-01-15"


def _search(query: str, total: int) -> SearchEvent:
    return SearchEvent(1_800_000_000.0, DAY, query, total, 1, 5.0)


def test_a_query_counts_for_its_runs_their_words_and_its_latin_words_folded() -> None:
    words = searched_words({"數據透視表 excel": 3, "数据透视表": 2, "vlookup 函数": 1})
    assert words["数据透视表"] == 5 and words["透视"] == 5 and words["数据"] == 5  # 數據 folded
    assert words["excel"] == 3 and words["函数"] == 1 and words["vlookup"] == 1
    assert words["表"] == 0  # one character is no word to weigh


def test_shares_come_from_the_searches_that_found_something_and_outlive_a_log_that_is_away(tmp_path: Path) -> None:
    log = SqliteSearchLog(tmp_path / "search_log.sqlite3")
    runs = SearchedRuns(lambda: log, days=30, top=100, refresh_s=60)
    assert runs.share("青菜") == 0.0  # not read yet
    log.record([_search("青菜", 5), _search("青菜", 5), _search("炒青菜", 2), _search("不存在", 0)], [])
    runs.refresh()
    # 炒青菜 holds 青菜 as the index counts words (a subword), so all three searches do.
    assert runs.share("青菜") == 1.0 and runs.share("炒青菜") == 1 / 3 and runs.share("不存在") == 0.0
    log.close()  # the store away: the last counts stand
    runs.refresh()
    assert runs.share("青菜") == 1.0
