"""Embedded link graph: pages and their outlinks in one SQLite file.

One row per distinct (source, target, anchor), so a page that links to the same
target with two texts ("下一页" and the chapter title) keeps both anchors while
``edges()`` still reports the pair once.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (
    url TEXT PRIMARY KEY
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    anchor TEXT NOT NULL,
    PRIMARY KEY (source, target, anchor)
) WITHOUT ROWID;
"""


class SqliteLinkGraph:
    """One connection behind a lock: the ranker is the only writer, and readers
    (recompute, tests) are rare, so a lock costs nothing and keeps SQLite simple."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    def set_outlinks(self, source: str, links: Sequence[tuple[str, str]]) -> bool:
        """Replace ``source``'s outlinks in one transaction: a replayed batch leaves the
        graph as it was, and a reader never sees a page with half its links."""
        pairs = {(target, anchor) for target, anchor in links}
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                new = self._db.execute("INSERT OR IGNORE INTO nodes(url) VALUES (?)", (source,)).rowcount > 0
                old = set(self._db.execute("SELECT target, anchor FROM links WHERE source = ?", (source,)))
                changed = new or old != pairs
                if old != pairs:
                    self._db.execute("DELETE FROM links WHERE source = ?", (source,))
                    self._db.executemany(
                        "INSERT INTO links(source, target, anchor) VALUES (?, ?, ?)",
                        [(source, target, anchor) for target, anchor in pairs],
                    )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return changed

    def edges(self) -> list[tuple[str, str]]:
        """Every distinct (source, target), self-links included if they were stored."""
        # A list, not a generator: a cursor held open across yields would race with writers.
        with self._lock:
            return self._db.execute("SELECT DISTINCT source, target FROM links").fetchall()

    def nodes(self) -> list[str]:
        with self._lock:
            return [url for (url,) in self._db.execute("SELECT url FROM nodes ORDER BY url")]

    def anchors(self) -> dict[str, list[str]]:
        """Non-empty anchor texts per target, one entry per linking (source, text), in
        no particular order (sorting every link costs more than the ranker's own sort)."""
        result: dict[str, list[str]] = {}
        with self._lock:
            rows = self._db.execute("SELECT target, anchor FROM links WHERE anchor != ''").fetchall()
        for target, anchor in rows:
            result.setdefault(target, []).append(anchor)
        return result

    def ping(self) -> None:
        with self._lock:
            self._db.execute("SELECT 1").fetchone()

    def close(self) -> None:
        with self._lock:
            self._db.close()
