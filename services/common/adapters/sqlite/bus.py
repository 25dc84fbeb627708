"""Embedded bus: a durable message log in one SQLite file, shared by threads and processes.

Why durable and not a ``queue.Queue``: the embedded crawl must survive ``kill -9``.
A page event that the crawler published but the indexer had not yet committed is
delivered again after a restart, exactly as Kafka would redeliver it.

The embedded crawl runs its indexer and ranker in a second process on the same file
(services/cli/index_process.py). A publish wakes a waiting poll of its own process at
once; a poll in another process is not told, so it looks again every
``CROSS_PROCESS_POLL_S`` while it waits.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from services.common.ports import Message

# How often a waiting poll looks for messages another process published: short beside
# the indexer's one-second commit interval, and one indexed SELECT each time.
CROSS_PROCESS_POLL_S = 0.05

_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    key TEXT NOT NULL,
    payload BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_topic_id ON messages(topic, id);
CREATE TABLE IF NOT EXISTS offsets (
    grp TEXT NOT NULL,
    topic TEXT NOT NULL,
    committed INTEGER NOT NULL,
    PRIMARY KEY (grp, topic)
);
"""


class _Cursor:
    """Per (group, topic) delivery state. Messages are handed out in id order; the
    committed offset only moves past ids that are all committed, so a message handed
    out but not committed before a crash is delivered again."""

    def __init__(self, committed: int) -> None:
        self.committed = committed
        self.delivered = committed
        self.outstanding: set[int] = set()

    def advance(self) -> int:
        self.committed = (min(self.outstanding) - 1) if self.outstanding else self.delivered
        return self.committed


_WAL_WAIT_S = 5.0  # as long as the connection's busy timeout


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch a new bus file to WAL. Two processes opening a new file at once (a crawl
    and its index process) both ask; the switch needs the file to themselves and
    SQLite answers "locked" at once, without its busy wait, to the one that loses.
    The switch is made once for good, so the loser waits for it."""
    deadline = time.monotonic() + _WAL_WAIT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class SqliteBus:
    """One consumer per group: the embedded deployment runs each role once, in one of
    its processes; offsets of a group are written only by the process that consumes it."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        _use_wal(self._db)
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._cursors: dict[tuple[str, str], _Cursor] = {}
        self._closed = False

    def publish(self, topic: str, payload: bytes, key: str = "") -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO messages(topic, key, payload) VALUES (?, ?, ?)", (topic, key, payload)
            )
            self._arrived.notify_all()

    def publish_many(self, topic: str, items: Sequence[tuple[str, bytes]]) -> None:
        """Publish (key, payload) pairs in one transaction."""
        with self._lock:
            # IMMEDIATE: take the write lock now, waiting (busy timeout) for the other
            # process's write to end, rather than fail when a read turns into a write.
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT INTO messages(topic, key, payload) VALUES (?, ?, ?)",
                [(topic, key, payload) for key, payload in items],
            )
            self._db.execute("COMMIT")
            self._arrived.notify_all()

    def flush(self) -> None:
        """Every publish is already committed to SQLite."""

    def _cursor(self, topic: str, group: str) -> _Cursor:
        cur = self._cursors.get((group, topic))
        if cur is None:
            self._db.execute(
                "INSERT OR IGNORE INTO offsets(grp, topic, committed) VALUES (?, ?, 0)", (group, topic)
            )
            (committed,) = self._db.execute(
                "SELECT committed FROM offsets WHERE grp = ? AND topic = ?", (group, topic)
            ).fetchone()
            cur = self._cursors[(group, topic)] = _Cursor(committed)
        return cur

    def subscribe(self, topic: str, group: str) -> None:
        """Register a group before anything is published, so it sees every message."""
        with self._lock:
            self._cursor(topic, group)

    def poll(self, topic: str, group: str, timeout_s: float, max_messages: int = 100) -> list[Message]:
        deadline = time.monotonic() + timeout_s
        with self._lock:
            if self._closed:
                return []
            cur = self._cursor(topic, group)
            while True:
                rows = self._db.execute(
                    "SELECT id, key, payload FROM messages WHERE topic = ? AND id > ? ORDER BY id LIMIT ?",
                    (topic, cur.delivered, max_messages),
                ).fetchall()
                remaining = deadline - time.monotonic()
                if rows or remaining <= 0:
                    break
                self._arrived.wait(min(remaining, CROSS_PROCESS_POLL_S))
                if self._closed:
                    return []
            for msg_id, _, _ in rows:
                cur.outstanding.add(msg_id)
            if rows:
                cur.delivered = rows[-1][0]
        return [Message(topic, key, bytes(payload), msg_id) for msg_id, key, payload in rows]

    def commit(self, group: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        with self._lock:
            touched: set[str] = set()
            for m in messages:
                cur = self._cursor(m.topic, group)
                cur.outstanding.discard(m.offset)
                touched.add(m.topic)
            for topic in touched:
                committed = self._cursors[(group, topic)].advance()
                self._db.execute(
                    "UPDATE offsets SET committed = ? WHERE grp = ? AND topic = ?", (committed, group, topic)
                )

    def pending(self, topic: str, group: str) -> int:
        with self._lock:
            committed = self._cursor(topic, group).committed
            (n,) = self._db.execute(
                "SELECT COUNT(*) FROM messages WHERE topic = ? AND id > ?", (topic, committed)
            ).fetchone()
        return int(n)

    def assignment(self, topic: str, group: str) -> frozenset[int] | None:
        """None: the one consumer of a group gets every message."""
        return None

    def partition_count(self, topic: str) -> int:
        return 1

    def compact(self) -> int:
        """Drop messages that every known group of their topic has committed."""
        with self._lock:
            cur = self._db.execute(
                "DELETE FROM messages WHERE id <= "
                "(SELECT MIN(committed) FROM offsets WHERE offsets.topic = messages.topic)"
            )
            return cur.rowcount

    def ping(self) -> None:
        with self._lock:
            self._db.execute("SELECT 1").fetchone()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._arrived.notify_all()
            self._db.close()
