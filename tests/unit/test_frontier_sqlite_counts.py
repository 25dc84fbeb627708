"""The SQLite frontier counts URLs per state without scanning them, also in a file
written by a version that did not keep counts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.domain.frontier_types import NewUrl

NOW = 1_700_000_000.0


def _queue(state: SqliteFrontierState, n: int) -> None:
    state.ensure_host("a.cn", "http", 0.0)
    state.add_urls([NewUrl(f"http://a.cn/{i}", "a.cn", 0) for i in range(n)], NOW, 1000)
    state.add_urls([NewUrl("http://a.cn/x", "a.cn", 0, "excluded", "robots")], NOW, 1000)


def test_a_frontier_from_before_state_counts_is_counted_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "frontier.sqlite3"
    state = SqliteFrontierState(path)
    _queue(state, 5)
    state.close()
    with sqlite3.connect(path) as db:  # what an older version left behind
        for trigger in ("urls_counted_insert", "urls_counted_update", "urls_counted_delete"):
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DROP TABLE state_counts")

    reopened = SqliteFrontierState(path)
    counts = reopened.counts(NOW)
    assert (counts.queued, counts.excluded) == (5, 1)
    reopened.add_urls([NewUrl("http://a.cn/new", "a.cn", 0)], NOW, 1000)
    assert reopened.counts(NOW).queued == 6
    reopened.close()
    assert SqliteFrontierState(path).counts(NOW).queued == 6  # counted once, not again

