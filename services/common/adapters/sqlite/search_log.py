"""Embedded search log: searches and clicks counted per day in one SQLite file (WAL).

Every API worker process of `tansuo serve` writes its batches here (about one a
second), so writes are short transactions; readers (the console) never block them.
"""

from __future__ import annotations

import datetime
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from services.common.domain.search_analytics import (
    ClickEvent,
    DayReport,
    DayTotals,
    QueryStats,
    SearchEvent,
    empty_day,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS days (
    day TEXT PRIMARY KEY,
    searches INTEGER NOT NULL DEFAULT 0,
    result_pages INTEGER NOT NULL DEFAULT 0,
    zero INTEGER NOT NULL DEFAULT 0,
    clicks INTEGER NOT NULL DEFAULT 0,
    took_ms REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS queries (
    day TEXT NOT NULL,
    query TEXT NOT NULL,
    searches INTEGER NOT NULL DEFAULT 0,
    zero INTEGER NOT NULL DEFAULT 0,
    clicks INTEGER NOT NULL DEFAULT 0,
    last_total INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, query)
);
CREATE INDEX IF NOT EXISTS queries_by_searches ON queries(day, searches);
CREATE TABLE IF NOT EXISTS clicked (day TEXT NOT NULL, url TEXT NOT NULL, clicks INTEGER NOT NULL,
                                    PRIMARY KEY (day, url));
CREATE TABLE IF NOT EXISTS recent (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL, day TEXT NOT NULL, query TEXT NOT NULL, total INTEGER NOT NULL,
    page INTEGER NOT NULL, took_ms REAL NOT NULL, source TEXT NOT NULL, sort TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def cutoff_day(newest: str, retention_days: int) -> str:
    """The newest day that is dropped when ``newest`` is the newest recorded."""
    return (datetime.date.fromisoformat(newest) - datetime.timedelta(days=retention_days)).isoformat()


class SqliteSearchLog:
    def __init__(self, path: Path, retention_days: int = 90, recent_limit: int = 10_000,
                 max_queries_per_day: int = 10_000) -> None:  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._retention_days = retention_days
        self._recent_limit = recent_limit
        self._max_queries = max_queries_per_day

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def record(self, searches: Sequence[SearchEvent], clicks: Sequence[ClickEvent]) -> None:
        if not searches and not clicks:
            return
        with self._tx() as db:
            for s in searches:
                first, zero = int(s.page == 1), int(s.page == 1 and s.total == 0)
                db.execute(
                    "INSERT INTO days(day, searches, result_pages, zero, took_ms) VALUES (?, ?, 1, ?, ?) "
                    "ON CONFLICT(day) DO UPDATE SET searches = searches + excluded.searches, "
                    "result_pages = result_pages + 1, zero = zero + excluded.zero, took_ms = took_ms + excluded.took_ms",
                    (s.day, first, zero, s.took_ms),
                )
                if first:
                    db.execute(
                        "INSERT INTO queries(day, query, searches, zero, last_total) VALUES (?, ?, 1, ?, ?) "
                        "ON CONFLICT(day, query) DO UPDATE SET searches = searches + 1, zero = zero + excluded.zero, "
                        "last_total = excluded.last_total",
                        (s.day, s.query, zero, s.total),
                    )
            db.executemany(
                "INSERT INTO recent(at, day, query, total, page, took_ms, source, sort) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(s.at, s.day, s.query, s.total, s.page, s.took_ms, s.source, s.sort) for s in searches],
            )
            for c in clicks:
                db.execute(
                    "INSERT INTO days(day, clicks) VALUES (?, 1) ON CONFLICT(day) DO UPDATE SET clicks = clicks + 1",
                    (c.day,),
                )
                db.execute(
                    "INSERT INTO queries(day, query, clicks) VALUES (?, ?, 1) "
                    "ON CONFLICT(day, query) DO UPDATE SET clicks = clicks + 1",
                    (c.day, c.query),
                )
                db.execute(
                    "INSERT INTO clicked(day, url, clicks) VALUES (?, ?, 1) "
                    "ON CONFLICT(day, url) DO UPDATE SET clicks = clicks + 1",
                    (c.day, c.url),
                )
            self._bound(db, {s.day for s in searches} | {c.day for c in clicks})

    def _bound(self, db: sqlite3.Connection, touched: set[str]) -> None:
        """Drop what the retention and the caps no longer keep."""
        db.execute("DELETE FROM recent WHERE id <= (SELECT MAX(id) FROM recent) - ?", (self._recent_limit,))
        (newest,) = db.execute("SELECT MAX(day) FROM days").fetchone()
        if newest is not None:
            cutoff = cutoff_day(newest, self._retention_days)
            for table in ("days", "queries", "clicked"):
                db.execute(f"DELETE FROM {table} WHERE day <= ?", (cutoff,))
        for day in touched:
            for table, key, order in (("queries", "query", "searches, clicks"), ("clicked", "url", "clicks")):
                (n,) = db.execute(f"SELECT COUNT(*) FROM {table} WHERE day = ?", (day,)).fetchone()
                if n > self._max_queries:
                    db.execute(
                        f"DELETE FROM {table} WHERE day = ? AND {key} IN (SELECT {key} FROM {table} "
                        f"WHERE day = ? ORDER BY {order}, {key} DESC LIMIT ?)",
                        (day, day, n - self._max_queries),
                    )

    def days(self) -> list[DayTotals]:
        with self._lock:
            rows = self._db.execute(
                "SELECT day, searches, result_pages, zero, clicks, took_ms FROM days ORDER BY day DESC"
            ).fetchall()
        return [DayTotals(*row) for row in rows]

    def day(self, day: str, top: int = 50) -> DayReport:
        columns = "query, searches, zero, clicks, last_total"
        with self._lock:
            row = self._db.execute(
                "SELECT day, searches, result_pages, zero, clicks, took_ms FROM days WHERE day = ?", (day,)
            ).fetchone()
            popular = self._db.execute(
                f"SELECT {columns} FROM queries WHERE day = ? AND searches > 0 "
                "ORDER BY searches DESC, query LIMIT ?",
                (day, top),
            ).fetchall()
            zero = self._db.execute(
                f"SELECT {columns} FROM queries WHERE day = ? AND zero > 0 ORDER BY zero DESC, query LIMIT ?",
                (day, top),
            ).fetchall()
            clicked = self._db.execute(
                "SELECT url, clicks FROM clicked WHERE day = ? ORDER BY clicks DESC, url LIMIT ?", (day, top)
            ).fetchall()
        totals = DayTotals(*row) if row else empty_day(day)
        return DayReport(totals, [QueryStats(*r) for r in popular], [QueryStats(*r) for r in zero],
                         [(u, n) for u, n in clicked])  # fmt: skip

    def recent(self, limit: int = 100) -> list[SearchEvent]:
        with self._lock:
            rows = self._db.execute(
                "SELECT at, day, query, total, page, took_ms, source, sort FROM recent ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [SearchEvent(*row) for row in rows]

    def searched(self, days: int, top: int) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT query, SUM(searches - zero) AS found FROM queries "
                "WHERE day IN (SELECT day FROM days ORDER BY day DESC LIMIT ?) "
                "GROUP BY query HAVING found > 0 ORDER BY found DESC, query LIMIT ?",
                (days, top),
            ).fetchall()
        return {query: int(found) for query, found in rows}

    def click_key(self) -> bytes:
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO meta(name, value) VALUES ('click_key', ?)", (os.urandom(32).hex(),))
            (value,) = db.execute("SELECT value FROM meta WHERE name = 'click_key'").fetchone()
        return bytes.fromhex(value)

    def ping(self) -> None:
        with self._lock:
            self._db.execute("SELECT 1").fetchone()

    def close(self) -> None:
        with self._lock:
            self._db.close()
