"""Embedded link graph: pages and their outlinks by id, in one SQLite file.

- ``urls``/``texts``: every URL and anchor text seen, each with its id for good.
- ``outlinks``: one row per page (source id), its distinct target ids and its
  (target id, text id) anchor pairs as packed arrays (``services.common.domain.link_ids``).

A graph written by an older version (tables ``nodes`` and ``links``, one row per
(source, target, anchor) with URL strings) is converted when the file is opened, in one
transaction, and its tables dropped.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from services.common.adapters.link_graph_views import LinkGraphViews
from services.common.domain.link_ids import (
    AnchorChunk,
    EdgeChunk,
    anchor_chunk,
    distinct_links,
    edge_chunk,
    from_rows,
    pack_anchors,
    pack_targets,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS urls (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS texts (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS outlinks (
    source INTEGER PRIMARY KEY,
    targets BLOB NOT NULL,
    anchors BLOB NOT NULL
);
"""
_CHUNK = 5000  # pages per chunk read
_LOOKUP = 500  # values per id lookup; SQLite allows 32,766 parameters since 3.32, older ones 999


class SqliteLinkGraph(LinkGraphViews):
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
        self._convert_legacy()

    def set_outlinks(self, source: str, links: Sequence[tuple[str, str]]) -> bool:
        """Replace ``source``'s outlinks in one transaction: a replayed batch leaves the
        graph as it was, and a reader never sees a page with half its links."""
        return self.set_outlinks_many([(source, links)])[0]

    def set_outlinks_many(self, pages: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> list[bool]:
        """Every page in one transaction: one fsync for a poll's worth of pages."""
        with self._lock, self._transaction():
            return self._store_pages(pages)

    def _store_pages(self, pages: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> list[bool]:
        """Store pages inside the caller's transaction (and lock)."""
        distinct = [(source, *distinct_links(links)) for source, links in pages]
        url_ids = self._ids("urls", "url", [u for source, targets, _ in distinct for u in (source, *targets)])
        text_ids = self._ids("texts", "text", [a for _, _, anchors in distinct for _, a in anchors])
        return [self._store(url_ids, text_ids, *page) for page in distinct]

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _store(
        self, url_ids: dict[str, int], text_ids: dict[str, int],
        source: str, targets: list[str], anchors: list[tuple[str, str]],
    ) -> bool:  # fmt: skip
        source_id = url_ids[source]
        packed = (
            pack_targets(url_ids[t] for t in targets),
            pack_anchors((url_ids[t], text_ids[a]) for t, a in anchors),
        )
        old = self._db.execute("SELECT targets, anchors FROM outlinks WHERE source = ?", (source_id,)).fetchone()
        if old is not None and tuple(old) == packed:
            return False
        self._db.execute("INSERT OR REPLACE INTO outlinks(source, targets, anchors) VALUES (?, ?, ?)", (source_id, *packed))
        return True

    def _ids(self, table: str, column: str, values: Sequence[str]) -> dict[str, int]:
        """The id of each value, new ones numbered on from the largest in order of first
        appearance, so that ids index arrays directly (from 0, without gaps). One query
        per _LOOKUP values: a page links to a hundred URLs, and a query each was a sixth
        of the index process's time on the LibreOffice help site."""
        wanted = list(dict.fromkeys(values))
        ids: dict[str, int] = {}
        for start in range(0, len(wanted), _LOOKUP):
            chunk = wanted[start : start + _LOOKUP]
            marks = ",".join("?" * len(chunk))
            ids.update(self._db.execute(f"SELECT {column}, id FROM {table} WHERE {column} IN ({marks})", chunk))
        new = [v for v in wanted if v not in ids]
        if new:
            (next_id,) = self._db.execute(f"SELECT coalesce(max(id) + 1, 0) FROM {table}").fetchone()
            rows = [(next_id + n, v) for n, v in enumerate(new)]
            self._db.executemany(f"INSERT INTO {table}(id, {column}) VALUES (?, ?)", rows)
            ids.update((v, i) for i, v in rows)
        return ids

    def edge_chunks(self) -> Iterator[EdgeChunk]:
        for rows in self._pages("targets"):
            yield edge_chunk(*from_rows(rows))

    def anchor_chunks(self) -> Iterator[AnchorChunk]:
        for rows in self._pages("anchors"):
            yield anchor_chunk(*from_rows(rows))

    def _pages(self, column: str) -> Iterator[list[tuple[int, bytes]]]:
        # Keyset pages, each read under the lock: no cursor stays open across a yield,
        # where it would race with writers.
        after = -1
        while True:
            with self._lock:
                rows = self._db.execute(
                    f"SELECT source, {column} FROM outlinks WHERE source > ? ORDER BY source LIMIT ?",
                    (after, _CHUNK),
                ).fetchall()
            if not rows:
                return
            yield rows
            after = rows[-1][0]

    def urls(self, ids: Sequence[int]) -> list[str]:
        return self._values("urls", "url", ids)

    def texts(self, ids: Sequence[int]) -> list[str]:
        return self._values("texts", "text", ids)

    def _values(self, table: str, column: str, ids: Sequence[int]) -> list[str]:
        found: dict[int, str] = {}
        with self._lock:
            for start in range(0, len(ids), 500):  # under SQLite's bound-parameter limit
                part = [int(i) for i in ids[start : start + 500]]
                marks = ",".join("?" * len(part))
                sql = f"SELECT id, {column} FROM {table} WHERE id IN ({marks})"
                found.update(self._db.execute(sql, part).fetchall())
        return [found[int(i)] for i in ids]

    def url_ids(self, urls: Sequence[str]) -> list[int | None]:
        with self._lock:
            rows = [self._db.execute("SELECT id FROM urls WHERE url = ?", (u,)).fetchone() for u in urls]
        return [int(row[0]) if row else None for row in rows]

    def node_count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM outlinks").fetchone()[0])

    def _convert_legacy(self) -> None:
        """Pages of the old one-row-per-link tables, stored anew; the old tables go."""
        with self._lock:
            tables = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "links" not in tables:
                return
            with self._transaction():
                pages: dict[str, list[tuple[str, str]]] = {url: [] for (url,) in self._db.execute("SELECT url FROM nodes")} if "nodes" in tables else {}
                for source, target, anchor in self._db.execute("SELECT source, target, anchor FROM links"):
                    pages.setdefault(source, []).append((target, anchor))
                self._store_pages(list(pages.items()))
                self._db.execute("DROP TABLE links")
                self._db.execute("DROP TABLE IF EXISTS nodes")

    def ping(self) -> None:
        with self._lock:
            self._db.execute("SELECT 1").fetchone()

    def close(self) -> None:
        with self._lock:
            self._db.close()


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error (the caller holds the lock)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self._db.execute("ROLLBACK" if kind is not None else "COMMIT")
